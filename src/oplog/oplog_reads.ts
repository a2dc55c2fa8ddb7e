import { Timestamp } from 'bson';
import { LazyDocument } from '../bson/raw_document.js';
import { deserializeDocument, isPlainObject, type Doc } from '../bson/values.js';
import { recordIdOf, recordKey } from '../storage/key_layout.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import { OPLOG_NS } from './oplog_entry.js';

// Reads of local.oplog.rs by timestamp. Record ids grow with ts (each unit appends its entry at
// its commit, in commit order), so the first entry at or after a time is found by a binary search
// over record ids, each probe one "first record at or after this id" read: gaps (ids of units that
// aborted, entries capped away) cost nothing.

export function tsOfRecord(bytes: Buffer): Timestamp {
  return new LazyDocument(bytes).fields(['ts']).ts as Timestamp;
}

const END = Buffer.alloc(0);

// One probe of the search: a single-record range read.
function firstAtOrAfter(storage: StorageEngine, coll: Collection, recordId: number): { recordId: number; bytes: Buffer } | undefined {
  for (const { key, value } of storage.kv.space(coll.space).range(recordKey(recordId), END, { limit: 1 })) return { recordId: recordIdOf(key), bytes: value };
  return undefined;
}

function lastRecord(storage: StorageEngine, coll: Collection): { recordId: number; bytes: Buffer } | undefined {
  for (const r of storage.scanRecords(coll, true)) return r;
  return undefined;
}

// The record id of the first entry whose ts is at or after `ts`, or the id past the last entry
// when there is none (where a tailable cursor waits for the next one).
export function seekRecordId(storage: StorageEngine, coll: Collection, ts: Timestamp): number {
  const last = lastRecord(storage, coll);
  if (last === undefined) return coll.nextRecordId;
  let lo = 0;
  let hi = last.recordId + 1;
  let best = hi;
  // The answer is `best` or lies in [lo, hi).
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const r = firstAtOrAfter(storage, coll, mid);
    if (r === undefined || r.recordId >= hi) {
      hi = mid;
    } else if (tsOfRecord(r.bytes).greaterThanOrEqual(ts)) {
      best = r.recordId;
      hi = mid;
    } else {
      lo = r.recordId + 1;
    }
  }
  return best;
}

// Where a find on the oplog may start reading: its filter's lower bound on ts (`$gte` or `$gt` a
// Timestamp, MongoDB's oplog fetcher query) sought; undefined for any other collection or filter.
export function oplogScanStart(storage: StorageEngine, coll: Collection, filter: Doc): number | undefined {
  if (coll.ns !== OPLOG_NS || !isPlainObject(filter.ts)) return undefined;
  const from = filter.ts.$gte ?? filter.ts.$gt;
  return from instanceof Timestamp ? seekRecordId(storage, coll, from) : undefined;
}

// What the replication driver reads of its own oplog.
export class OplogReads {
  constructor(private readonly storage: StorageEngine) {}

  private coll(): Collection | undefined {
    return this.storage.getCollection(OPLOG_NS);
  }

  lastEntry(): Doc | undefined {
    const coll = this.coll();
    const last = coll === undefined ? undefined : lastRecord(this.storage, coll);
    return last === undefined ? undefined : deserializeDocument(last.bytes);
  }

  // The last entry's optime, MongoDB's lastApplied on a node that applied it.
  lastOpTime(): { ts: Timestamp; t: number } | undefined {
    const last = this.lastEntry();
    return last === undefined ? undefined : { ts: last.ts as Timestamp, t: Number(last.t) };
  }

  // Seconds from the oldest entry to the newest: how long a member may fall behind and still
  // catch up from this oplog.
  windowSeconds(): number {
    const coll = this.coll();
    if (coll === undefined) return 0;
    const first = firstAtOrAfter(this.storage, coll, 0);
    const last = lastRecord(this.storage, coll);
    return first === undefined || last === undefined ? 0 : tsOfRecord(last.bytes).t - tsOfRecord(first.bytes).t;
  }

  // The newest `n` entries, in ts order: the tail the replication driver starts from.
  lastEntries(n: number): Doc[] {
    const coll = this.coll();
    if (coll === undefined) return [];
    const out: Doc[] = [];
    for (const r of this.storage.scanRecords(coll, true)) {
      if (out.length === n) break;
      out.push(deserializeDocument(r.bytes));
    }
    return out.reverse();
  }

  entryAt(ts: Timestamp): Doc | undefined {
    const [first] = this.entriesFrom(ts, 1);
    return first !== undefined && (first.ts as Timestamp).equals(ts) ? first : undefined;
  }

  // Entries from `ts` on (inclusive), in ts order, at most `limit` (0: all).
  entriesFrom(ts: Timestamp, limit = 0): Doc[] {
    const coll = this.coll();
    if (coll === undefined) return [];
    const out: Doc[] = [];
    for (const r of this.storage.scanRecordsFrom(coll, seekRecordId(this.storage, coll, ts))) {
      out.push(deserializeDocument(r.bytes));
      if (out.length === limit) break;
    }
    return out;
  }
}
