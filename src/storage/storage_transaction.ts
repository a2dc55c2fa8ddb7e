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
    let changes: ReturnType<StorageTransaction['documentChanges']>;
    try {
      this.writeSet.validate();
      changes = this.documentChanges();
      for (const c of changes) {
        if (c.before !== undefined) check(c.coll.ns, c.before);
        if (c.after !== undefined) check(c.coll.ns, c.after);
      }
    } catch (err) {
      this.abort();
      throw err;
    }
    this.abort();
    if (changes.length === 0) return undefined;
    return this.engine.write((unit) => {
      for (const c of changes) if (c.after === undefined) unit.removeById(c.coll, c.id);
      for (const c of changes) if (c.after !== undefined && c.before !== undefined) unit.upsertBytes(c.coll, c.after);
      for (const c of changes) if (c.after !== undefined && c.before === undefined) unit.insertBytes(c.coll, c.after);
      alongside(unit);
      return unit.commitTimestamp();
    });
  }

  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.writeSet.release();
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
