import { encodeKey, type Ordering } from '../../bson/key_string.js';
import { hashValue } from '../../bson/hash.js';
import { canonicalType, compareValues } from '../../bson/compare.js';
import { withCollation, type StringComparator } from '../../bson/collation.js';
import { collateValue } from '../../bson/collation_key.js';
import { formatValue } from '../../bson/format.js';
import { bsonTag, isPlainObject, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { IndexAccess } from '../../storage/index_access.js';
import { prefixSuccessor } from '../../storage/key_layout.js';
import { geoIntervals } from '../geo/geo_bounds.js';
import { ALL_VALUES, intersectIntervalLists, intervalsFor, isPoint, normalize, pointInterval, type Interval } from './index_bounds.js';

// Chooses how to read a collection for a filter/sort: a collection scan, or one index scanned over
// key ranges. A pure function of the request and the index catalog, so explain shows exactly
// what execution does.
export interface KeyRange {
  start: Buffer;
  end: Buffer;
}

export type QueryPlan =
  | { kind: 'COLLSCAN'; direction: 1 | -1 }
  // MongoDB's IDHACK: equality on _id is one point read of the _id index, with no planning.
  | { kind: 'IDHACK'; index: IndexAccess; keyString: Buffer }
  | {
    kind: 'IXSCAN';
    index: IndexAccess;
    ranges: KeyRange[];
    direction: 1 | -1;
    indexBounds: Record<string, string[]>;
    providesSort: boolean;
    // A $near's search (geo/near_scan.ts), which reads this index ring by ring; the bounds shown
    // are its first ring's. Explain shows it as MongoDB's GEO_NEAR_2DSPHERE or GEO_NEAR_2D.
    geoNear?: '2dsphere' | '2d';
    // A $text's search (exec/text_scan.ts): one range per term searched for. Explain shows it as
    // MongoDB's TEXT_MATCH over an OR of one index scan per term (TEXT_OR when scores are wanted).
    text?: TextSearchPlan;
  };

export interface TextSearchPlan {
  parsedTextQuery: { terms: string[]; negatedTerms: string[]; phrases: string[]; negatedPhrases: string[] };
  indexPrefix: Doc;
  wantsScore: boolean;
  // A $text that is one clause of an $or: the index plans of the other clauses.
  orClauses?: QueryPlan[];
}

export interface PlanRequest {
  filter: Doc;
  sort?: Doc;
  hint?: unknown;
  min?: Doc;
  max?: Doc;
  // Internal scans that name their index (range deletion, split points) may use a hidden one, as
  // MongoDB's InternalPlanner does; for everyone else a hidden index does not exist, hint included.
  includeHidden?: boolean;
  // The query's collation (none is the simple one). An index bounds strings (and documents and
  // arrays, which may hold strings) only under its own collation; other values under any.
  collation?: StringComparator;
}

const MAX_RANGES = 500;

export function planQuery(req: PlanRequest, allIndexes: readonly IndexAccess[]): QueryPlan {
  const indexes = req.includeHidden === true ? allIndexes : visible(allIndexes);
  const idHack = idHackPlan(req, indexes);
  if (idHack) return idHack;
  const hinted = resolveHint(req.hint, indexes);
  if (hinted === 'natural') return { kind: 'COLLSCAN', direction: naturalDirection(req.hint) };
  if (req.min !== undefined || req.max !== undefined) {
    if (!hinted) throw new MongoError(51173, 'When using min()/max() a hint of which index to use must be provided');
    return minMaxPlan(hinted, req.min, req.max);
  }
  const conditions = collectConditions(req.filter);
  const candidates = hinted ? [hinted] : indexes.filter((i) => i.entry.spec.partialFilterExpression === undefined);
  let best: { plan: QueryPlan & { kind: 'IXSCAN' }; score: number } | undefined;
  for (const index of candidates) {
    const bounds = boundsFor(index, conditions, req.collation);
    if (bounds.score === 0 && !hinted) continue;
    const plan = buildPlan(index, bounds.fields, req.sort, req.collation);
    const score = bounds.score * 2 + (plan.providesSort ? 1 : 0) + (index.unique ? 1 : 0);
    if (!best || score > best.score) best = { plan, score };
  }
  if (best) return best.plan;
  if (req.sort && Object.keys(req.sort).length > 0) {
    for (const index of candidates) {
      if (index.entry.spec.sparse === true || index.geo !== undefined) continue;
      const plan = buildPlan(index, Object.keys(index.keyPattern).map(() => [ALL_VALUES]), req.sort, req.collation);
      if (plan.providesSort) return plan;
    }
  }
  return { kind: 'COLLSCAN', direction: 1 };
}

export function idHackPlan(req: PlanRequest, indexes: readonly IndexAccess[]): (QueryPlan & { kind: 'IDHACK' }) | undefined {
  if (req.hint !== undefined || req.min !== undefined || req.max !== undefined) return undefined;
  const keys = Object.keys(req.filter);
  if (keys.length !== 1 || keys[0] !== '_id') return undefined;
  let value = req.filter._id;
  if (isPlainObject(value) && Object.keys(value).length === 1 && '$eq' in value) value = value.$eq;
  if (value === undefined || Array.isArray(value) || bsonTag(value) === 'BSONRegExp') return undefined;
  if (isPlainObject(value) && Object.keys(value).some((k) => k.startsWith('$'))) return undefined;
  const index = indexes.find((i) => i.name === '_id_');
  if (index === undefined) return undefined;
  if (index.collation !== req.collation && touchesCollatable(pointInterval(value))) return undefined;
  const key = index.collationKey === undefined ? value : collateValue(value, index.collationKey);
  return { kind: 'IDHACK', index, keyString: encodeKey([key], index.ordering) };
}

// True when an IXSCAN's bounds select exactly the documents the filter matches, so the fetched
// documents need no filter (MongoDB's exact index bounds). Kept to cases that are exact here: one
// undotted top-level field, first in a non-multikey, non-sparse, non-partial, non-hashed index,
// compared by equality to a string or finite number, or between two finite numbers (key strings
// order numbers as compareValues does). A collation keeps the filter too (its caller's check).
export function exactlyBounded(plan: QueryPlan, req: PlanRequest): boolean {
  // min/max bound the scan themselves, whatever the filter says.
  if (plan.kind !== 'IXSCAN' || req.min !== undefined || req.max !== undefined) return false;
  const { filter } = req;
  const { entry, keyPattern } = plan.index;
  // A collated index's bounds on strings are either collation keys or absent (another collation's
  // query): the filter decides.
  if (plan.index.collation !== undefined) return false;
  if (entry.multikey || entry.spec.sparse === true || entry.spec.partialFilterExpression !== undefined) return false;
  const fields = Object.keys(filter);
  const path = fields[0];
  if (fields.length !== 1 || path !== Object.keys(keyPattern)[0] || path.includes('.') || keyPattern[path] === 'hashed') return false;
  return exactCondition(filter[path]);
}

function exactCondition(condition: unknown): boolean {
  if (typeof condition === 'string' || isFiniteNumber(condition)) return true;
  if (!isPlainObject(condition)) return false;
  let lower = false;
  let upper = false;
  for (const [op, arg] of Object.entries(condition)) {
    if (!isFiniteNumber(arg)) return false;
    if (op === '$gt' || op === '$gte') lower = true;
    else if (op === '$lt' || op === '$lte') upper = true;
    else return false;
  }
  return lower && upper;
}

// int32 and double values; int64 and decimal are left to the filter.
function isFiniteNumber(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  return bsonTag(v) === 'Double' && Number.isFinite((v as { value: number }).value);
}

// The common case (nothing hidden) keeps the catalog's own array rather than a copy per query.
// A text index holds only documents with terms, by term: it answers $text (exec/text_scan.ts) and
// nothing else, as in MongoDB, where the planner never picks it for other predicates or sorts.
function visible(indexes: readonly IndexAccess[]): readonly IndexAccess[] {
  return indexes.some((i) => i.hidden || i.text !== undefined) ? indexes.filter((i) => !i.hidden && i.text === undefined) : indexes;
}

function naturalDirection(hint: unknown): 1 | -1 {
  return isPlainObject(hint) && hint.$natural === -1 ? -1 : 1;
}

function resolveHint(hint: unknown, indexes: readonly IndexAccess[]): IndexAccess | 'natural' | undefined {
  if (hint === undefined || hint === null) return undefined;
  if (typeof hint === 'string') {
    if (hint === '') return undefined;
    const found = indexes.find((i) => i.name === hint);
    if (!found) throw new MongoError(ErrorCodes.BadValue, 'error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index');
    return found;
  }
  if (isPlainObject(hint)) {
    if (Object.keys(hint).length === 0) return undefined;
    if ('$natural' in hint) return 'natural';
    const found = indexes.find((i) => compareValues(i.keyPattern, hint) === 0);
    if (!found) throw new MongoError(ErrorCodes.BadValue, 'error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index');
    return found;
  }
  throw new MongoError(ErrorCodes.FailedToParse, 'hint must be a string or an object');
}

// Top-level predicates per path, including those inside a top-level $and.
function collectConditions(filter: Doc): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  addConditions(filter, out);
  return out;
}

