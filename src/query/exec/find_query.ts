import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { collated, withCollation, type StringComparator } from '../../bson/collation.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { compileFilter } from '../match/matcher.js';
import { compileProjection, type Projector } from '../projection/projection.js';
import type { MetaName } from '../projection/projection_ast.js';
import { compileSort, parseSortSpec, TEXT_SCORE_UNAVAILABLE, type SortField } from '../sort.js';
import { exactlyBounded, planQuery, type QueryPlan } from '../plan/query_planner.js';
import { showRecordIdProjection } from '../query_request_helper.js';
import type { MatchDetails } from '../match/matcher.js';
import { executePlan, newStats, type Candidate, type ExecutionStats } from './plan_executor.js';
import { resultMetadata } from './result_metadata.js';
import { extractText, parseTextQuery } from './text_query.js';
import { planTextUnderOr, textCandidates, textIndexOf, textPlan, textUnderOrCandidates } from './text_scan.js';
import { extractNear, type NearQuery } from '../geo/near_query.js';
import { geoNearFilter, geoNearShape, type GeoNearOutput } from '../geo/geo_near_stage.js';
import { planNear } from '../geo/near_scan.js';

export interface FindSpec {
  filter: Doc;
  sort?: Doc;
  projection?: Doc;
  skip?: number;
  limit?: number;
  hint?: unknown;
  min?: Doc;
  max?: Doc;
  variables?: Record<string, unknown>;
  // false where MongoDB refuses $where in the filter (an aggregation's leading $match).
  javascript?: boolean;
  // Non-simple collation: strings compare by it, and only indexes of the same collation bound
  // strings (query_planner.ts).
  collation?: StringComparator;
  // Documents the caller may see at all, applied before sort, skip and limit: a shard's orphan
  // filter (documents in ranges it does not own are invisible to routed reads).
  keep?: (doc: Doc) => boolean;
  // See PlanRequest.includeHidden.
  includeHidden?: boolean;
  // Each result is the key of the index the plan read ({} for a collection scan).
  returnKey?: boolean;
  // Each result carries its record id in `$recordId`.
  showRecordId?: boolean;
  // false: a blocking sort of more than MAX_BLOCKING_SORT_BYTES fails rather than spill to disk
  // (docshard sorts in memory, so true and absent mean the sort always runs).
  allowDiskUse?: boolean;
  // The $geoNear stage this find stands for: its results carry their distance (and location).
  geoNear?: GeoNearOutput;
}

// MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes.
export const MAX_BLOCKING_SORT_BYTES = 100 * 1024 * 1024;

// A result document; `bytes` is set while the document is exactly as stored.
export interface Output {
  doc: Doc;
  bytes?: Buffer;
  recordId: number;
  details: MatchDetails;
}

export interface PreparedFind {
  plan: QueryPlan | undefined;
  stats: ExecutionStats;
  blockingSort: boolean;
  results: Iterable<Output>;
}

// filter -> plan -> (sort) -> skip -> limit -> projection, lazily where the plan allows.
export function prepareFind(storage: StorageEngine, coll: Collection | undefined, given: FindSpec): PreparedFind {
  const spec = withNaturalSort(given);
  const prepared = withCollation(spec.collation, () => prepareFindCollated(storage, coll, spec));
  return { ...prepared, results: collated(spec.collation, prepared.results) };
}

// A sort on $natural alone is the order the collection is stored in, forwards or backwards
// (`sort({$natural: -1}).limit(1)` reads an oplog's newest entry), as MongoDB plans it: a
// collection scan in that direction, which no sort stage follows.
function withNaturalSort(spec: FindSpec): FindSpec {
  const keys = spec.sort === undefined ? [] : Object.keys(spec.sort);
  if (keys.length !== 1 || keys[0] !== '$natural') return spec;
  const direction = Number(spec.sort!.$natural) < 0 ? -1 : 1;
  return { ...spec, sort: undefined, hint: spec.hint ?? { $natural: direction } };
}

