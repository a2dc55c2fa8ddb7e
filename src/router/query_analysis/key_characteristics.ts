import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { encodeKey } from '../../bson/key_string.js';
import { hashValue } from '../../bson/hash.js';
import { isNumber, isPlainObject, type Doc } from '../../bson/values.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';

// analyzeShardKey's keyCharacteristics, as pure functions over what the shards answer: the
// index that supports a candidate key, the key's distinct values and their frequencies, and its
// monotonicity from the record ids of the documents in key order (MongoDB's
// analyze_shard_key_cmd_util).

// analyzeShardKeyMonotonicityCorrelationCoefficientThreshold's and
// analyzeShardKeyNumMostCommonValues's defaults.
export const MONOTONICITY_THRESHOLD = 0.7;
export const NUM_MOST_COMMON_VALUES = 5;

// The size of an empty document: the least average document size reported for a non-empty
// collection.
const EMPTY_DOC_SIZE_BYTES = 5;

export function roundMetric(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}

export interface IndexDescription {
  name?: unknown;
  key: Doc;
  unique?: unknown;
  sparse?: unknown;
  partialFilterExpression?: unknown;
  collation?: unknown;
}

function isRangeOrHashed(value: unknown): boolean {
  return value === 'hashed' || (isNumber(value) && (Number(value) === 1 || Number(value) === -1));
}

// An index plain enough to count the key's values from: b-tree or hashed, with the key's fields
// as its first fields (whatever their type), not sparse, not partial, and with the simple
// collation (MongoDB's findCompatiblePrefixedIndex; a multikey index shows as an array value).
export function compatibleIndex(indexes: readonly IndexDescription[], keyPattern: Doc): IndexDescription | undefined {
  const fields = Object.keys(keyPattern);
  return indexes.find((index) => {
    const indexFields = Object.keys(index.key);
    return indexFields.length >= fields.length && fields.every((f, i) => indexFields[i] === f)
      && Object.values(index.key).every(isRangeOrHashed) && plain(index);
  });
}

// The index monotonicity is read from: the key itself, field for field and type for type, as a
// prefix (MongoDB's findShardKeyPrefixedIndex).
export function shardKeyIndex(indexes: readonly IndexDescription[], pattern: ShardKeyPattern): IndexDescription | undefined {
  return indexes.find((index) => pattern.isShardKeyPrefixOf(index.key) && plain(index));
}

function plain(index: IndexDescription): boolean {
  const simple = index.collation === undefined || (isPlainObject(index.collation) && index.collation.locale === 'simple');
  return index.sparse !== true && index.partialFilterExpression === undefined && simple;
}

// Whether the supporting index makes the key unique: a unique index (the _id index is) on exactly
// the key's fields.
export function isUniqueKey(index: IndexDescription, keyPattern: Doc): boolean {
  const unique = index.unique === true || index.name === '_id_';
  return unique && Object.keys(index.key).length === Object.keys(keyPattern).length;
}

// One distinct value of the key: its fields' values (null for a missing one) and how many
// documents hold it.
export interface KeyFrequency {
  values: unknown[];
  frequency: number;
}

// Each shard's {_id: {k0, k1, ...}, frequency} groups merged by value. A key field holding an
// array cannot be a shard key: BadValue, as MongoDB refuses it.
export function mergeKeyFrequencies(fields: readonly string[], shardGroups: readonly Doc[][]): KeyFrequency[] {
  const byValue = new Map<string, KeyFrequency>();
  for (const groups of shardGroups) {
    for (const group of groups) {
      const id = isPlainObject(group._id) ? group._id : {};
      const values = fields.map((field, i) => {
        const value = id[`k${i}`];
        if (Array.isArray(value)) throw new MongoError(ErrorCodes.BadValue, `The shard key contains an array field '${field}'`);
        return value === undefined ? null : value;
      });
      const at = encodeKey(values).toString('hex');
      const seen = byValue.get(at);
      const frequency = Number(group.frequency);
      if (seen === undefined) byValue.set(at, { values, frequency });
      else seen.frequency += frequency;
    }
  }
  return [...byValue.values()];
}

