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

export type Translated = { ok: true; response: OplogFetchResponse } | { ok: false; error: MongoError; metadata: SourceMetadata };

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

// The oplog fetcher's batches, between the source's reply and the core's appendOplog effect: each
// batch becomes the core's oplogFetchResponse, and its full entries wait here, by optime, until
// the core says which to persist (exactly those it took).
export class FetchedEntries {
  private readonly byOpTime = new Map<string, Doc>();

  // `first`: the batch of a new find from `lastFetched`, whose first entry must be that one (the
  // source still holds our last entry) and is not ours to apply again; otherwise OplogStartMissing.
  // A malformed entry anywhere makes the whole batch refused, nothing of it kept.
  translate(docs: readonly unknown[], lastFetched: OpTime, first: boolean, metadata: SourceMetadata): Translated {
    const checked: Doc[] = [];
    for (const doc of docs) {
      try {
        checkOplogEntry(doc);
        coreTs(doc.ts);
      } catch (err) {
        return { ok: false, error: err as MongoError, metadata };
      }
      checked.push(doc);
    }
    let entries = checked;
    if (first) {
      const head = checked[0];
      if (head === undefined || !opTimeEquals(parseOpTime(head), lastFetched)) {
        return { ok: true, response: { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata } };
      }
      entries = checked.slice(1);
    }
    this.byOpTime.clear();
    const core = entries.map((doc) => {
      const e = coreEntry(doc);
      this.byOpTime.set(key(e), doc);
      return e;
    });
    return { ok: true, response: { kind: 'oplogFetchResponse', status: 'ok', entries: core, metadata } };
  }

  // Rollback's read of the source's oplog from the commit point: every entry checked (a malformed
  // one refuses them all), kept by optime, since the core appends those after the common point.
  keepAll(docs: readonly unknown[]): { ok: true; entries: OplogEntry[] } | { ok: false; error: MongoError } {
    for (const doc of docs) {
      try {
        checkOplogEntry(doc);
        coreTs(doc.ts);
      } catch (err) {
        return { ok: false, error: err as MongoError };
      }
    }
    this.byOpTime.clear();
    return {
      ok: true,
      entries: (docs as Doc[]).map((doc) => {
        const e = coreEntry(doc);
        this.byOpTime.set(key(e), doc);
        return e;
      }),
    };
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