// A function of its own rather than a closure in collectConditions: tsx names each closure
// assigned to a variable where it is created (esbuild's keepNames), a cost on every query.
function addConditions(filter: Doc, out: Map<string, unknown[]>): void {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const sub of value) if (isPlainObject(sub)) addConditions(sub, out);
    } else if (!key.startsWith('$')) {
      const list = out.get(key) ?? [];
      list.push(value);
      out.set(key, list);
    }
  }
}

function boundsFor(index: IndexAccess, conditions: Map<string, unknown[]>, collation: StringComparator | undefined): { fields: Interval[][]; score: number } {
  const fields: Interval[][] = [];
  let score = 0;
  let open = true;
  for (const [path, direction] of Object.entries(index.keyPattern)) {
    const conds = conditions.get(path);
    const geoField = index.geo?.field === path;
    let intervals: Interval[] | undefined;
    if (open && conds) {
      for (const c of conds) {
        const next = geoField ? geoIntervals(index, c) : collatedIntervals(intervalsFor(c, index.entry.multikey), index, collation);
        if (next === undefined) continue;
        intervals = intervals === undefined ? next : intersectIntervalLists(intervals, next);
      }
      if (intervals && direction === 'hashed') intervals = hashedIntervals(intervals);
      if (intervals && index.entry.spec.sparse === true && intervals.some((i) => i.low === null || i.high === null)) intervals = undefined;
    }
    // A geo index holds only documents with a location, by cell: it answers a geo predicate on
    // its geo field and nothing else.
    if (geoField && !(open && intervals)) return { fields: Object.keys(index.keyPattern).map(() => [ALL_VALUES]), score: 0 };
    if (open && intervals) {
      fields.push(intervals);
      score += intervals.every(isPoint) ? 2 : 1;
      if (!intervals.every(isPoint)) open = false;
    } else {
      fields.push([ALL_VALUES]);
      open = false;
    }
  }
  return { fields, score };
}

