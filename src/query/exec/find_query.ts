import type { Doc } from '../../bson/values.js';
import { collated, withCollation, type StringComparator } from '../../bson/collation.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { compileFilter } from '../match/matcher.js';
import { compileProjection } from '../projection/projection.js';
import { compileSort } from '../sort.js';
import { exactlyBounded, planQuery, type QueryPlan } from '../plan/query_planner.js';
import type { MatchDetails } from '../match/matcher.js';
import { executePlan, newStats, type Candidate, type ExecutionStats } from './plan_executor.js';

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
  // Non-simple collation: strings compare by it, and index bounds (built on binary order) are not used.
  collation?: StringComparator;
  // Documents the caller may see at all, applied before sort, skip and limit: a shard's orphan
  // filter (documents in ranges it does not own are invisible to routed reads).
  keep?: (doc: Doc) => boolean;
  // See PlanRequest.includeHidden.
  includeHidden?: boolean;
}

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
export function prepareFind(storage: StorageEngine, coll: Collection | undefined, spec: FindSpec): PreparedFind {
  const prepared = withCollation(spec.collation, () => prepareFindCollated(storage, coll, spec));
  return { ...prepared, results: collated(spec.collation, prepared.results) };
}

function prepareFindCollated(storage: StorageEngine, coll: Collection | undefined, spec: FindSpec): PreparedFind {
  const sortCmp = spec.sort && Object.keys(spec.sort).length > 0 ? compileSort(spec.sort) : undefined;
  const projector = spec.projection && Object.keys(spec.projection).length > 0 ? compileProjection(spec.projection) : undefined;
  const stats = newStats();
  const hint = spec.collation && spec.hint === undefined ? { $natural: 1 } : spec.hint;
  const plan = coll ? planQuery({ filter: spec.filter, sort: spec.sort, hint, min: spec.min, max: spec.max, includeHidden: spec.includeHidden }, coll.indexes) : undefined;
  // An IDHACK filter is a bare _id equality that the index lookup already answers exactly, as do
  // exact index bounds; an empty filter matches everything. Without a filter, documents stay
  // undecoded until something reads them.
  const matchesAll = Object.keys(spec.filter).length === 0;
  const exact = plan !== undefined && (plan.kind === 'IDHACK' || (spec.collation === undefined && exactlyBounded(plan, spec)));
  const matcher = exact || matchesAll ? undefined : compileFilter(spec.filter, { variables: spec.variables });
  if (!coll || !plan) return { plan: undefined, stats, blockingSort: false, results: [] };
  const blockingSort = sortCmp !== undefined && plan.kind !== 'IDHACK' && !(plan.kind === 'IXSCAN' && plan.providesSort);
  let candidates: Iterable<Candidate> = executePlan(storage, coll, plan, matcher, stats);
  if (spec.keep) candidates = keepOnly(candidates, spec.keep);
  if (blockingSort) candidates = sortAll(candidates, sortCmp!);
  const results = shape(candidates, spec.skip ?? 0, spec.limit ?? 0, projector, stats);
  return { plan, stats, blockingSort, results };
}

function* keepOnly(input: Iterable<Candidate>, keep: (doc: Doc) => boolean): Iterable<Candidate> {
  for (const c of input) if (keep(c.doc)) yield c;
}

function sortAll(input: Iterable<Candidate>, cmp: (a: Doc, b: Doc) => number): Candidate[] {
  const all = [...input];
  // Array.prototype.sort is stable, so ties keep plan order, as MongoDB's sort stage does.
  all.sort((a, b) => cmp(a.doc, b.doc));
  return all;
}

function* shape(input: Iterable<Candidate>, skip: number, limit: number, projector: ReturnType<typeof compileProjection> | undefined, stats: ExecutionStats): Iterable<Output> {
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
    if (projector) yield { doc: projector.apply(c.doc, c.details), recordId: c.recordId, details: c.details };
    else yield c;
  }
}