function prepareFindCollated(storage: StorageEngine, coll: Collection | undefined, spec: FindSpec): PreparedFind {
  const text = extractText(spec.filter);
  if (text !== undefined) return prepareTextFind(storage, coll, spec, text);
  const near = spec.geoNear === undefined ? extractNear(spec.filter) : coll && extractNear(geoNearFilter(spec.geoNear, coll.ns, coll.indexes, spec.variables));
  if (near !== undefined) return prepareNearFind(storage, coll, spec, near.near, near.rest);
  const sortCmp = spec.sort && Object.keys(spec.sort).length > 0 ? compileSort(spec.sort) : undefined;
  const projector = compileResultProjection(spec);
  if (projector?.metas.has('textScore')) throw new MongoError(40218, TEXT_SCORE_UNAVAILABLE);
  const stats = newStats();
  const plan = coll ? planQuery({ filter: spec.filter, sort: spec.sort, hint: spec.hint, min: spec.min, max: spec.max, includeHidden: spec.includeHidden, collation: spec.collation }, coll.indexes) : undefined;
  // An IDHACK filter is a bare _id equality that the index lookup already answers exactly, as do
  // exact index bounds; an empty filter matches everything. Without a filter, documents stay
  // undecoded until something reads them.
  const matchesAll = Object.keys(spec.filter).length === 0;
  const exact = plan !== undefined && (plan.kind === 'IDHACK' || (spec.collation === undefined && exactlyBounded(plan, spec)));
  const matcher = exact || matchesAll ? undefined : compileFilter(spec.filter, { variables: spec.variables, javascript: spec.javascript });
  if (!coll || !plan) return { plan: undefined, stats, blockingSort: false, results: [] };
  const blockingSort = sortCmp !== undefined && plan.kind !== 'IDHACK' && !(plan.kind === 'IXSCAN' && plan.providesSort);
  let candidates: Iterable<Candidate> = executePlan(storage, coll, plan, matcher, stats);
  if (spec.keep) candidates = keepOnly(candidates, spec.keep);
  if (blockingSort) candidates = sortAll(candidates, sortCmp!, spec.allowDiskUse === false);
  const results = shape(candidates, spec.skip ?? 0, spec.limit ?? 0, resultShape(plan, projector, spec), stats);
  return { plan, stats, blockingSort, results };
}

// A $text query reads the text index (text_scan.ts) whatever the hint; sorts and projections may
// use the score it gives each document.
function prepareTextFind(storage: StorageEngine, coll: Collection | undefined, spec: FindSpec, { text: textArg, rest, or }: NonNullable<ReturnType<typeof extractText>>): PreparedFind {
  const index = textIndexOf(coll);
  const query = parseTextQuery(textArg, index.text!);
  const scores = new WeakMap<Doc, number>();
  const sortCmp = spec.sort && Object.keys(spec.sort).length > 0 ? compileSort(spec.sort, (doc) => scores.get(doc)) : undefined;
  const projector = compileResultProjection(spec);
  const wantsScore = projector?.metas.has('textScore') === true || (spec.sort !== undefined && JSON.stringify(spec.sort).includes('"textScore"'));
  const textOnly = textPlan(index, query, or === undefined ? rest : { ...rest, ...or.textClause }, wantsScore);
  const plan = or === undefined ? textOnly : planTextUnderOr(textOnly, coll!, or, spec.collation);
  const options = { variables: spec.variables, javascript: spec.javascript };
  const matcher = Object.keys(rest).length === 0 ? undefined : compileFilter(rest, options);
  const stats = newStats();
  const found = or === undefined ? textCandidates(storage, coll!, plan, query, matcher, stats) : textUnderOrCandidates(storage, coll!, plan, query, or, matcher, stats, options);
  let candidates = remember(found, scores);
  if (spec.keep) candidates = keepOnly(candidates, spec.keep);
  if (sortCmp) candidates = sortAll(candidates, sortCmp, spec.allowDiskUse === false);
  const results = shape(candidates, spec.skip ?? 0, spec.limit ?? 0, resultShape(plan, projector, spec), stats);
  return { plan, stats, blockingSort: sortCmp !== undefined, results };
}

