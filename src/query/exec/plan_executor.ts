import { deserializeDocument, type Doc } from '../../bson/values.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import type { Matcher, MatchDetails } from '../match/matcher.js';
import type { QueryPlan } from '../plan/query_planner.js';

export interface ExecutionStats {
  keysExamined: number;
  docsExamined: number;
  nReturned: number;
}

export function newStats(): ExecutionStats {
  return { keysExamined: 0, docsExamined: 0, nReturned: 0 };
}

// A document produced by a plan: decoded for matching and projection, with its stored bytes kept
// so an unprojected reply can send them as they are.
export interface Candidate {
  recordId: number;
  doc: Doc;
  bytes: Buffer;
  details: MatchDetails;
}

// Streams the documents matching `matcher` in plan order. Index scans fetch each record once
// (a multikey index can yield a record under several keys).
export function* executePlan(storage: StorageEngine, coll: Collection, plan: QueryPlan, matcher: Matcher, stats: ExecutionStats): Iterable<Candidate> {
  for (const { recordId, bytes } of candidateRecords(storage, coll, plan, stats)) {
    stats.docsExamined += 1;
    const doc = deserializeDocument(bytes);
    const details: MatchDetails = {};
    if (!matcher.matches(doc, details)) continue;
    yield { recordId, doc, bytes, details };
  }
}

function* candidateRecords(storage: StorageEngine, coll: Collection, plan: QueryPlan, stats: ExecutionStats): Iterable<{ recordId: number; bytes: Buffer }> {
  if (plan.kind === 'COLLSCAN') {
    yield* storage.scanRecords(coll, plan.direction === -1);
    return;
  }
  const seen = plan.index.entry.multikey ? new Set<number>() : undefined;
  const ranges = plan.direction === 1 ? plan.ranges : [...plan.ranges].reverse();
  for (const range of ranges) {
    for (const { recordId } of plan.index.scan(storage.kv, range.start, range.end, plan.direction === -1)) {
      stats.keysExamined += 1;
      if (seen) {
        if (seen.has(recordId)) continue;
        seen.add(recordId);
      }
      const bytes = storage.getRecord(coll, recordId);
      if (bytes) yield { recordId, bytes };
    }
  }
}
