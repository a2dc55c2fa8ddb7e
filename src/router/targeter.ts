import { MaxKey, MinKey } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { hashValue } from '../bson/hash.js';
import { encodeKey } from '../bson/key_string.js';
import { bsonTag, isPlainObject, type Doc, type Double } from '../bson/values.js';
import { ALL_VALUES, intersectIntervalLists, intervalsFor, isPoint, normalize, pointInterval, type Interval } from '../query/plan/index_bounds.js';
import { throwIfMovedSince } from '../catalog/chunk_history.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ChunkManager } from './chunk_manager.js';

// Targeting of reads and writes on a sharded collection, as MongoDB's ChunkManager::
// getShardIdsForQuery and CollectionRoutingInfoTargeter: the filter's predicates on the shard
// key become index bounds on a virtual shard key index, flattened into key ranges, whose chunks
// name the shards. Targeting may over-approximate, never miss a shard. On a routing table as of a
// cluster time (a transaction's statement), reads go where the chunks were then, and so would
// writes, but a write to a chunk that has moved since would land on a shard that no longer owns
// it: it fails with MigrationConflict instead, as MongoDB's shards refuse it.

// ShardKeyPattern::flattenBounds refuses to expand $in lists beyond this many ranges.
const MAX_FLATTENED_IN_COMBINATIONS = 4_000_000;

export function shardsForQuery(cm: ChunkManager, filter: Doc): Set<string> {
  const numeric = numericPointShard(cm, filter);
  if (numeric !== undefined) return new Set([numeric]);
  // Fast path: an equality on the whole shard key names one chunk.
  const exactKey = cm.shardKeyPattern.extractShardKeyFromQuery(filter);
  if (exactKey !== undefined) {
    try {
      return new Set([cm.findIntersectingChunk(exactKey).shard]);
    } catch {
      // A key no chunk holds (the global max): fall through to ranges.
    }
  }
  const ranges = keyRangesForQuery(cm, filter);
  if (ranges === undefined) return cm.getAllShardIds();
  const shards = new Set<string>();
  for (const r of ranges) cm.shardIdsForKeyRange(r.min, r.max, r.maxInclusive, shards);
  // SERVER-4914: callers expect at least one shard even when no key can match.
  if (shards.size === 0) shards.add(cm.findIntersectingChunk(cm.shardKeyPattern.globalMin()).shard);
  return shards;
}

// The chunks a filter can read or write, in key order, at most `limit` of them: what
// shardsForQuery finds, one level down.
export function chunksForQuery(cm: ChunkManager, filter: Doc, limit: number): ChunkType[] {
  const exactKey = cm.shardKeyPattern.extractShardKeyFromQuery(filter);
  if (exactKey !== undefined) {
    try {
      return [cm.findIntersectingChunk(exactKey)];
    } catch {
      // The global max: fall through to ranges.
    }
  }
  const ranges = keyRangesForQuery(cm, filter);
  const chunks: ChunkType[] = [];
  if (ranges === undefined) {
    const pattern = cm.shardKeyPattern;
    cm.chunksForKeyRange(pattern.keyString(pattern.globalMin()), pattern.keyString(pattern.globalMax()), true, chunks, limit);
  } else {
    for (const r of ranges) cm.chunksForKeyRange(r.min, r.max, r.maxInclusive, chunks, limit);
  }
  return chunks;
}

// The chunks a filter that pins no whole shard key reaches, and whether it reaches the whole key
// space (its first field unbounded: MongoDB's targetMinkeyToMaxKey), as analyzeShardKey tells a
// scatter-gather from a query of some ranges.
export function rangesForQuery(cm: ChunkManager, filter: Doc): { chunks: ChunkType[]; wholeKeySpace: boolean } {
  const bounds = boundsForConjunction(cm, [filter]);
  const wholeKeySpace = bounds === undefined || bounds.some((fields) => fields[0]!.some((i) => bsonTag(i.low) === 'MinKey' && bsonTag(i.high) === 'MaxKey'));
  return { chunks: chunksForQuery(cm, filter, Infinity), wholeKeySpace };
}

export function shardForInsert(cm: ChunkManager, doc: Doc): string {
  return chunkForInsert(cm, doc).shard;
}

