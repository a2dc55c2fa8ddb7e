import type { Binary, Timestamp } from 'bson';
import { compareValues } from '../bson/compare.js';
import { LazyDocument } from '../bson/raw_document.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { splitNamespace } from '../storage/catalog_entry.js';
import type { KvWriter, OpObserver, StoredDocument, UnitContext, UnitObserver, UpdateHow } from '../storage/op_observer.js';
import { describeUpdate } from './update_description.js';
import { timestampKey, WriteUnit, type StorageEngine } from '../storage/storage_engine.js';
import { currentLastOp } from '../storage/commit_timestamps.js';
import { NULL_OP_TIME, OPLOG_NS, commandNs, unitEntry, type InnerOp } from './oplog_entry.js';
import { OplogReads } from './oplog_reads.js';

export interface OplogWriterOptions {
  // The node's current term (the replication coordinator's).
  term: () => number;
  // Called as a unit produces its entry, inside its transaction: throws (NotWritablePrimary) when
  // the node may not write, which aborts the unit, whatever the command checked before it awaited.
  checkCanWrite: () => void;
  wallMs: () => number;
  // A document's key when its collection is sharded (shard key fields and _id), as MongoDB's
  // entries carry it: an insert's o2, an update's o2, a delete's o. Undefined: `{_id}`.
  documentKey?: (ns: string, doc: Doc) => Doc | undefined;
}

interface Frame {
  unit: UnitContext;
  ops: InnerOp[];
  // The session's record as the unit found it: its last write's optime is the entry's prevOpTime.
  sessionRecordBefore: Doc | undefined;
}

const TRANSACTIONS_NS = 'config.transactions';
const PREV_OP_TIME_FIELDS = ['txnNum', 'lastWriteOpTime'];

// MongoDB's OpObserverImpl: turns every write unit and catalog change into one oplog entry written
// into local.oplog.rs in the same LMDB transaction, at the unit's commit time (a catalog change
// takes one for it). The changes of a unit nested in one that already has its time (a collection
// an insert's unit creates after its first write) go into that unit's entry; a nested unit whose
// enclosing one has no time yet logs its own entry first, so entries stay in time order.
// Nothing in the local database is logged.
export class OpObserverImpl implements OpObserver, UnitObserver {
  private readonly frames: Frame[] = [];
  private suppressed = 0;
  private readonly reads: OplogReads;
  // The time of the newest entry written, at least (one a rollback truncated or an aborted unit
  // wrote stays): undefined until the oplog's last entry is first read.
  private newest: Timestamp | undefined;

  constructor(private readonly storage: StorageEngine, private readonly options: OplogWriterOptions) {
    this.reads = new OplogReads(storage);
  }

  // Runs `fn` logging nothing: the applier writes the entries it applies itself.
  unlogged<T>(fn: () => T): T {
    this.suppressed += 1;
    try {
      return fn();
    } finally {
      this.suppressed -= 1;
    }
  }

  begin(unit: UnitContext): void {
    this.frames.push({ unit, ops: [], sessionRecordBefore: undefined });
  }

  end(): void {
    this.frames.pop();
  }

  beforeCommit(w: KvWriter, unit: UnitContext): void {
    const frame = this.frames.at(-1)!;
    if (frame.ops.length === 0) return;
    const parent = this.frames.at(-2);
    if (parent !== undefined && parent.unit.timestamp !== undefined) {
      parent.ops.push(...frame.ops);
      parent.sessionRecordBefore ??= frame.sessionRecordBefore;
      return;
    }
    this.options.checkCanWrite();
    const ts = this.entryTime(unit);
    // An entry behind its unit's commit time: a rollback to before the entry undoes the unit.
    if (!ts.equals(unit.commitTimestamp()!)) w.durableAt(timestampKey(ts));
    const before = frame.sessionRecordBefore;
    const session = unit.sessionInfo;
    const prevOpTime = session !== undefined && before !== undefined && Number(before.txnNum) === session.txnNumber && before.lastWriteOpTime !== undefined ? (before.lastWriteOpTime as Doc) : NULL_OP_TIME;
    const wall = new Date(this.options.wallMs());
    // MongoDB logs each index of a createIndexes on its own; the unit's later ones take later times.
    if (frame.ops.every((op) => op.op === 'c' && op.o.createIndexes !== undefined)) {
      frame.ops.forEach((op, i) => {
        const at = i === 0 ? ts : this.storage.timestamps.reserve()!;
        this.append(w, unitEntry([op], at, this.options.term(), wall, undefined, prevOpTime), at);
      });
      return;
    }
    this.append(w, withCommitTimestamp(unitEntry(frame.ops, ts, this.options.term(), wall, session, prevOpTime), unit.commitTimestamp()!, ts), ts);
  }

