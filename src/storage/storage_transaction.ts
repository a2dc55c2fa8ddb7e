import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument } from '../bson/values.js';
import type { Collection, StorageEngine, WriteUnit } from './storage_engine.js';
import { writeConflict, type TransactionWriteSet } from './transaction_write_set.js';
import { isRecordSpace } from './key_layout.js';

// A multi-document transaction on this node's storage: statements read its snapshot with its own
// writes on top and write into its write set (transaction_write_set.ts); the commit checks that no
// commit after the snapshot changed what it wrote, then applies its documents in one write unit,
// under one commit timestamp, through the same write path as any write (indexes, statistics and op
// observers follow). Only the records are replayed, by _id: deletions, then replacements, then
// insertions, each document as the transaction left it; index entries are written anew.
export class StorageTransaction {
  private ended = false;

  constructor(private readonly engine: StorageEngine, readonly writeSet: TransactionWriteSet) {}

  get readTimestamp(): bigint {
    return this.writeSet.snapshot.at;
  }

  // Runs `fn` as one statement of the transaction: reads through its view, writes into its set.
  statement<T>(fn: () => T): T {
    if (this.ended) throw new MongoError(ErrorCodes.NoSuchTransaction, 'Transaction has ended');
    return this.engine.inTransaction(this, () => this.writeSet.statement(fn));
  }

  // The namespaces of the documents the transaction wrote.
  namespaces(): string[] {
    return [...new Set(this.documentChanges().map((c) => c.coll.ns))];
  }

  // Applies the writes with `alongside` (the session's record) in one unit; its commit time, or
  // undefined when the transaction wrote nothing (then `alongside` does not run). WriteConflict
  // when a commit after the snapshot changed what it wrote, and whatever `check` throws for a
  // document as the snapshot had it or as the transaction leaves it; the transaction then is over.
  commit(alongside: (unit: WriteUnit) => void, check: (ns: string, doc: Buffer) => void = () => undefined): Timestamp | undefined {
    const writes = this.settle(check);
    this.abort();
    if (writes.length === 0) return undefined;
    return applyPreparedWrites(this.engine, writes, alongside);
  }

  // The first phase of a two-phase commit: checks as the commit does, then keeps the writes, and
  // the keys they hold, until `commitPrepared` or `abort`. Nothing can take them from it from here
  // on: a write outside transactions no longer dooms it (StorageTransaction callers hold such
  // writes back while a transaction is prepared on their collection).
  prepare(check: (ns: string, doc: Buffer) => void = () => undefined): PreparedWrite[] {
    const writes = this.settle(check);
    this.writeSet.prepared = true;
    this.prepared = writes;
    return writes;
  }

  // Applies what `prepare` kept, at the commit time its coordinator chose.
  commitPrepared(at: Timestamp, alongside: (unit: WriteUnit) => void): void {
    const writes = this.prepared;
    if (writes === undefined) throw new Error('commitPrepared of a transaction that was not prepared');
    this.abort();
    applyPreparedWrites(this.engine, writes, alongside, at);
  }

  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.writeSet.release();
  }

  private prepared: PreparedWrite[] | undefined;

  private settle(check: (ns: string, doc: Buffer) => void): PreparedWrite[] {
    try {
      this.writeSet.validate();
      const changes = this.documentChanges();
      for (const c of changes) {
        if (c.before !== undefined) check(c.coll.ns, c.before);
        if (c.after !== undefined) check(c.coll.ns, c.after);
      }
      return changes.map((c) => ({ ns: c.coll.ns, id: c.id, existed: c.before !== undefined, after: c.after }));
    } catch (err) {
      this.abort();
      throw err;
    }
  }

  // Each document the transaction changed: as the snapshot had it and as the transaction leaves it.
  private documentChanges(): { coll: Collection; id: unknown; before: Buffer | undefined; after: Buffer | undefined }[] {
    const bySpace = new Map(this.engine.listCollections().map((c) => [c.space, c]));
    const out: { coll: Collection; id: unknown; before: Buffer | undefined; after: Buffer | undefined }[] = [];
    for (const { space, key, value } of this.writeSet.writes()) {
      const coll = bySpace.get(space);
      if (coll === undefined) {
        if (isRecordSpace(space)) throw writeConflict();
        continue;
      }
      const before = this.writeSet.snapshot.get(this.engine.kv.space(space), key);
      if (before === undefined && value === undefined) continue;
      out.push({ coll, id: deserializeDocument(before ?? value!)._id, before, after: value });
    }
    return out;
  }
}

// A document a transaction changed, as its commit applies it: `after` undefined removes it,
// otherwise it replaces the document with its _id when the snapshot had one (`existed`) and is
// inserted when not. What a prepared transaction persists, so that it commits after a restart.
export interface PreparedWrite {
  ns: string;
  id: unknown;
  existed: boolean;
  after: Buffer | undefined;
}

// Replays a transaction's documents in one write unit, with `alongside`: deletions, then
// replacements, then insertions. `at`: the commit time a two-phase commit chose.
export function applyPreparedWrites(engine: StorageEngine, writes: readonly PreparedWrite[], alongside: (unit: WriteUnit) => void, at?: Timestamp): Timestamp | undefined {
  // A collection the transaction created is there unless it was dropped since (a drop waits for
  // no prepared transaction); the documents need one all the same.
  const colls = new Map<string, Collection>();
  for (const { ns } of writes) if (!colls.has(ns)) colls.set(ns, engine.getCollection(ns) ?? engine.createCollection(ns));
  const coll = (ns: string): Collection => colls.get(ns)!;
  return engine.write((unit) => {
    if (at !== undefined) unit.commitAt(at);
    for (const w of writes) if (w.after === undefined) unit.removeById(coll(w.ns), w.id);
    for (const w of writes) if (w.after !== undefined && w.existed) unit.upsertBytes(coll(w.ns), w.after);
    for (const w of writes) if (w.after !== undefined && !w.existed) unit.insertBytes(coll(w.ns), w.after);
    alongside(unit);
    return unit.commitTimestamp();
  });
}