// The chunk an inserted document belongs to: on a single-field key holding a number, found
// without building a shard key document or a key string.
export function chunkForInsert(cm: ChunkManager, doc: Doc): ChunkType {
  const fields = cm.shardKeyPattern.fields;
  if (fields.length === 1 && !fields[0]!.includes('.')) {
    const chunk = numericChunk(cm, doc[fields[0]!]);
    if (chunk !== undefined) return writable(cm, chunk);
  }
  return writable(cm, cm.findIntersectingChunk(cm.shardKeyPattern.extractShardKeyFromDoc(doc)));
}

// The chunk, once sure that a write to it at the table's cluster time lands where it is now.
function writable(cm: ChunkManager, chunk: ChunkType): ChunkType {
  if (cm.clusterTime !== undefined) throwIfMovedSince(chunk, cm.clusterTime);
  return chunk;
}

// The commonest point query, {k: <number>} alone on a single-field shard key {k: 1}, targeted
// without building a shard key document or a key string (ChunkManager.shardForNumericKey). It is
// what extractShardKeyFromQuery + findIntersectingChunk give for it: a number is a valid shard
// key value stored as is (unhashed), and a filter with no other field has no other equality.
export function numericPointShard(cm: ChunkManager, filter: Doc): string | undefined {
  const fields = cm.shardKeyPattern.fields;
  if (fields.length !== 1) return undefined;
  const field = fields[0]!;
  let only: string | undefined;
  for (const key in filter) {
    if (only !== undefined || !Object.prototype.hasOwnProperty.call(filter, key)) return undefined;
    only = key;
  }
  return only === field ? numericShard(cm, filter[field]) : undefined;
}

function numericShard(cm: ChunkManager, value: unknown): string | undefined {
  return numericChunk(cm, value)?.shard;
}

function numericChunk(cm: ChunkManager, value: unknown): ChunkType | undefined {
  if (typeof value === 'number') return cm.chunkForNumericKey(value);
  return bsonTag(value) === 'Double' ? cm.chunkForNumericKey((value as Double).value) : undefined;
}

export interface WriteTargeting {
  shards: Set<string>;
  // The shard key the filter pins, when it pins all of it (upserts need it).
  exactKey?: Doc;
  // A single-document write (multi: false) that reaches several shards: MongoDB runs it as a
  // write without shard key (broadcast when the filter is an exact _id, two-phase otherwise).
  singleWriteWithoutShardKey: boolean;
}

export function targetUpdateOrDelete(cm: ChunkManager, filter: Doc, multi: boolean): WriteTargeting {
  const exactKey = cm.shardKeyPattern.extractShardKeyFromQuery(filter);
  if (exactKey !== undefined) {
    return { shards: new Set([writable(cm, cm.findIntersectingChunk(exactKey)).shard]), exactKey, singleWriteWithoutShardKey: false };
  }
  if (cm.clusterTime !== undefined) for (const chunk of chunksForQuery(cm, filter, Infinity)) writable(cm, chunk);
  const shards = shardsForQuery(cm, filter);
  return { shards, singleWriteWithoutShardKey: !multi && shards.size > 1 };
}

// A range of shard keys as key strings; min inclusive.
interface KeyRange {
  min: Buffer;
  max: Buffer;
  maxInclusive: boolean;
}

// The key ranges holding every document the filter can match; undefined when it does not
// restrict the shard key at all.
function keyRangesForQuery(cm: ChunkManager, filter: Doc): KeyRange[] | undefined {
  const bounds = boundsForConjunction(cm, [filter]);
  if (bounds === undefined) return undefined;
  const ranges: KeyRange[] = [];
  for (const fieldBounds of bounds) ranges.push(...flattenBounds(fieldBounds));
  return ranges;
}

// Per branch of the filter, one interval list per shard key field; undefined when some branch
// leaves the shard key unrestricted.
type FieldBounds = Interval[][];