  // The unit's own commit time, unless the oplog is already past it: a prepared transaction commits
  // at the time its coordinator chose, which may be older than entries written since (the
  // coordinator's decision among them). Its entry then takes a time of its own, after them, as
  // MongoDB logs such a commit: a secondary fetches the entries after the last one it has, and an
  // entry written behind them would never reach it.
  private entryTime(unit: UnitContext): Timestamp {
    const ts = unit.commitTimestamp();
    if (ts === undefined) throw new Error('the oplog needs an engine with a clock');
    this.newest ??= this.reads.lastOpTime()?.ts;
    return this.newest !== undefined && ts.lessThanOrEqual(this.newest) ? this.storage.timestamps.reserve()! : ts;
  }

  // Writes `entry` into the oplog at `ts`, within the transaction of `w`.
  append(w: KvWriter, entry: Doc, ts: Timestamp): void {
    const oplog = this.storage.getCollection(OPLOG_NS);
    if (oplog === undefined) throw new Error(`${OPLOG_NS} is missing`);
    const unit = new WriteUnit(this.storage, w);
    unit.commitAt(ts);
    unit.insert(oplog, entry);
    unit.finish();
    if (this.newest === undefined || this.newest.lessThan(ts)) this.newest = ts;
    // The command that wrote it waits for its write concern on this optime.
    const lastOp = currentLastOp();
    if (lastOp !== undefined) lastOp.term = Number(entry.t);
  }

  private log(db: string, op: InnerOp): void {
    if (this.suppressed > 0 || db === 'local') return;
    const frame = this.frames.at(-1);
    if (frame === undefined) throw new Error(`a change of ${op.ns} outside a write unit cannot be logged`);
    frame.ops.push(frame.unit.fromMigrate && op.op !== 'c' ? { ...op, fromMigrate: true } : op);
  }

  private uuidOf(ns: string): Binary | undefined {
    return this.storage.getCollection(ns)?.entry.uuid;
  }

  private crud(ns: string, op: Omit<InnerOp, 'ns' | 'ui'>): InnerOp {
    const ui = this.uuidOf(ns);
    return { op: op.op, ns, ...(ui !== undefined ? { ui } : {}), o: op.o, ...(op.o2 !== undefined ? { o2: op.o2 } : {}) };
  }

  onInsert(_w: KvWriter, ns: string, doc: StoredDocument): void {
    if (this.suppressed > 0 || ns.startsWith('local.')) return;
    const o = deserializeDocument(doc.bytes);
    const key = this.options.documentKey?.(ns, o);
    this.log(splitNamespace(ns).db, this.crud(ns, { op: 'i', o, ...(key !== undefined ? { o2: key } : {}) }));
  }

  // Logged as the document the update produced (applying it twice gives the same document) and,
  // unless it replaced the document, with what it changed (updateDescription), which change
  // streams report: computed here, where the document before is at hand, so that it does not
  // depend on the version history still holding that document when the stream reads the entry.
  onUpdate(_w: KvWriter, ns: string, before: Doc, after: Doc, bytes: Buffer, how?: UpdateHow): void {
    if (this.suppressed > 0 || ns.startsWith('local.')) return;
    // A record put from its bytes (the session catalog's) comes with only its _id decoded: the
    // fields prevOpTime needs are read from the old bytes.
    if (ns === TRANSACTIONS_NS && this.frames.length > 0) this.frames.at(-1)!.sessionRecordBefore ??= how?.beforeBytes === undefined ? before : new LazyDocument(how.beforeBytes).fields(PREV_OP_TIME_FIELDS);
    const post = deserializeDocument(bytes);
    const op = this.crud(ns, { op: 'u', o: post, o2: this.options.documentKey?.(ns, post) ?? { _id: after._id } });
    if (how?.replacement !== true && !ns.startsWith('config.')) {
      op.updateDescription = describeUpdate(how?.beforeBytes === undefined ? before : deserializeDocument(how.beforeBytes), post);
    }
    this.log(splitNamespace(ns).db, op);
  }