// The $group each shard runs: the key's values, one group each, and their counts.
export function keyGroupStage(fields: readonly string[]): Doc {
  return { $group: { _id: Object.fromEntries(fields.map((f, i) => [`k${i}`, `$${f}`])), frequency: { $sum: 1 } } };
}

// The most frequent values, most frequent first (ties in key order), as {value: {<field>: v},
// frequency}.
export function mostCommonValues(fields: readonly string[], values: readonly KeyFrequency[], count = NUM_MOST_COMMON_VALUES): Doc[] {
  const sorted = [...values].sort((a, b) => b.frequency - a.frequency || Buffer.compare(encodeKey(a.values), encodeKey(b.values)));
  return sorted.slice(0, count).map((v) => ({ value: Object.fromEntries(fields.map((f, i) => [f, v.values[i]])), frequency: v.frequency }));
}

// The values in the candidate key's order (hashes for a hashed field), each as the shard key
// document a chunk bound would hold, with its frequency.
export function inKeyOrder(pattern: ShardKeyPattern, values: readonly KeyFrequency[]): { key: Doc; keyString: Buffer; frequency: number }[] {
  const keyed = values.map((v) => {
    const key = Object.fromEntries(pattern.fields.map((f, i) => [f, pattern.isHashedField(f) ? hashValue(v.values[i]) : v.values[i]]));
    return { key, keyString: pattern.keyString(key), frequency: v.frequency };
  });
  return keyed.sort((a, b) => Buffer.compare(a.keyString, b.keyString));
}

// Pearson's correlation between the record ids taken in key order and their positions: near 1 or
// -1 when documents were inserted in key order (or its reverse).
export function recordIdCorrelation(recordIds: readonly number[]): number {
  const n = recordIds.length;
  const meanX = (n + 1) / 2;
  const meanY = recordIds.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  recordIds.forEach((y, i) => {
    const dx = i + 1 - meanX;
    const dy = y - meanY;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  });
  return sxx === 0 || syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy);
}

export interface Monotonicity {
  recordIdCorrelationCoefficient?: number;
  type: 'monotonic' | 'not monotonic' | 'unknown';
}

// `recordIds`: the first record id of each distinct key value, in key order; undefined when no
// index gives that order. A single hashed field is not monotonic by construction; a hashed field
// after the first leaves it unknown.
export function monotonicityOf(pattern: ShardKeyPattern, recordIds: readonly number[] | undefined, threshold = MONOTONICITY_THRESHOLD): Monotonicity {
  if (pattern.isHashed) return pattern.hasHashedPrefix() ? { recordIdCorrelationCoefficient: 0, type: 'not monotonic' } : { type: 'unknown' };
  if (recordIds === undefined) return { type: 'unknown' };
  if (recordIds.length <= 1) return { recordIdCorrelationCoefficient: 0, type: 'not monotonic' };
  const coefficient = roundMetric(recordIdCorrelation(recordIds));
  return { recordIdCorrelationCoefficient: coefficient, type: Math.abs(coefficient) >= threshold ? 'monotonic' : 'not monotonic' };
}

// From a shard's documents read in key order with their record ids, the smallest record id of each distinct value, in key order.
export function firstRecordIds(rows: readonly { values: unknown[]; recordId: number }[]): number[] {
  const out: number[] = [];
  let previous: string | undefined;
  for (const row of rows) {
    const at = encodeKey(row.values.map((v) => (v === undefined ? null : v))).toString('hex');
    if (at !== previous) out.push(row.recordId);
    else out[out.length - 1] = Math.min(out[out.length - 1]!, row.recordId);
    previous = at;
  }
  return out;
}

export function averageDocumentSize(bytes: number, count: number): number {
  return count === 0 ? 0 : Math.max(EMPTY_DOC_SIZE_BYTES, Math.floor(bytes / count));
}