// A condition's intervals as the index can use them: unchanged where they hold no string,
// document or array; under the index's own collation, string points as their collation keys and
// string ranges as every string (collation keys do not order as the collation does); under
// another collation, not at all.
function collatedIntervals(intervals: Interval[] | undefined, index: IndexAccess, collation: StringComparator | undefined): Interval[] | undefined {
  if (intervals === undefined || !intervals.some(touchesCollatable)) return intervals;
  if (index.collation !== collation) return undefined;
  const key = index.collationKey;
  if (key === undefined) return intervals;
  const points = new Map<string, Interval>();
  let allStrings = false;
  for (const i of intervals) {
    if (!touchesCollatable(i)) points.set(`i${points.size}`, i);
    else if (isPoint(i)) {
      const v = collateValue(i.low, key);
      points.set(`p${JSON.stringify(encodeKey([v], [1]).toString('hex'))}`, pointInterval(v));
    } else if (canonicalType(i.low) === 15 || canonicalType(i.high) === 15) {
      allStrings = true;
    } else {
      return undefined;
    }
  }
  const out = [...points.values()].filter((i) => !(allStrings && canonicalType(i.low) === 15));
  if (allStrings) out.push({ ...STRINGS });
  return withCollation(undefined, () => normalize(out));
}

const STRINGS: Interval = { low: '', lowInclusive: true, high: {}, highInclusive: false };

// Whether an interval may hold a value whose comparison a collation changes: a string, or a
// document or array (which may hold one).
function touchesCollatable(i: Interval): boolean {
  return canonicalType(i.low) <= 25 && canonicalType(i.high) >= 15;
}

function hashedIntervals(intervals: Interval[]): Interval[] | undefined {
  if (!intervals.every(isPoint)) return undefined;
  return intervals.map((i) => pointInterval(hashValue(i.low)));
}

// An index scan over the given intervals of each field, unsorted.
export function intervalScan(index: IndexAccess, fields: Interval[][]): QueryPlan & { kind: 'IXSCAN' } {
  return buildPlan(index, fields, undefined, undefined);
}

function buildPlan(index: IndexAccess, fields: Interval[][], sort: Doc | undefined, collation: StringComparator | undefined): QueryPlan & { kind: 'IXSCAN' } {
  const { providesSort, direction } = sortSupport(index, fields, sort, collation);
  const ordering = index.ordering;
  const bounded = boundedPrefix(fields);
  const ranges = keyRanges(fields.slice(0, bounded), ordering);
  const indexBounds: Record<string, string[]> = {};
  Object.keys(index.keyPattern).forEach((path, i) => { indexBounds[path] = fields[i]!.map(formatInterval); });
  return { kind: 'IXSCAN', index, ranges, direction, indexBounds, providesSort };
}

