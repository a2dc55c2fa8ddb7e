import { BSON, Timestamp, UUID, type Binary } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import { indexableCollation, parseCollation } from '../bson/collation.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { splitNamespace, type CollectionEntry, type IndexEntry } from './catalog_entry.js';
import { IndexAccess } from './index_access.js';
import { catalogKey, catalogRangeEnd, catalogRangeStart, clockSecondsKey, nextIdKey, recordIdOf, recordKey, recordSpace } from './key_layout.js';
import { KvStore, type KvReader, type KvWriter } from './lmdb/kv_store.js';
import { CollectionStats } from './collection_stats.js';
import { cappedLimits, type CappedLimits } from './capped.js';
import { upgradeLayout } from './layout_upgrade.js';
import { decodedDocument, type OperationSessionInfo, type UpdateHow, type OpObserver, type StoredDocument, type UnitContext, type UnitObserver } from './op_observer.js';
import { asBuffer, LazyDocument } from '../bson/raw_document.js';
import { CommitTimestamps, currentLastOp, withLastOp, type CommitClock } from './commit_timestamps.js';
import { VersionHistory, type HistoryLimits } from './version_history.js';
import { SnapshotView } from './snapshot_view.js';
import { TransactionWriteSet } from './transaction_write_set.js';
import { StorageTransaction } from './storage_transaction.js';
import { restoreToTimestamp, type RestoreOptions, type RestoreResult } from './restore_to_timestamp.js';

// What writeWaitingForTransactions throws when it gives way, for its caller to run it again.
export { WriteWaitsForTransaction } from './lmdb/kv_store.js';

export interface StorageOptions {
  compilePartialFilter(filter: Doc): (doc: Doc) => boolean;
  // Stamps each write unit that changes a document with its commit's cluster time
  // (commit_timestamps.ts), and keeps the versions those commits replace (version_history.ts).
  clock?: CommitClock;
  // How long and how much history to keep (minSnapshotHistoryWindowInSeconds, 300 s).
  history?: HistoryLimits;
}

const DEFAULT_HISTORY: HistoryLimits = { windowMs: 300_000, maxBytes: 256 * 1024 * 1024 };

export function timestampKey(ts: Timestamp): bigint {
  return (BigInt(ts.t) << 32n) | BigInt(ts.i);
}

// A collection as the layers above use it: its catalog entry, its indexes, and its record-id
// allocator. Rebuilt from the catalog on open.
export class Collection {
  nextRecordId = 1;
  indexes: IndexAccess[] = [];
  readonly space: string;
  // Whether a capped collection over its bounds may remove its oldest record (its bytes): when
  // not, the bounds are exceeded instead (the oplog keeps what is newer than its truncate bound).
  mayEvict: ((oldest: Buffer) => boolean) | undefined;

  private pathsFor: IndexAccess[] | undefined;
  private paths: string[] | null = null;

  constructor(public entry: CollectionEntry) {
    this.space = recordSpace(entry.id);
  }

  // Read from the options each time: collMod may replace them.
  get capped(): CappedLimits | undefined {
    return cappedLimits(this.entry.options);
  }

  get ns(): string {
    return this.entry.ns;
  }

  index(name: string): IndexAccess | undefined {
    return this.indexes.find((i) => i.name === name);
  }

  // The record holding this _id: one point read in the _id index (keyed as the index keys it),
  // one in the records.
  findById(reader: KvReader, id: unknown): { recordId: number; bytes: Buffer } | undefined {
    const idIndex = this.index('_id_');
    if (idIndex === undefined) throw new Error(`${this.ns} has no _id index`);
    const recordId = idIndex.lookupUnique(reader, idIndex.keysFor({ _id: id }).keys[0]!);
    const bytes = recordId === undefined ? undefined : reader.space(this.space).get(recordKey(recordId));
    return recordId === undefined || bytes === undefined ? undefined : { recordId, bytes };
  }

  // The field paths that indexing a document reads (every index's pathsRead); null when some
  // index might read any field. Worked out again whenever the index list is replaced.
  pathsIndexed(): readonly string[] | null {
    if (this.pathsFor !== this.indexes) {
      const all = this.indexes.map((i) => i.pathsRead);
      this.paths = all.includes(null) ? null : [...new Set((all as string[][]).flat())];
      this.pathsFor = this.indexes;
    }
    return this.paths;
  }
}

interface GroupMember {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

export interface RecordRef {
  recordId: number;
  bytes: Buffer;
}

export class StorageEngine {
  private readonly collections = new Map<string, Collection>();
  readonly observers: OpObserver[] = [];
  // The oplog writer on a replica-set member (op_observer.ts); undefined elsewhere.
  unitObserver: UnitObserver | undefined;
  readonly stats: CollectionStats;
  readonly timestamps: CommitTimestamps;
  private readonly history: VersionHistory | undefined;
  // The latest second a commit timestamp was taken in, as stored with that commit.
  private clockSeconds: number;

