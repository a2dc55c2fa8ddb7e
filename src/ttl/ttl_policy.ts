import { encodeKey } from '../bson/key_string.js';
import { toDouble, type Doc } from '../bson/values.js';
import { prefixSuccessor } from '../storage/key_layout.js';
import { ttlSpecProblem, wholeSeconds } from './ttl_index.js';

// The TTL monitor's decisions, pure: which indexes a pass visits, which index entries hold
// expired dates, how a visit is cut into write units and when it, a sub-pass and a pass end.
// MongoDB's loop (ttl.cpp): a pass runs sub-passes until nothing is left to delete; a sub-pass
// lists the TTL indexes and visits each, revisiting the ones that met their target (more may be
// left) after all the others, until none did or the sub-pass has run ttlMonitorSubPassTargetSecs.

export interface TtlLimits {
  // MongoDB's ttlIndexDeleteTargetDocs and ttlIndexDeleteTargetTimeMS: a visit of one index
  // stops there, and the index waits for the other indexes before it is visited again.
  readonly targetDocs: number;
  readonly targetTimeMs: number;
  // MongoDB's ttlMonitorSubPassTargetSecs, in milliseconds.
  readonly subPassTargetMs: number;
  // docshard's: the index entries one write unit reads. A write unit runs in one turn of the
  // node's event loop, so this bounds how long users wait behind the monitor (~1 ms per 100).
  readonly batchEntries: number;
}

export const DEFAULT_TTL_LIMITS: TtlLimits = { targetDocs: 50_000, targetTimeMs: 1000, subPassTargetMs: 60_000, batchEntries: 500 };

// One TTL index as a visit needs it.
export interface TtlTarget {
  readonly ns: string;
  readonly index: string;
  readonly direction: 1 | -1;
  readonly expireAfterSeconds: number;
}

export interface InvalidTtlIndex {
  readonly ns: string;
  readonly index: string;
  readonly reason: string;
}

export interface CatalogView {
  readonly ns: string;
  readonly specs: readonly Doc[];
}

// The TTL indexes of these collections, and those that carry expireAfterSeconds but cannot be
// TTL indexes (the monitor skips and counts them).
export function ttlIndexes(collections: Iterable<CatalogView>): { targets: TtlTarget[]; invalid: InvalidTtlIndex[] } {
  const targets: TtlTarget[] = [];
  const invalid: InvalidTtlIndex[] = [];
  for (const { ns, specs } of collections) {
    for (const spec of specs) {
      if (spec.expireAfterSeconds === undefined) continue;
      const target = ttlTarget(ns, spec);
      if (typeof target === 'string') invalid.push({ ns, index: String(spec.name), reason: target });
      else targets.push(target);
    }
  }
  return { targets, invalid };
}

// The target an index spec describes now, or why it cannot be one (collMod may have changed it
// since the sub-pass listed it, so a visit reads the spec again).
export function ttlTarget(ns: string, spec: Doc): TtlTarget | string {
  const problem = ttlSpecProblem(spec);
  if (problem !== undefined) return problem;
  const key = spec.key as Doc;
  const dir = Object.values(key)[0];
  if (typeof dir === 'string') return "special index can't be used as a TTL index";
  return { ns, index: String(spec.name), direction: toDouble(dir) >= 0 ? 1 : -1, expireAfterSeconds: wholeSeconds(spec.expireAfterSeconds) };
}

// JavaScript's dates end at ±8.64e15 ms; an expiration before the first date expires nothing
// that a Date can hold anyway.
const EARLIEST_DATE_MS = -8.64e15;

// Documents whose date is at or before this have expired (MongoDB's `at - expireAfterSeconds`).
export function expirationDate(atMs: number, expireAfterSeconds: number): Date {
  return new Date(Math.max(EARLIEST_DATE_MS, atMs - expireAfterSeconds * 1000));
}

// A span of index entries, [start, end) as key bytes, read backwards when `reverse`.
export interface ScanRange {
  readonly start: Buffer;
  readonly end: Buffer;
  readonly reverse: boolean;
}

// The entries of a TTL index holding a date at or before `expiration`, oldest first. Only dates
// expire, so the range starts where the date type starts (every date key begins with its type
// byte); an array's earliest date is the first of its entries the scan meets.
export function expiredRange(direction: 1 | -1, expiration: Date): ScanRange {
  const ordering = [direction] as const;
  const dateType = encodeKey([expiration], ordering).subarray(0, 1);
  const cutoff = encodeKey([expiration], ordering);
  // Descending keys are inverted bytes: the oldest dates are the largest keys.
  return direction === 1
    ? { start: Buffer.from(dateType), end: prefixSuccessor(cutoff), reverse: false }
    : { start: cutoff, end: prefixSuccessor(dateType), reverse: true };
}

const ZERO = Buffer.from([0]);

// What is left of `range` after the entry keyed `entryKey`, the last one a batch read.
export function rangeAfter(range: ScanRange, entryKey: Buffer): ScanRange {
  return range.reverse ? { ...range, end: entryKey } : { ...range, start: Buffer.concat([entryKey, ZERO]) };
}

// How many entries the next write unit of a visit reads.
export function batchLimit(deletedInVisit: number, limits: TtlLimits): number {
  return Math.max(1, Math.min(limits.batchEntries, limits.targetDocs - deletedInVisit));
}

export interface VisitProgress {
  readonly deleted: number;
  readonly elapsedMs: number;
  // Of the last write unit: the entries it read, and how many it asked for.
  readonly entriesRead: number;
  readonly limit: number;
}

// After a write unit of a visit: read on, stop with more left ('targetMet': visit again after the
// other indexes), or stop with the range read to its end.
export function afterBatch(p: VisitProgress, limits: TtlLimits): 'nextBatch' | 'targetMet' | 'exhausted' {
  if (p.entriesRead < p.limit) return 'exhausted';
  if (p.deleted >= limits.targetDocs || p.elapsedMs >= limits.targetTimeMs) return 'targetMet';
  return 'nextBatch';
}

// After every index of a round was visited: revisit those that met their target while the
// sub-pass has time, else start a new sub-pass from the catalog; the pass is over when none did.
export function afterRound(indexesWithMore: number, subPassElapsedMs: number, limits: TtlLimits): 'round' | 'subPass' | 'passDone' {
  if (indexesWithMore === 0) return 'passDone';
  return subPassElapsedMs < limits.subPassTargetMs ? 'round' : 'subPass';
}
