import { Timestamp } from 'bson';
import type { MongoError } from '../base/errors.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { checkOplogEntry } from '../oplog/oplog_entry.js';
import type { OplogFetchResponse, SourceMetadata } from '../repl/messages.js';
import type { OplogEntry } from '../repl/oplog_entry.js';
import { opTimeEquals, type OpTime } from '../repl/op_time.js';
import { coreTs, parseOpTime } from './op_time_bson.js';

// What the core sees of an oplog entry: its optime and op; the document itself stays in LMDB (or,
// fetched and not yet applied, here).
export function coreEntry(doc: Doc): OplogEntry {
  return { ts: coreTs(doc.ts as Timestamp), t: Number(doc.t), op: doc.op as OplogEntry['op'], o: {} };
}

// A batch as the core sees it, with the full entries of the core's entries in the same order
// (`full[i]` is `response.entries[i]`'s), or why it was refused.
export type Translated = { ok: true; response: OplogFetchResponse; full: readonly Doc[] } | { ok: false; error: MongoError; metadata: SourceMetadata };

const key = (o: OpTime): string => `${o.t}:${o.ts}`;

// The source's metadata as MongoDB's oplog query replies carry it ($replData, $oplogQueryData).
export function sourceMetadataOf(reply: Doc): SourceMetadata {
  const repl = isPlainObject(reply.$replData) ? reply.$replData : {};
  const query = isPlainObject(reply.$oplogQueryData) ? reply.$oplogQueryData : {};
  return {
    term: Number(repl.term ?? -1),
    lastOpCommitted: parseOpTime(query.lastOpCommitted ?? repl.lastOpCommitted),
    lastOpApplied: parseOpTime(query.lastOpApplied),
    isPrimary: repl.isPrimary === true,
  };
}

// Every entry checked: a malformed one refuses them all.
function checkedEntries(docs: readonly unknown[]): { ok: true; docs: Doc[] } | { ok: false; error: MongoError } {
  const checked: Doc[] = [];
  for (const doc of docs) {
    try {
      checkOplogEntry(doc);
      coreTs(doc.ts);
    } catch (err) {
      return { ok: false, error: err as MongoError };
    }
    checked.push(doc);
  }
  return { ok: true, docs: checked };
}

// The oplog fetcher's batch as the core's oplogFetchResponse. `first`: the batch of a new find
// from `lastFetched`, whose first entry must be that one (the source still holds our last entry)
// and is not ours to apply again; otherwise OplogStartMissing.
export function translateBatch(docs: readonly unknown[], lastFetched: OpTime, first: boolean, metadata: SourceMetadata): Translated {
  const checked = checkedEntries(docs);
  if (!checked.ok) return { ok: false, error: checked.error, metadata };
  let entries = checked.docs;
  if (first) {
    const head = entries[0];
    if (head === undefined || !opTimeEquals(parseOpTime(head), lastFetched)) {
      return { ok: true, response: { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata }, full: [] };
    }
    entries = entries.slice(1);
  }
  return { ok: true, response: { kind: 'oplogFetchResponse', status: 'ok', entries: entries.map(coreEntry), metadata }, full: entries };
}

// Rollback's read of the source's oplog from the commit point, every entry checked: the core
// appends those after the common point.
export function rollbackEntries(docs: readonly unknown[]): { ok: true; entries: OplogEntry[]; full: readonly Doc[] } | { ok: false; error: MongoError } {
  const checked = checkedEntries(docs);
  return checked.ok ? { ok: true, entries: checked.docs.map(coreEntry), full: checked.docs } : checked;
}

// The full entries of the one answer the core is taking in, by optime, for the appendOplog it
// makes in that same step. They are handed over only for that step (`during`): an answer read
// from the network waits for its step in a promise, and another answer that arrived meanwhile (a
// fetch the core gave up on and asked again) must not stand in for it, or an entry would be
// appended without its document.
export class FetchedEntries {
  private readonly byOpTime = new Map<string, Doc>();
  // Whether the core is taking in an answer: what it appends then came from the answer, but for
  // a no-op of its own.
  private handing = false;

  get handingOver(): boolean {
    return this.handing;
  }

  during<T>(full: readonly Doc[], fn: () => T): T {
    this.byOpTime.clear();
    for (const doc of full) this.byOpTime.set(key(parseOpTime(doc)), doc);
    this.handing = true;
    try {
      return fn();
    } finally {
      this.handing = false;
      this.byOpTime.clear();
    }
  }

  // The full entries of what the core appends; an entry not fetched (the core's own no-op) is
  // undefined, for the driver to write itself.
  take(entries: readonly OplogEntry[]): (Doc | undefined)[] {
    return entries.map((e) => {
      const doc = this.byOpTime.get(key(e));
      this.byOpTime.delete(key(e));
      return doc;
    });
  }

  clear(): void {
    this.byOpTime.clear();
  }
}
