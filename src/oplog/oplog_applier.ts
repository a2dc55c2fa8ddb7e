import type { Binary, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { splitNamespace } from '../storage/catalog_entry.js';
import type { Collection, StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import { checkOplogEntry, type InnerOp } from './oplog_entry.js';
import type { OpObserverImpl } from './op_observer_impl.js';
import { OplogReads } from './oplog_reads.js';

// MongoDB's OplogApplier, for a secondary: each fetched entry is checked, then applied in a write
// unit of its own committed at the entry's own ts, together with the entry itself, written
// verbatim into this node's oplog (the writer logs nothing of what it applies). Applying is
// idempotent, as MongoDB's secondaries apply: an insert of an _id that is there replaces it, an
// update of a missing document inserts its full post-image, a delete of a missing one does
// nothing, and catalog changes already made (a collection created, an index built) or already
// undone (a collection dropped) are left as they are. Collections are found by `ui` where the
// entry has one, so entries written before a rename reach the renamed collection.
export class OplogApplier {
  constructor(
    private readonly storage: StorageEngine,
    private readonly writer: OpObserverImpl,
    private readonly clock: { advance(ts: Timestamp): void },
  ) {
    this.reads = new OplogReads(storage);
  }

  private readonly reads: OplogReads;

  // Stops at the first entry that is malformed or fails to apply (a MongoError), having applied
  // everything before it and nothing of it.
  applyOplogEntries(entries: readonly unknown[]): void {
    for (const entry of entries) {
      checkOplogEntry(entry);
      this.applyOne(entry);
    }
  }

  // A fetched batch in one LMDB commit (StorageEngine.writeGrouped: each entry still its own unit
  // at its own ts), which a secondary's lag depends on. Every entry is checked before any is
  // applied: a malformed batch applies nothing. An entry that fails to apply stops the rest.
  async applyOplogEntriesGrouped(entries: readonly unknown[]): Promise<void> {
    for (const entry of entries) checkOplogEntry(entry);
    let failed = false;
    const applied = (entries as readonly (Doc & { ts: Timestamp })[]).map((entry) => this.storage.writeGrouped(() => {
      if (failed) return;
      try {
        this.applyOne(entry);
      } catch (err) {
        failed = true;
        throw err;
      }
    }));
    const outcomes = await Promise.allSettled(applied);
    const failure = outcomes.find((o) => o.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }

  private applyOne(entry: Doc & { ts: Timestamp }): void {
    this.clock.advance(entry.ts);
    this.writer.unlogged(() => this.storage.write((unit) => {
      // A prepared transaction's commit logged behind later entries: its writes at their time,
      // undone by a rollback to before the entry.
      const commitTimestamp = entry.commitTimestamp as Timestamp | undefined;
      unit.commitAt(commitTimestamp ?? entry.ts);
      if (commitTimestamp !== undefined) unit.durableAt(entry.ts);
      this.applyOp(unit, entry as unknown as InnerOp);
      // An entry applied again (a batch retried after a crash) is in the oplog already.
      if (this.reads.entryAt(entry.ts) === undefined) this.writer.append(unit.kv, entry, entry.ts);
    }));
  }

  private applyOp(unit: WriteUnit, op: InnerOp): void {
    switch (op.op) {
      case 'n':
        return;
      case 'i':
        unit.upsertBytes(this.collection(op), serializeDocument(op.o));
        return;
      case 'u':
        unit.upsertBytes(this.collection(op), serializeDocument(op.o._id === undefined ? { _id: op.o2!._id, ...op.o } : op.o));
        return;
      case 'd':
        unit.removeById(this.collection(op), op.o._id);
        return;
      case 'c':
        this.applyCommand(unit, op);
        return;
    }
  }

  private byUuid(ui: Binary | undefined): Collection | undefined {
    if (ui === undefined) return undefined;
    return this.storage.listCollections().find((c) => Buffer.compare(c.entry.uuid.buffer, ui.buffer) === 0);
  }

  private find(ns: string, ui: Binary | undefined): Collection | undefined {
    return ui === undefined ? this.storage.getCollection(ns) : this.byUuid(ui);
  }

  private collection(op: InnerOp): Collection {
    const coll = this.find(op.ns, op.ui);
    if (coll === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `cannot apply an '${op.op}' oplog operation to ${op.ns}${op.ui === undefined ? '' : ` (UUID ${op.ui.toString('hex')})`}: no such collection`);
    return coll;
  }

  private applyCommand(unit: WriteUnit, op: InnerOp): void {
    const { db } = splitNamespace(op.ns);
    const o = op.o;
    const name = Object.keys(o)[0]!;
    const target = (coll: unknown): string => `${db}.${String(coll)}`;
    switch (name) {
      case 'applyOps':
        for (const inner of o.applyOps as InnerOp[]) this.applyOp(unit, inner);
        return;
      case 'create': {
        const ns = target(o.create);
        if (this.byUuid(op.ui) !== undefined || this.storage.getCollection(ns) !== undefined) return;
        const { create: _c, idIndex: _i, ...options } = o;
        if (op.ui === undefined) this.storage.createCollection(ns, options);
        else this.storage.createCollection(ns, options, op.ui);
        return;
      }
      case 'drop': {
        const coll = this.find(target(o.drop), op.ui);
        if (coll !== undefined) this.storage.dropCollection(coll.ns);
        return;
      }
      case 'renameCollection': {
        const coll = this.find(String(o.renameCollection), op.ui);
        const to = String(o.to);
        if (coll === undefined || coll.ns === to) return;
        if (this.storage.getCollection(to) !== undefined) this.storage.dropCollection(to);
        this.storage.renameCollection(coll.ns, to);
        return;
      }
      case 'createIndexes': {
        const coll = this.collection({ ...op, ns: target(o.createIndexes) });
        const { createIndexes: _c, ...spec } = o;
        const existing = coll.index(String(spec.name));
        if (existing === undefined) this.storage.createIndexes(coll, [spec]);
        // The same index with other options is the index a later collMod changed: applied again,
        // the entries after this one change it the same way.
        else if (compareValues(existing.entry.spec.key, spec.key) !== 0) {
          throw new MongoError(ErrorCodes.IndexKeySpecsConflict, `cannot apply createIndexes of ${coll.ns}: an index named ${String(spec.name)} exists with another key`);
        }
        return;
      }
      case 'dropIndexes': {
        const coll = this.find(target(o.dropIndexes), op.ui);
        if (coll !== undefined && coll.index(String(o.index)) !== undefined) this.storage.dropIndex(coll, String(o.index));
        return;
      }
      case 'collMod':
        this.collMod(this.collection({ ...op, ns: target(o.collMod) }), o);
        return;
      case 'dropDatabase':
        this.storage.dropDatabase(db);
        return;
    }
  }

  private collMod(coll: Collection, o: Doc): void {
    const { collMod: _c, index, ...options } = o;
    if (Object.keys(options).length > 0) this.storage.setCollectionOptions(coll, { ...coll.entry.options, ...options });
    if (index === undefined) return;
    const mod = index as Doc;
    const current = coll.index(String(mod.name));
    if (current === undefined) throw new MongoError(ErrorCodes.IndexNotFound, `cannot apply collMod of ${coll.ns}: no index named ${String(mod.name)}`);
    const spec: Doc = { ...current.entry.spec };
    if (mod.expireAfterSeconds !== undefined) spec.expireAfterSeconds = mod.expireAfterSeconds;
    if (mod.hidden === true) spec.hidden = true;
    else if (mod.hidden === false) delete spec.hidden;
    if (compareValues(spec, current.entry.spec) !== 0) this.storage.replaceIndexSpec(coll, current.name, spec);
  }
}