// Leading fields whose intervals can be turned into key ranges without exceeding MAX_RANGES.
function boundedPrefix(fields: Interval[][]): number {
  let count = 1;
  let n = 0;
  for (const intervals of fields) {
    if (intervals.length === 1 && intervals[0] === ALL_VALUES) break;
    if (count * intervals.length > MAX_RANGES) break;
    count *= intervals.length;
    n += 1;
    if (!intervals.every(isPoint)) break;
  }
  return n;
}

function keyRanges(fields: Interval[][], ordering: Ordering): KeyRange[] {
  if (fields.length === 0) return [{ start: Buffer.alloc(0), end: Buffer.alloc(0) }];
  let prefixes: unknown[][] = [[]];
  for (const intervals of fields.slice(0, -1)) {
    prefixes = prefixes.flatMap((p) => intervals.map((i) => [...p, i.low]));
  }
  const last = fields[fields.length - 1]!;
  const lastDir = ordering[fields.length - 1] ?? 1;
  const order = ordering.slice(0, fields.length);
  const ranges: KeyRange[] = [];
  for (const p of prefixes) {
    for (const i of last) {
      const [low, lowIncl, high, highIncl] = lastDir === 1
        ? [i.low, i.lowInclusive, i.high, i.highInclusive]
        : [i.high, i.highInclusive, i.low, i.lowInclusive];
      const lo = encodeKey([...p, low], order);
      const hi = encodeKey([...p, high], order);
      ranges.push({ start: lowIncl ? lo : prefixSuccessor(lo), end: highIncl ? prefixSuccessor(hi) : hi });
    }
  }
  return ranges.sort((a, b) => Buffer.compare(a.start, b.start));
}

// Under a collation, or from a collated index, key order is not the sort's order for strings
// (binary in one, collation keys in the other), and which fields hold strings is not known here.
function sortSupport(index: IndexAccess, fields: Interval[][], sort: Doc | undefined, collation: StringComparator | undefined): { providesSort: boolean; direction: 1 | -1 } {
  const sortEntries = sort ? Object.entries(sort) : [];
  if (sortEntries.length === 0) return { providesSort: true, direction: 1 };
  if (index.entry.multikey || collation !== undefined || index.collation !== undefined) return { providesSort: false, direction: 1 };
  const pattern = Object.entries(index.keyPattern);
  let start = 0;
  while (start < pattern.length && pattern[start]![0] !== sortEntries[0]![0] && fields[start]!.length === 1 && isPoint(fields[start]![0]!)) start += 1;
  let direction: 1 | -1 | undefined;
  for (let i = 0; i < sortEntries.length; i++) {
    const [path, dir] = sortEntries[i]!;
    const p = pattern[start + i];
    if (!p || p[0] !== path || p[1] === 'hashed') return { providesSort: false, direction: 1 };
    const rel = (Number(dir) === Number(p[1]) ? 1 : -1) as 1 | -1;
    if (direction === undefined) direction = rel;
    else if (direction !== rel) return { providesSort: false, direction: 1 };
  }
  return { providesSort: true, direction: direction ?? 1 };
}

function minMaxPlan(index: IndexAccess, min: Doc | undefined, max: Doc | undefined): QueryPlan {
  const ordering = index.ordering;
  const key = index.collationKey;
  const values = (bound: Doc): unknown[] => Object.values(bound).map((v) => (key === undefined ? v : collateValue(v, key)));
  const start = min ? encodeKey(values(min), ordering.slice(0, Object.keys(min).length)) : Buffer.alloc(0);
  const end = max ? encodeKey(values(max), ordering.slice(0, Object.keys(max).length)) : Buffer.alloc(0);
  const indexBounds: Record<string, string[]> = {};
  for (const path of Object.keys(index.keyPattern)) indexBounds[path] = [formatInterval(ALL_VALUES)];
  return { kind: 'IXSCAN', index, ranges: [{ start, end }], direction: 1, indexBounds, providesSort: false };
}

function formatInterval(i: Interval): string {
  const show = (v: unknown): string => {
    if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'nan.0' : v > 0 ? 'inf.0' : '-inf.0';
    return formatValue(v);
  };
  return `${i.lowInclusive ? '[' : '('}${show(i.low)}, ${show(i.high)}${i.highInclusive ? ']' : ')'}`;
}