function boundsForConjunction(cm: ChunkManager, clauses: readonly Doc[]): FieldBounds[] | undefined {
  const conjuncts: [string, unknown][] = [];
  const ors: Doc[][] = [];
  for (const clause of clauses) collectConjuncts(clause, conjuncts, ors);
  if (ors.length > 0) {
    // Expand the first $or, each branch ANDed with the plain conjuncts (as MongoDB's planner
    // builds an OR of index scans); further $ors are dropped, which only widens the result.
    const out: FieldBounds[] = [];
    for (const branch of ors[0]!) {
      const sub = boundsForConjunction(cm, [fromConjuncts(conjuncts), branch]);
      if (sub === undefined) return undefined;
      out.push(...sub);
    }
    return out;
  }
  const pattern = cm.shardKeyPattern;
  const perField = pattern.fields.map((field) => {
    let intervals: Interval[] | undefined;
    for (const [path, condition] of conjuncts) {
      if (path !== field) continue;
      const next = intervalsFor(condition, false);
      if (next !== undefined) intervals = intervals === undefined ? next : intersectIntervalLists(intervals, next);
    }
    if (intervals === undefined) return undefined;
    return pattern.isHashedField(field) ? hashedIntervals(intervals) : intervals;
  });
  if (perField.every((i) => i === undefined)) return undefined;
  return [perField.map((i) => i ?? [ALL_VALUES])];
}

function collectConjuncts(filter: Doc, conjuncts: [string, unknown][], ors: Doc[][]): void {
  for (const [path, condition] of Object.entries(filter)) {
    if (path === '$and' && Array.isArray(condition)) {
      for (const c of condition) if (isPlainObject(c)) collectConjuncts(c, conjuncts, ors);
    } else if (path === '$or' && Array.isArray(condition)) {
      ors.push(condition.filter(isPlainObject));
    } else if (!path.startsWith('$')) {
      conjuncts.push([path, condition]);
    }
  }
}

function fromConjuncts(conjuncts: readonly [string, unknown][]): Doc {
  return { $and: conjuncts.map(([path, condition]) => ({ [path]: condition })) };
}

// A hashed field is bounded only by points, each turned into its hash; a range of values is a
// scatter of hashes, so all of them.
function hashedIntervals(intervals: Interval[]): Interval[] {
  if (!intervals.every(isPoint)) return [ALL_VALUES];
  return normalize(intervals.map((i) => pointInterval(hashValue(i.low))));
}

// ShardKeyPattern::flattenBounds: points on a prefix of the key, then the intervals of the first
// field that is not a single point, each a range; later fields only widen each range by their
// outermost bounds. Unlike MongoDB, an exclusive end is kept exclusive (the rest of the key then
// filled with the value that makes the bound exact), so {a: {$lt: 10}} misses the chunk at 10.
function flattenBounds(fields: FieldBounds): KeyRange[] {
  if (fields.some((intervals) => intervals.length === 0)) return [];
  const prefix: unknown[] = [];
  let i = 0;
  while (i < fields.length && fields[i]!.length === 1 && isPoint(fields[i]![0]!)) prefix.push(fields[i++]![0]!.low);
  if (i === fields.length) {
    const key = encodeKey(prefix);
    return [{ min: key, max: key, maxInclusive: true }];
  }
  const split = fields[i]!;
  const rest = fields.slice(i + 1).map((intervals) => ({
    low: intervals[0]!.low,
    lowInclusive: intervals[0]!.lowInclusive,
    high: intervals[intervals.length - 1]!.high,
    highInclusive: intervals[intervals.length - 1]!.highInclusive,
  }));
  if (split.length > MAX_FLATTENED_IN_COMBINATIONS) {
    throw new MongoError(ErrorCodes.Location17439, 'combinatorial limit of $in partitioning of results exceeded');
  }
  return split.map((interval) => {
    const [min] = boundKey(prefix, [interval, ...rest], 'low');
    const [max, maxInclusive] = boundKey(prefix, [interval, ...rest], 'high');
    return { min, max, maxInclusive };
  });
}

// One end of a compound range: each field's bound in turn, until an exclusive one, after which
// the remaining fields take the extreme that keeps every matching key on the right side.
function boundKey(prefix: readonly unknown[], intervals: readonly Interval[], end: 'low' | 'high'): [Buffer, boolean] {
  const values = [...prefix];
  let inclusive = true;
  for (const interval of intervals) {
    if (!inclusive) {
      values.push(end === 'low' ? new MaxKey() : new MinKey());
      continue;
    }
    values.push(interval[end]);
    inclusive = end === 'low' ? interval.lowInclusive : interval.highInclusive;
  }
  return [encodeKey(values), inclusive];
}
