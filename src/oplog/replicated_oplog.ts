import { Timestamp } from 'bson';
import { deserializeDocument, type Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { DEFAULT_OPLOG_SIZE_MB, ensureOplogCollection, TruncateBound } from './oplog_collection.js';
import { noopEntry, OPLOG_NS } from './oplog_entry.js';
import { OplogApplier } from './oplog_applier.js';
import { OplogReads, seekRecordId } from './oplog_reads.js';
import { OpObserverImpl } from './op_observer_impl.js';

export interface OplogOptions {
  // The node's current term, written into each entry's `t`.
  term: () => number;
  // Throws (NotWritablePrimary) when the node may not take writes: called as each unit produces
  // its entry, inside its transaction.
  checkCanWrite: () => void;
  // The node's cluster time: moved past every entry applied or appended at a given time; its wall
  // clock gives the entries' `wall`.
  clock: { advance(ts: Timestamp): void; wallMs(): number };
  // `--oplogSize`, in MB (DEFAULT_OPLOG_SIZE_MB, 1024, when not given).
  oplogSizeMB?: number;
  // A document's key on a sharded collection: its shard key fields and _id, as its entries name it
  // (undefined: the collection is not sharded here, `{_id}` is its key).
  documentKey?: (ns: string, doc: Doc) => Doc | undefined;
}

// A replica-set member's oplog, what the replication driver holds: the writer is on from
// `enableOplog` (a node started with --replSet) until `disable`; a node that never enables it
// writes no oplog and runs no code of this folder.
export class ReplicatedOplog {
  readonly reads: OplogReads;
  private readonly bound = new TruncateBound();
  private readonly writer: OpObserverImpl;
  private readonly applier: OplogApplier;

  constructor(private readonly storage: StorageEngine, private readonly options: OplogOptions) {
    this.writer = new OpObserverImpl(storage, { term: options.term, checkCanWrite: options.checkCanWrite, wallMs: () => options.clock.wallMs(), documentKey: options.documentKey });
    this.applier = new OplogApplier(storage, this.writer, options.clock);
    this.reads = new OplogReads(storage);
  }

  enable(): void {
    if (this.storage.unitObserver !== undefined) throw new Error('the oplog writer is enabled already');
    this.bound.guard(ensureOplogCollection(this.storage, this.options.oplogSizeMB ?? DEFAULT_OPLOG_SIZE_MB));
    this.storage.observers.push(this.writer);
    this.storage.unitObserver = this.writer;
  }

  disable(): void {
    const at = this.storage.observers.indexOf(this.writer);
    if (at >= 0) this.storage.observers.splice(at, 1);
    if (this.storage.unitObserver === this.writer) this.storage.unitObserver = undefined;
  }

  // Capping may remove entries at or before `ts` (the majority commit point) and no others.
  setTruncateBound(ts: Timestamp | undefined): void {
    this.bound.set(ts);
  }

  // A secondary's batch (oplog_applier.ts).
  applyOplogEntries(entries: readonly unknown[]): void {
    this.applier.applyOplogEntries(entries);
  }

  // The same in one LMDB commit (oplog_applier.ts): what the replication driver applies a fetched
  // batch with.
  applyOplogEntriesGrouped(entries: readonly unknown[]): Promise<void> {
    return this.applier.applyOplogEntriesGrouped(entries);
  }

  // Runs `fn` logging nothing and checking nothing: initial sync's clone writes what the source
  // holds, as the applier writes what it fetched.
  unlogged<T>(fn: () => T): T {
    return this.writer.unlogged(fn);
  }

  // Rollback: removes the entries after `ts`, in one unit; returns them, newest first.
  // A member that must sync again from scratch (its store cannot be rolled back): every database
  // but local dropped and the oplog emptied, nothing logged; initial sync follows.
  clearForResync(): void {
    this.writer.unlogged(() => {
      for (const db of this.storage.listDatabases()) if (db !== 'local') this.storage.dropDatabase(db);
    });
    this.truncateAfter(new Timestamp({ t: 0, i: 0 }));
  }

  truncateAfter(ts: Timestamp): Doc[] {
    const coll = this.storage.getCollection(OPLOG_NS);
    if (coll === undefined) return [];
    return this.writer.unlogged(() => this.storage.write((unit) => {
      const removed: Doc[] = [];
      const from = seekRecordId(this.storage, coll, ts);
      for (const r of [...this.storage.scanRecordsFrom(coll, from)].reverse()) {
        const entry = deserializeDocument(r.bytes);
        if ((entry.ts as Timestamp).lessThanOrEqual(ts)) continue;
        unit.remove(coll, r.recordId, {}, r.bytes.length);
        removed.push(entry);
      }
      return removed;
    }));
  }

  // The "new primary" no-op (`{msg: 'new primary'}`) or any other: `{op: 'n', ns: '', o}` at `ts`.
  appendNoop(o: Doc, ts: Timestamp, t: number): void {
    this.options.clock.advance(ts);
    const entry = noopEntry(o, ts, t, new Date(this.options.clock.wallMs()));
    this.writer.unlogged(() => this.storage.write((unit) => {
      unit.commitAt(ts);
      this.writer.append(unit.kv, entry, ts);
    }));
  }
}

// Turns the oplog on for `storage` (creating local.oplog.rs if missing): from now on every write
// unit and catalog change outside the local database writes its entry.
export function enableOplog(storage: StorageEngine, options: OplogOptions): ReplicatedOplog {
  const oplog = new ReplicatedOplog(storage, options);
  oplog.enable();
  return oplog;
}