  private constructor(readonly kv: KvStore, private readonly options: StorageOptions) {
    upgradeLayout(kv);
    this.stats = new CollectionStats(kv);
    this.timestamps = new CommitTimestamps(options.clock);
    this.clockSeconds = kv.get(clockSecondsKey)?.readUInt32BE(0) ?? 0;
    const { clock } = options;
    if (clock !== undefined) {
      // A node restarted within the second of its last commits (or after its wall clock went back)
      // would otherwise take times it gave before: the clock starts past every stored commit's.
      if (this.clockSeconds > 0) clock.advance(new Timestamp({ t: this.clockSeconds + 1, i: 0 }));
      this.history = new VersionHistory(timestampKey(clock.now()), options.history ?? DEFAULT_HISTORY, () => clock.wallMs());
      kv.keepHistory(this.history);
    }
    // Read whole before loading: opening each collection's spaces starts lmdb-js read transactions anew.
    for (const { value } of [...kv.range(catalogRangeStart, catalogRangeEnd)]) {
      this.loadCollection(BSON.deserialize(value, { promoteValues: false }) as unknown as CollectionEntry);
    }
  }

  static open(dbpath: string, options: StorageOptions): StorageEngine {
    return new StorageEngine(KvStore.open(dbpath), options);
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  flushed(): Promise<void> {
    return this.kv.flushed();
  }

  private loadCollection(raw: CollectionEntry): Collection {
    const entry = normalizeEntry(raw);
    const coll = new Collection(entry);
    coll.indexes = entry.indexes.map((i) => this.indexAccess(i));
    for (const { key } of this.kv.space(coll.space).range(EMPTY, EMPTY, { reverse: true, limit: 1 })) {
      coll.nextRecordId = recordIdOf(key) + 1;
    }
    this.collections.set(entry.ns, coll);
    return coll;
  }

  private indexAccess(entry: IndexEntry): IndexAccess {
    const partial = entry.spec.partialFilterExpression as Doc | undefined;
    return new IndexAccess(entry, partial ? this.options.compilePartialFilter(partial) : undefined);
  }

  getCollection(ns: string): Collection | undefined {
    return this.collections.get(ns);
  }

  listCollections(db?: string): Collection[] {
    const all = [...this.collections.values()];
    return db === undefined ? all : all.filter((c) => splitNamespace(c.ns).db === db);
  }

  listDatabases(): string[] {
    return [...new Set([...this.collections.keys()].map((ns) => splitNamespace(ns).db))].sort();
  }

  private allocateId(w: KvWriter): number {
    const current = w.get(nextIdKey);
    const id = current ? current.readUInt32BE(0) : 1;
    const next = Buffer.allocUnsafe(4);
    next.writeUInt32BE(id + 1, 0);
    w.put(nextIdKey, next);
    return id;
  }

  private persistEntry(w: KvWriter, entry: CollectionEntry): void {
    w.put(catalogKey(entry.ns), Buffer.from(BSON.serialize(entry)));
  }

  // Creates the collection with its `_id` index. Callers that want "create if missing" check first.
  // `uuid` keeps the identity of a collection copied from another node (movePrimary).
  createCollection(ns: string, options: Doc = {}, uuid: Binary = new UUID()): Collection {
    if (this.collections.has(ns)) throw new MongoError(ErrorCodes.NamespaceExists, `Collection ${ns} already exists.`);
    return this.catalogWrite((w) => this.createCollectionIn(w, ns, options, uuid));
  }

  private createCollectionIn(w: KvWriter, ns: string, options: Doc, uuid: Binary): Collection {
    const id = this.allocateId(w);
    // The _id index takes the collection's default collation, as in MongoDB: _id 'a' and 'A' are
    // one key under {locale: 'en', strength: 2}.
    const idSpec: Doc = { v: 2, key: { _id: 1 }, name: '_id_' };
    if (options.collation !== undefined && indexableCollation(parseCollation(options.collation)!)) idSpec.collation = options.collation;
    // `autoIndexId: false` (MongoDB's, for the local database's capped collections: the oplog's
    // entries have no _id) leaves the collection without an _id index.
    const idIndexes: IndexEntry[] = options.autoIndexId === false ? [] : [{ id: this.allocateId(w), spec: idSpec, multikey: false }];
    const entry: CollectionEntry = { ns, id, uuid, options, indexes: idIndexes };
    this.persistEntry(w, entry);
    const coll = new Collection(entry);
    coll.indexes = idIndexes.map((i) => this.indexAccess(i));
    this.collections.set(ns, coll);
    this.onRollback(() => this.collections.delete(ns));
    for (const o of this.observers) o.onCreateCollection?.(w, ns, uuid, options, idIndexes[0]?.spec);
    return coll;
  }

  // `options` apply only when the collection is created here.
  ensureCollection(ns: string, options?: Doc): { coll: Collection; created: boolean } {
    const existing = this.collections.get(ns);
    if (existing) return { coll: existing, created: false };
    return { coll: this.createCollection(ns, options), created: true };
  }

  dropCollection(ns: string): boolean {
    const coll = this.collections.get(ns);
    if (!coll) return false;
    this.catalogWrite((w) => {
      const numRecords = this.stats.get(coll.entry.id).count;
      w.dropSpace(coll.space);
      for (const index of coll.indexes) index.dropAll(w);
      w.remove(catalogKey(ns));
      this.stats.drop(w, coll.entry.id);
      this.collections.delete(ns);
      this.onRollback(() => this.collections.set(ns, coll));
      for (const o of this.observers) o.onDropCollection?.(w, ns, coll.entry.uuid, numRecords);
    });
    return true;
  }

  // Drops every collection of `db`, each in its own unit, then tells the observers the database
  // is gone (MongoDB's oplog: a drop per collection, then dropDatabase).
  dropDatabase(db: string): void {
    for (const coll of this.listCollections(db)) this.dropCollection(coll.ns);
    if (this.unitObserver === undefined) return;
    this.catalogWrite((w) => {
      for (const o of this.observers) o.onDropDatabase?.(w, db);
    });
  }

  renameCollection(from: string, to: string): void {
    const coll = this.collections.get(from);
    if (!coll) throw new MongoError(ErrorCodes.NamespaceNotFound, `Source collection ${from} does not exist`);
    this.catalogWrite((w) => {
      w.remove(catalogKey(from));
      this.replaceEntry(coll, { ...coll.entry, ns: to });
      this.persistEntry(w, coll.entry);
      this.collections.delete(from);
      this.collections.set(to, coll);
      this.onRollback(() => {
        this.collections.delete(to);
        this.collections.set(from, coll);
      });
      for (const o of this.observers) o.onRenameCollection?.(w, from, to, coll.entry.uuid);
    });
  }

  // Replaces a collection's catalog entry and index list inside a transaction, restored if it aborts.
  private replaceEntry(coll: Collection, entry: CollectionEntry, indexes: IndexAccess[] = coll.indexes): void {
    const before = { entry: coll.entry, indexes: coll.indexes };
    coll.entry = entry;
    coll.indexes = indexes;
    this.onRollback(() => {
      coll.entry = before.entry;
      coll.indexes = before.indexes;
    });
  }

  // Adds indexes and builds them over the existing documents in one atomic unit, so a crash
  // never leaves a half-built index in the catalog.
  createIndexes(coll: Collection, specs: Doc[]): void {
    this.catalogWrite((w) => {
      const added: IndexAccess[] = [];
      for (const spec of specs) {
        const entry: IndexEntry = { id: this.allocateId(w), spec, multikey: false };
        const access = this.indexAccess(entry);
        for (const { key, value } of w.space(coll.space).range(EMPTY, EMPTY)) {
          const recordId = recordIdOf(key);
          const { keys, values, multikey } = access.keysFor(deserializeDocument(value));
          keys.forEach((k, i) => access.checkUnique(w, coll.ns, k, values[i]!, recordId));
          access.insertEntries(w, keys, recordId);
          if (multikey) entry.multikey = true;
        }
        added.push(access);
      }
      this.replaceEntry(coll, { ...coll.entry, indexes: [...coll.entry.indexes, ...added.map((a) => a.entry)] }, [...coll.indexes, ...added]);
      this.persistEntry(w, coll.entry);
      for (const o of this.observers) for (const a of added) o.onCreateIndex?.(w, coll.ns, coll.entry.uuid, a.entry.spec);
    });
  }

  // collMod: the collection's options (its validator, for one) replaced in one unit.
  setCollectionOptions(coll: Collection, options: Doc): void {
    this.catalogWrite((w) => {
      const before = coll.entry.options;
      this.replaceEntry(coll, { ...coll.entry, options });
      this.persistEntry(w, coll.entry);
      for (const o of this.observers) o.onCollMod?.(w, coll.ns, coll.entry.uuid, { options: { before, after: options } });
    });
  }

  // collMod of an index's options (expireAfterSeconds, hidden): the spec replaced in one unit. The
  // key pattern, name and partial filter stay, so the entries already written stay right.
  replaceIndexSpec(coll: Collection, name: string, spec: Doc): void {
    const index = coll.index(name);
    if (!index) throw new MongoError(ErrorCodes.IndexNotFound, `index not found with name [${name}]`);
    const kept = ['key', 'name', 'partialFilterExpression'] as const;
    for (const field of kept) {
      if (compareValues(index.entry.spec[field] ?? null, spec[field] ?? null) !== 0) {
        throw new Error(`replaceIndexSpec may not change '${field}' of ${coll.ns} index ${name}`);
      }
    }
    this.catalogWrite((w) => {
      const entry: IndexEntry = { ...index.entry, spec };
      const replaced = this.indexAccess(entry);
      this.replaceEntry(
        coll,
        { ...coll.entry, indexes: coll.entry.indexes.map((i) => (i.id === entry.id ? entry : i)) },
        coll.indexes.map((i) => (i === index ? replaced : i)),
      );
      this.persistEntry(w, coll.entry);
      for (const o of this.observers) o.onCollMod?.(w, coll.ns, coll.entry.uuid, { index: { before: index.entry.spec, after: spec } });
    });
  }

  dropIndex(coll: Collection, name: string): void {
    const index = coll.index(name);
    if (!index) throw new MongoError(ErrorCodes.IndexNotFound, `index not found with name [${name}]`);
    this.catalogWrite((w) => {
      index.dropAll(w);
      this.replaceEntry(coll, { ...coll.entry, indexes: coll.entry.indexes.filter((i) => i.id !== index.entry.id) }, coll.indexes.filter((i) => i !== index));
      this.persistEntry(w, coll.entry);
      for (const o of this.observers) o.onDropIndex?.(w, coll.ns, coll.entry.uuid, index.entry.spec);
    });
  }

  getRecord(coll: Collection, recordId: number): Buffer | undefined {
    return this.kv.space(coll.space).get(recordKey(recordId));
  }

  // The record as a view valid until the next read of the store (KvSpaceReader.peek).
  peekRecord(coll: Collection, recordId: number): Buffer | undefined {
    return this.kv.space(coll.space).peek(recordKey(recordId));
  }

  *scanRecords(coll: Collection, reverse = false): Iterable<RecordRef> {
    for (const { key, value } of this.kv.space(coll.space).range(EMPTY, EMPTY, { reverse })) {
      yield { recordId: recordIdOf(key), bytes: value };
    }
  }

  // Records with ids from `recordId` on, in id order: what a tailable cursor has not read yet.
  *scanRecordsFrom(coll: Collection, recordId: number): Iterable<RecordRef> {
    for (const { key, value } of this.kv.space(coll.space).range(recordKey(recordId), EMPTY)) {
      yield { recordId: recordIdOf(key), bytes: value };
    }
  }

  // Runs `fn` as one atomic write unit: all its document writes, index entries, statistics and
  // op-observer effects commit together, or none do.
  write<T>(fn: (unit: WriteUnit) => T): T {
    const txn = this.activeTransaction;
    if (txn !== undefined) return fn(new WriteUnit(this, txn.writeSet.writer, true));
    return this.kv.writeSync((w) => this.runUnit(new WriteUnit(this, w), fn));
  }

  private runUnit<T>(unit: WriteUnit, fn: (unit: WriteUnit) => T): T {
    const observer = this.unitObserver;
    if (observer === undefined) {
      const result = fn(unit);
      unit.finish();
      return result;
    }
    observer.begin(unit);
    try {
      const result = fn(unit);
      observer.beforeCommit(unit.kv, unit);
      unit.finish();
      return result;
    } finally {
      observer.end();
    }
  }

  // A catalog change's unit: with a unit observer it is a unit like any (the oplog gives it a
  // commit time and an entry); without, a plain transaction, unstamped.
  private catalogWrite<T>(fn: (w: KvWriter) => T): T {
    return this.kv.writeSync((w) => (this.unitObserver === undefined ? fn(w) : this.runUnit(new WriteUnit(this, w), () => fn(w))));
  }

  // `write`, giving way to open transactions whose keys it touches (KvStore.waitingForTransactions):
  // the unit aborts with WriteWaitsForTransaction, for its caller to run it again.
  writeWaitingForTransactions<T>(fn: (unit: WriteUnit) => T): T {
    return this.activeTransaction !== undefined ? this.write(fn) : this.kv.waitingForTransactions(() => this.write(fn));
  }

  // A write whose commit does not hold up this thread (lmdb-js's write thread commits it; see
  // KvStore.writeAsync): for bulk writes whose caller has other work meanwhile.
  // A read after such a unit's commit timestamp waits for the commit (committedThrough).
  writeAsync<T>(fn: (unit: WriteUnit) => T): Promise<T> {
    let settle: (() => void) | undefined;
    const commit = this.kv.writeAsync((w) => {
      const unit = new WriteUnit(this, w);
      const result = this.runUnit(unit, fn);
      if (unit.timestamp !== undefined) settle = this.timestamps.commitLater(unit.timestamp);
      return result;
    });
    return commit.finally(() => settle?.());
  }

  // The store as of cluster time `at`, for reads until `release()`: SnapshotTooOld when the history
  // kept does not reach back to it. The caller makes sure every commit at or before `at` has landed
  // (committedThrough) and that none is still to come (the clock is past it).
  snapshotAt(at: Timestamp): SnapshotView {
    const history = this.history;
    if (history === undefined) throw new Error('snapshot reads need an engine with a clock');
    const key = timestampKey(at);
    if (key < history.coveredAfter) {
      throw new MongoError(ErrorCodes.SnapshotTooOld, `Read timestamp ${timestampString(at)} is older than the oldest available timestamp.`);
    }
    return new SnapshotView(history, key, history.pin(key));
  }

  // Puts the store back to its state at commit time `at` from the version history, in one
  // transaction, or answers why it cannot, having changed nothing (restore_to_timestamp.ts).
  // The caller makes sure nothing else runs on the node meanwhile (a member in ROLLBACK).
  restoreTo(at: Timestamp, options: RestoreOptions = {}): RestoreResult {
    return restoreToTimestamp(this.restoreTarget(), timestampKey(at), options, false);
  }

  // Whether restoreTo(at) would restore, without writing anything.
  canRestoreTo(at: Timestamp, options: RestoreOptions = {}): RestoreResult {
    return restoreToTimestamp(this.restoreTarget(), timestampKey(at), options, true);
  }

  private restoreTarget() {
    return {
      kv: this.kv,
      history: this.history,
      snapshotAt: (key: bigint) => this.snapshotAt(new Timestamp({ t: Number(key >> 32n), i: Number(key & 0xffffffffn) })),
      reloadCatalog: (w: KvWriter) => this.reloadCatalog(w),
      forgetCachedStats: () => this.stats.forgetAll(),
    };
  }

  // After a restore: the collections, their entries and index lists (multikey flags included) as
  // the catalog now holds them. A collection that stays keeps its object (the oplog's capping
  // guard hangs on it) and its record-id allocator: ids are not given out again, so a tailable
  // cursor past the undone records still sees the next ones.
  private reloadCatalog(w: KvWriter): void {
    const before = new Map([...this.collections].map(([ns, coll]) => [ns, { coll, entry: coll.entry, indexes: coll.indexes }]));
    const byId = new Map([...this.collections.values()].map((c) => [c.entry.id, c]));
    this.collections.clear();
    for (const { value } of [...w.range(catalogRangeStart, catalogRangeEnd)]) {
      const entry = normalizeEntry(BSON.deserialize(value, { promoteValues: false }) as unknown as CollectionEntry);
      const coll = byId.get(entry.id);
      if (coll === undefined) {
        this.loadCollection(entry);
        continue;
      }
      coll.entry = entry;
      coll.indexes = entry.indexes.map((i) => this.indexAccess(i));
      this.collections.set(entry.ns, coll);
    }
    this.onRollback(() => {
      this.collections.clear();
      for (const [ns, { coll, entry, indexes }] of before) {
        coll.entry = entry;
        coll.indexes = indexes;
        this.collections.set(ns, coll);
      }
    });
  }

  // A multi-document transaction reading at `at` (storage_transaction.ts).
  beginTransaction(at: Timestamp): StorageTransaction {
    return new StorageTransaction(this, new TransactionWriteSet(this.kv, this.snapshotAt(at)));
  }

  private activeTransaction: StorageTransaction | undefined;

  // While `fn` runs, reads go through the transaction's view and write units write into its set.
  inTransaction<T>(txn: StorageTransaction, fn: () => T): T {
    const previous = this.activeTransaction;
    this.activeTransaction = txn;
    try {
      return this.kv.withView(txn.writeSet, fn);
    } finally {
      this.activeTransaction = previous;
    }
  }

  // Settles once every write unit stamped at or before `ts` has committed; undefined when all
  // have (every synchronous commit has, by the time anything else runs).
  committedThrough(ts: Timestamp): Promise<void> | undefined {
    return this.timestamps.committedThrough(ts);
  }

  // In-memory changes (catalog map, collection entries, cached counts) register their undo here:
  // KvStore runs it if the transaction that made them aborts.
  onRollback(undoChange: () => void): void {
    this.kv.onRollback(undoChange);
  }

  // A commit stamped in a later second than any stored records that second with it, once per
  // second: what a restart starts its clock past.
  recordClockSeconds(w: KvWriter, seconds: number): void {
    if (seconds <= this.clockSeconds) return;
    const previous = this.clockSeconds;
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(seconds, 0);
    w.put(clockSecondsKey, b);
    this.clockSeconds = seconds;
    this.onRollback(() => { this.clockSeconds = previous; });
  }

  // Makes every commit so far durable, those made by writeAsync included.
  sync(): Promise<void> {
    return this.kv.sync();
  }

  private readonly group: GroupMember[] = [];

  // Runs `fn` (whose writes go through `write`, each unit still all-or-nothing) together with the
  // other grouped writes that arrive before the event loop's next check phase, and commits them
  // all at once: concurrent insert batches share one LMDB commit instead of paying one each. The
  // promise settles after that commit, so an acknowledgement still means the data file has it.
  // The operation's LastOp goes with `fn`, which runs after the operation's own code returned.
  writeGrouped<T>(fn: () => T): Promise<T> {
    // A transaction's statement writes into its set now, while the statement runs.
    if (this.activeTransaction !== undefined) {
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const lastOp = currentLastOp();
    const run = lastOp === undefined ? fn : (): T => withLastOp(lastOp, fn);
    return new Promise<T>((resolve, reject) => {
      if (this.group.length === 0) setImmediate(() => this.commitGroup());
      this.group.push({ fn: run, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  private commitGroup(): void {
    const members = this.group.splice(0);
    const outcomes = members.map(() => ({ ok: false, value: undefined as unknown }));
    const runs = members.map((m, i) => () => {
      try {
        outcomes[i] = { ok: true, value: m.fn() };
      } catch (err) {
        outcomes[i] = { ok: false, value: err };
      }
    });
    try {
      // Alone, a member commits its own units as write() always does.
      if (runs.length === 1) runs[0]!();
      else this.kv.writeGroup(runs);
    } catch (err) {
      for (const m of members) m.reject(err);
      return;
    }
    members.forEach((m, i) => (outcomes[i]!.ok ? m.resolve(outcomes[i]!.value) : m.reject(outcomes[i]!.value)));
  }

  markMultikey(w: KvWriter, coll: Collection, index: IndexAccess): void {
    index.entry.multikey = true;
    this.onRollback(() => (index.entry.multikey = false));
    this.persistEntry(w, coll.entry);
  }
}


const EMPTY = Buffer.alloc(0);

function timestampString(ts: Timestamp): string {
  return `Timestamp(${ts.t}, ${ts.i})`;
}

function normalizeEntry(raw: CollectionEntry): CollectionEntry {
  const plain = deserializeDocument(BSON.serialize(raw)) as unknown as CollectionEntry;
  return { ...plain, id: Number(plain.id), indexes: plain.indexes.map((i) => ({ ...i, id: Number(i.id) })) };
}

// The fields of stored bytes that the collection's indexes read (the whole document when a
// partial filter may read any field).
function indexedFields(coll: Collection, bytes: Buffer): Doc {
  const paths = coll.pathsIndexed();
  const stored = new LazyDocument(bytes);
  return paths === null ? stored.whole() : stored.fields(paths);
}

// The single write path: every insert, update and delete of a document goes through here, keeps
// the indexes and statistics in step, and tells the op observers.
export class WriteUnit implements UnitContext {
  private readonly statDeltas = new Map<number, { count: number; size: number }>();
  private stamp: Timestamp | undefined;
  // Set by the session layer for a retryable write or a transaction's commit: the oplog entry
  // carries it.
  sessionInfo: OperationSessionInfo | undefined;
  // Set by a chunk migration's writes (the recipient's clone and catch-up, the range deleter):
  // their oplog entries say `fromMigrate`, and change streams show no event for them.
  fromMigrate = false;

  // `transactional`: a statement of a multi-document transaction, writing into its write set; the
  // op observers, statistics and commit time wait for the commit, which writes it all again.
  constructor(private readonly engine: StorageEngine, readonly kv: KvWriter, private readonly transactional = false) {}

  // The cluster time this unit was stamped with: undefined before its first document change, or
  // on an engine without a clock.
  get timestamp(): Timestamp | undefined {
    return this.stamp;
  }

  // The cluster time this unit commits under, taken now if it has none yet: at its first document
  // change, or by a caller that writes it into a document (a retryable write's history).
  commitTimestamp(): Timestamp | undefined {
    if (this.transactional) return undefined;
    if (this.stamp === undefined) {
      this.stamp = this.engine.timestamps.reserve();
      if (this.stamp !== undefined) this.kv.stamp(timestampKey(this.stamp));
    }
    return this.stamp;
  }

  // Commits under `ts`, a time chosen elsewhere (a prepared transaction's commitTimestamp, which
  // the node's clock is already past): before the unit's first change.
  commitAt(ts: Timestamp): void {
    if (this.stamp !== undefined) throw new Error('a write unit takes its commit time before its first change');
    this.stamp = ts;
    this.kv.stamp(timestampKey(ts));
    const op = currentLastOp();
    if (op !== undefined) op.ts = ts;
  }

  // Its oplog entry's time, later than the commit time (a prepared transaction's commit logged
  // behind newer entries): a rollback to a time between the two undoes the unit.
  durableAt(ts: Timestamp): void {
    this.kv.durableAt(timestampKey(ts));
  }

  private delta(coll: Collection, count: number, size: number): void {
    const d = this.statDeltas.get(coll.entry.id) ?? { count: 0, size: 0 };
    d.count += count;
    d.size += size;
    this.statDeltas.set(coll.entry.id, d);
  }

  // What this unit changed so far in the collection's document count and data size.
  changeOf(coll: Collection): { readonly count: number; readonly size: number } {
    return this.statDeltas.get(coll.entry.id) ?? { count: 0, size: 0 };
  }

  insert(coll: Collection, doc: Doc, bytes: Buffer = serializeDocument(doc)): number {
    return this.insertStored(coll, decodedDocument(doc, bytes));
  }

  // Inserts a document from its BSON bytes as they are (`_id` first, as every stored document
  // has it), decoding only the fields its indexes read. Called as
  //   unit.insertBytes(coll: Collection, bytes: Uint8Array): number   (the new record id)
  // by clone paths that receive documents another node stored (migration recipient, movePrimary).
  insertBytes(coll: Collection, bytes: Uint8Array): number {
    return this.insertStored(coll, new LazyDocument(asBuffer(bytes)));
  }

  // Claims the document's unique index entries first (each claim is the uniqueness check) and
  // writes everything else afterwards; a failed claim takes back the claims before it, so a failing
  // document leaves nothing behind while earlier documents of the same unit stay written.
  insertStored(coll: Collection, stored: StoredDocument): number {
    const paths = coll.pathsIndexed();
    const doc = paths === null ? stored.whole() : stored.fields(paths);
    const { bytes } = stored;
    const capped = coll.capped;
    // Checked first: evicting everything for a document that cannot fit would lose them all.
    if (capped && this.transactional) {
      throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, `Collection '${coll.ns}' is a capped collection. Writes in transactions are not allowed on capped collections.`);
    }
    if (capped && bytes.length > capped.size) throw new MongoError(ErrorCodes.BadValue, 'object to insert exceeds cappedMaxSize');
    const recordId = coll.nextRecordId;
    const perIndex = coll.indexes.map((index) => index.keysFor(doc));
    this.claimUniqueEntries(coll, perIndex, recordId);
    this.commitTimestamp();
    coll.nextRecordId += 1;
    // Record ids only grow, so a refused append means the allocator is behind what is stored.
    if (!this.kv.space(coll.space).append(recordKey(recordId), bytes)) throw new Error(`record id ${recordId} of ${coll.ns} is already taken`);
    coll.indexes.forEach((index, i) => {
      const { keys, multikey } = perIndex[i]!;
      if (!index.unique) index.insertEntries(this.kv, keys, recordId);
      if (multikey && !index.entry.multikey) this.engine.markMultikey(this.kv, coll, index);
    });
    this.delta(coll, 1, bytes.length);
    if (!this.transactional) for (const o of this.engine.observers) o.onInsert?.(this.kv, coll.ns, stored);
    if (capped) this.evictOldest(coll, capped, recordId);
    return recordId;
  }

  // Removes a capped collection's oldest documents until it is within its bounds again.
  private evictOldest(coll: Collection, limits: CappedLimits, inserted: number): void {
    const committed = this.engine.stats.get(coll.entry.id);
    const pending = this.statDeltas.get(coll.entry.id)!;
    const over = (): boolean => {
      const count = committed.count + pending.count;
      return committed.size + pending.size > limits.size || (limits.max !== undefined && count > limits.max);
    };
    while (over()) {
      let oldest: { recordId: number; bytes: Buffer } | undefined;
      for (const { key, value } of this.kv.space(coll.space).range(EMPTY, EMPTY, { limit: 1 })) {
        oldest = { recordId: recordIdOf(key), bytes: value };
      }
      if (oldest === undefined || oldest.recordId === inserted) return;
      if (coll.mayEvict !== undefined && !coll.mayEvict(oldest.bytes)) return;
      this.remove(coll, oldest.recordId, indexedFields(coll, oldest.bytes), oldest.bytes.length);
    }
  }

  private claimUniqueEntries(coll: Collection, perIndex: { keys: Buffer[]; values: unknown[][] }[], recordId: number): void {
    const claimed: { index: IndexAccess; key: Buffer }[] = [];
    try {
      coll.indexes.forEach((index, i) => {
        if (!index.unique) return;
        const { keys, values } = perIndex[i]!;
        keys.forEach((key, k) => {
          index.claimUnique(this.kv, coll.ns, key, values[k]!, recordId);
          claimed.push({ index, key });
        });
      });
    } catch (err) {
      for (const { index, key } of claimed) index.removeEntries(this.kv, [key], recordId);
      throw err;
    }
  }

  update(coll: Collection, recordId: number, before: Doc, beforeSize: number, after: Doc, bytes: Buffer = serializeDocument(after), how?: UpdateHow): void {
    const changes = coll.indexes.map((index) => {
      const old = index.keysFor(before);
      const neu = index.keysFor(after);
      const oldSet = new Set(old.keys.map((k) => k.toString('hex')));
      const newSet = new Set(neu.keys.map((k) => k.toString('hex')));
      const removed = old.keys.filter((k) => !newSet.has(k.toString('hex')));
      const addedIdx = neu.keys.map((k, i) => [k, i] as const).filter(([k]) => !oldSet.has(k.toString('hex')));
      return { index, removed, added: addedIdx.map(([k]) => k), addedValues: addedIdx.map(([, i]) => neu.values[i]!), multikey: neu.multikey };
    });
    for (const { index, added, addedValues } of changes) {
      added.forEach((k, i) => index.checkUnique(this.kv, coll.ns, k, addedValues[i]!, recordId));
    }
    this.commitTimestamp();
    this.kv.space(coll.space).put(recordKey(recordId), bytes);
    for (const { index, removed, added, multikey } of changes) {
      index.removeEntries(this.kv, removed, recordId);
      index.insertEntries(this.kv, added, recordId);
      if (multikey && !index.entry.multikey) this.engine.markMultikey(this.kv, coll, index);
    }
    this.delta(coll, 0, bytes.length - beforeSize);
    if (!this.transactional) for (const o of this.engine.observers) o.onUpdate?.(this.kv, coll.ns, before, after, bytes, how);
  }

  // Removes the document with this _id, if any, decoding only the fields its indexes read; true
  // when there was one. For paths that hold documents as bytes (the migration recipient's mods).
  removeById(coll: Collection, id: unknown): boolean {
    const found = coll.findById(this.kv, id);
    if (found === undefined) return false;
    this.remove(coll, found.recordId, indexedFields(coll, found.bytes), found.bytes.length);
    return true;
  }

  // Replaces the document with the same _id by these bytes, or inserts them when there is none.
  // Only the fields the indexes read are decoded, on both sides; index entries whose keys did not
  // change are left alone. The observers get those fields as `before` and `after`.
  upsertBytes(coll: Collection, bytes: Uint8Array): void {
    const buffer = asBuffer(bytes);
    const after = indexedFields(coll, buffer);
    const found = coll.findById(this.kv, after._id);
    if (found === undefined) this.insertStored(coll, new LazyDocument(buffer));
    else this.update(coll, found.recordId, indexedFields(coll, found.bytes), found.bytes.length, after, buffer, { beforeBytes: found.bytes });
  }

  // upsertBytes for a collection whose one index is `_id` (the session catalog's records), by an
  // `_id` the caller holds decoded (the one in `bytes`) and, once it has it, that `_id`'s index
  // key (returned, to be handed back): neither document is decoded, and a replacement leaves the
  // index alone, its key unchanged. The observers get `{_id}` as `before` and `after`. Any other
  // collection, or a unit of a transaction, takes upsertBytes' way.
  upsertById(coll: Collection, id: unknown, bytes: Uint8Array, idKey?: Buffer): Buffer | undefined {
    const idIndex = coll.indexes.length === 1 && !this.transactional && coll.capped === undefined ? coll.index('_id_') : undefined;
    if (idIndex === undefined) {
      this.upsertBytes(coll, bytes);
      return undefined;
    }
    const key = idKey ?? idIndex.keysFor({ _id: id }).keys[0]!;
    const buffer = asBuffer(bytes);
    const recordId = idIndex.lookupUnique(this.kv, key);
    const old = recordId === undefined ? undefined : this.kv.space(coll.space).get(recordKey(recordId));
    if (recordId === undefined || old === undefined) {
      this.insertStored(coll, new LazyDocument(buffer));
      return key;
    }
    this.commitTimestamp();
    this.kv.space(coll.space).put(recordKey(recordId), buffer);
    this.delta(coll, 0, buffer.length - old.length);
    const fields = { _id: id };
    for (const o of this.engine.observers) o.onUpdate?.(this.kv, coll.ns, fields, fields, buffer, { beforeBytes: old });
    return key;
  }

  // `before`: the document, or at least the fields `coll.pathsIndexed()` names.
  remove(coll: Collection, recordId: number, before: Doc, beforeSize: number): void {
    this.commitTimestamp();
    this.kv.space(coll.space).remove(recordKey(recordId));
    for (const index of coll.indexes) index.removeEntries(this.kv, index.keysFor(before).keys, recordId);
    this.delta(coll, -1, -beforeSize);
    if (!this.transactional) for (const o of this.engine.observers) o.onDelete?.(this.kv, coll.ns, before);
  }

  finish(): void {
    if (this.stamp !== undefined) this.engine.recordClockSeconds(this.kv, this.stamp.t);
    for (const [id, d] of this.statDeltas) {
      // A same-size replacement (a session's record, a counter) leaves the statistics as they were:
      // not writing them spares the commit a page.
      if (d.count === 0 && d.size === 0) continue;
      this.engine.stats.apply(this.kv, id, d.count, d.size);
      this.engine.onRollback(() => this.engine.stats.forget(id));
    }
  }
}