  onDelete(_w: KvWriter, ns: string, before: Doc): void {
    if (this.suppressed > 0 || ns.startsWith('local.')) return;
    this.log(splitNamespace(ns).db, this.crud(ns, { op: 'd', o: this.options.documentKey?.(ns, before) ?? { _id: before._id } }));
  }

  private command(ns: string, ui: Binary | undefined, o: Doc, o2?: Doc): void {
    const { db } = splitNamespace(ns);
    this.log(db, { op: 'c', ns: commandNs(db), ...(ui !== undefined ? { ui } : {}), o, ...(o2 !== undefined ? { o2 } : {}) });
  }

  onCreateCollection(_w: KvWriter, ns: string, uuid: Binary, options: Doc, idIndex: Doc | undefined): void {
    this.command(ns, uuid, { create: splitNamespace(ns).coll, ...options, ...(idIndex !== undefined ? { idIndex } : {}) });
  }

  onDropCollection(_w: KvWriter, ns: string, uuid: Binary, numRecords: number): void {
    this.command(ns, uuid, { drop: splitNamespace(ns).coll }, { numRecords });
  }

  onRenameCollection(_w: KvWriter, from: string, to: string, uuid: Binary): void {
    // Leaving or entering the local database is a drop or a create elsewhere; docshard's rename
    // stays within what MongoDB allows, so only a rename outside local is logged.
    if (splitNamespace(to).db === 'local') return;
    this.command(from, uuid, { renameCollection: from, to, stayTemp: false, dropTarget: false });
  }

  onCreateIndex(_w: KvWriter, ns: string, uuid: Binary, spec: Doc): void {
    this.command(ns, uuid, { createIndexes: splitNamespace(ns).coll, ...spec });
  }

  onDropIndex(_w: KvWriter, ns: string, uuid: Binary, spec: Doc): void {
    this.command(ns, uuid, { dropIndexes: splitNamespace(ns).coll, index: spec.name }, spec);
  }

  // MongoDB's collMod entry: the options that changed (o2: the options before), or the index's.
  onCollMod(_w: KvWriter, ns: string, uuid: Binary, change: { options: { before: Doc; after: Doc } } | { index: { before: Doc; after: Doc } }): void {
    const coll = splitNamespace(ns).coll;
    if ('options' in change) {
      const { before, after } = change.options;
      const changed = Object.fromEntries(Object.entries(after).filter(([k, v]) => before[k] === undefined || compareValues(before[k], v) !== 0));
      this.command(ns, uuid, { collMod: coll, ...changed }, { collectionOptions_old: before });
      return;
    }
    const { before, after } = change.index;
    const index: Doc = { name: after.name };
    if (after.expireAfterSeconds !== undefined && after.expireAfterSeconds !== before.expireAfterSeconds) index.expireAfterSeconds = after.expireAfterSeconds;
    if ((after.hidden === true) !== (before.hidden === true)) index.hidden = after.hidden === true;
    this.command(ns, uuid, { collMod: coll, index });
  }

  onDropDatabase(_w: KvWriter, db: string): void {
    if (db === 'local') return;
    this.log(db, { op: 'c', ns: commandNs(db), o: { dropDatabase: 1 } });
  }
}

// A prepared transaction's commit logged behind later entries (entryTime) names the time its
// writes were committed at, so that a secondary's history (and a new primary's after a failover)
// has them where the primary's has: a snapshot read between the two times sees the transaction
// whole on every member, not one shard's half of it.
function withCommitTimestamp(entry: Doc, committedAt: Timestamp, ts: Timestamp): Doc {
  if (!committedAt.equals(ts)) entry.commitTimestamp = committedAt;
  return entry;
}
