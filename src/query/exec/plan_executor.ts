import { deserializeDocument, type Doc } from '../../bson/values.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import type { Matcher, MatchDetails } from '../match/matcher.js';
import type { QueryPlan } from '../plan/query_planner.js';
import { checkForInterrupt } from '../../base/operation_deadline.js';

export interface ExecutionStats {
  keysExamined: number;
  docsExamined: number;
  nReturned: number;
}

export function newStats(): ExecutionStats {
  return { keysExamined: 0, docsExamined: 0, nReturned: 0 };
}

// A document produced by a plan: its stored bytes (an unprojected reply sends them as they are),
// decoded only when something needs the values. An index scan's candidates keep the key string
// they were found under (returnKey and $meta: 'indexKey' show that key).
export class Candidate {
  constructor(readonly recordId: number, readonly bytes: Buffer, private decoded: Doc | undefined, readonly details: MatchDetails, readonly keyString?: Buffer) {}

  // The $text score of a document a text scan found ({$meta: 'textScore'}).
  textScore: number | undefined;

  // A $near search's distance to the document ({$meta: 'geoNearDistance'}, in the query's units)
  // and the location it was measured to ({$meta: 'geoNearPoint'}, $geoNear's includeLocs).
  geoDistance: number | undefined;
  geoPoint: unknown;

  get doc(): Doc {
    this.decoded ??= deserializeDocument(this.bytes);
    return this.decoded;
  }
}

// The documents matching `matcher` in plan order (every document the plan yields when there is
// none): streamed for scans, an array for IDHACK's single point read, which needs no generator.
// Index scans fetch each record once (a multikey index can yield a record under several keys).
export function executePlan(storage: StorageEngine, coll: Collection, plan: QueryPlan, matcher: Matcher | undefined, stats: ExecutionStats): Iterable<Candidate> {
  if (plan.kind !== 'IDHACK') return filtered(candidateRecords(storage, coll, plan, stats), matcher, stats);
  const recordId = plan.index.lookupUnique(storage.kv, plan.keyString);
  if (recordId === undefined) return [];
  stats.keysExamined += 1;
  const bytes = storage.getRecord(coll, recordId);
  if (bytes === undefined) return [];
  stats.docsExamined += 1;
  return [new Candidate(recordId, bytes, undefined, {})];
}

// One record an index search found (text, geo), read and matched as a scan's records are: the
// candidate, or undefined when the record is gone or does not match.
export function fetchCandidate(storage: StorageEngine, coll: Collection, recordId: number, matcher: Matcher | undefined, stats: ExecutionStats): Candidate | undefined {
  checkForInterrupt();
  const bytes = storage.getRecord(coll, recordId);
  if (bytes === undefined) return undefined;
  stats.docsExamined += 1;
  const doc = deserializeDocument(bytes);
  const details: MatchDetails = {};
  if (matcher !== undefined && !matcher.matches(doc, details)) return undefined;
  return new Candidate(recordId, bytes, doc, details);
}

interface ScannedRecord {
  recordId: number;
  bytes: Buffer;
  keyString?: Buffer;
}

function* filtered(records: Iterable<ScannedRecord>, matcher: Matcher | undefined, stats: ExecutionStats): Iterable<Candidate> {
  for (const { recordId, bytes, keyString } of records) {
    checkForInterrupt();
    stats.docsExamined += 1;
    if (!matcher) {
      yield new Candidate(recordId, bytes, undefined, {}, keyString);
      continue;
    }
    const doc = deserializeDocument(bytes);
    const details: MatchDetails = {};
    if (!matcher.matches(doc, details)) continue;
    yield new Candidate(recordId, bytes, doc, details, keyString);
  }
}

function* candidateRecords(storage: StorageEngine, coll: Collection, plan: QueryPlan & { kind: 'COLLSCAN' | 'IXSCAN' }, stats: ExecutionStats): Iterable<ScannedRecord> {
  if (plan.kind === 'COLLSCAN') {
    yield* storage.scanRecords(coll, plan.direction === -1);
    return;
  }
  const seen = plan.index.entry.multikey ? new Set<number>() : undefined;
  const ranges = plan.direction === 1 ? plan.ranges : [...plan.ranges].reverse();
  for (const range of ranges) {
    for (const { keyString, recordId } of plan.index.scan(storage.kv, range.start, range.end, plan.direction === -1)) {
      stats.keysExamined += 1;
      if (seen) {
        if (seen.has(recordId)) continue;
        seen.add(recordId);
      }
      const bytes = storage.getRecord(coll, recordId);
      if (bytes) yield { recordId, bytes, keyString };
    }
  }
}