// A $near reads its geo index ring by ring (geo/near_scan.ts), whatever the hint; its results
// come nearest first unless the find sorts them otherwise.
function prepareNearFind(storage: StorageEngine, coll: Collection | undefined, spec: FindSpec, near: NearQuery, rest: Doc): PreparedFind {
  if (!coll) return { plan: undefined, stats: newStats(), blockingSort: false, results: [] };
  const search = planNear(coll, near, rest);
  const sortCmp = spec.sort && Object.keys(spec.sort).length > 0 ? compileSort(spec.sort) : undefined;
  const projector = compileResultProjection(spec);
  const matcher = Object.keys(rest).length === 0 ? undefined : compileFilter(rest, { variables: spec.variables });
  const stats = newStats();
  let candidates = search.run(storage, coll, matcher, stats);
  if (spec.keep) candidates = keepOnly(candidates, spec.keep);
  if (sortCmp) candidates = sortAll(candidates, sortCmp, spec.allowDiskUse === false);
  const plan = search.plan;
  const results = shape(candidates, spec.skip ?? 0, spec.limit ?? 0, spec.geoNear === undefined ? resultShape(plan, projector, spec) : geoNearShape(spec.geoNear), stats);
  return { plan, stats, blockingSort: sortCmp !== undefined, results };
}

function* remember(input: Iterable<Candidate>, scores: WeakMap<Doc, number>): Iterable<Candidate> {
  for (const c of input) {
    scores.set(c.doc, c.textScore ?? 0);
    yield c;
  }
}

// The find's projection, with showRecordId's `$recordId` added; undefined when results are the
// documents as stored.
export function compileResultProjection(spec: FindSpec): Projector | undefined {
  const projection = spec.showRecordId ? showRecordIdProjection(spec.projection) : spec.projection;
  const projector = projection && Object.keys(projection).length > 0 ? compileProjection(projection) : undefined;
  if (projector?.metas.has('sortKey') && (spec.sort === undefined || Object.keys(spec.sort).length === 0)) {
    throw new MongoError(ErrorCodes.BadValue, 'cannot use sortKey $meta projection without a sort');
  }
  return projector;
}

// How a candidate becomes a result: projected, or (returnKey) the key the plan found it under;
// undefined when it is the document as stored.
export type ResultShape = ((c: Candidate) => Doc) | undefined;

export function resultShape(plan: QueryPlan, projector: Projector | undefined, spec: FindSpec): ResultShape {
  const names = new Set<MetaName>(projector?.metas);
  if (spec.returnKey) names.add('indexKey');
  const sort: SortField[] = names.has('sortKey') ? parseSortSpec(spec.sort!) : [];
  if (spec.returnKey) {
    return (c) => {
      const meta = resultMetadata(c, plan, names, sort);
      return projector === undefined ? { ...meta.indexKey } : projector.keyOnly(meta);
    };
  }
  if (projector === undefined) return undefined;
  if (names.size === 0) return (c) => projector.apply(c.doc, c.details);
  return (c) => projector.apply(c.doc, c.details, resultMetadata(c, plan, names, sort));
}

function* keepOnly(input: Iterable<Candidate>, keep: (doc: Doc) => boolean): Iterable<Candidate> {
  for (const c of input) if (keep(c.doc)) yield c;
}

function sortAll(input: Iterable<Candidate>, cmp: (a: Doc, b: Doc) => number, bounded: boolean): Candidate[] {
  const all: Candidate[] = [];
  let bytes = 0;
  for (const c of input) {
    all.push(c);
    bytes += c.bytes.length;
    if (bounded && bytes > MAX_BLOCKING_SORT_BYTES) {
      throw new MongoError(ErrorCodes.QueryExceededMemoryLimitNoDiskUseAllowed, `Executor error during find command :: caused by :: Sort exceeded memory limit of ${MAX_BLOCKING_SORT_BYTES} bytes, but did not opt in to external sorting.`);
    }
  }
  // Array.prototype.sort is stable, so ties keep plan order, as MongoDB's sort stage does.
  all.sort((a, b) => cmp(a.doc, b.doc));
  return all;
}

function* shape(input: Iterable<Candidate>, skip: number, limit: number, project: ResultShape, stats: ExecutionStats): Iterable<Output> {
  let skipped = 0;
  let returned = 0;
  for (const c of input) {
    if (skipped < skip) {
      skipped += 1;
      continue;
    }
    if (limit > 0 && returned >= limit) return;
    returned += 1;
    stats.nReturned += 1;
    if (project) yield { doc: project(c), recordId: c.recordId, details: c.details };
    else yield c;
  }
}
