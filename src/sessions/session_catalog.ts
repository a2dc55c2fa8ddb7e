import { Binary, Long, MaxKey, MinKey, type Timestamp } from 'bson';
import { isNumber, isPlainObject, serializeDocument, toDouble, type Doc } from '../bson/values.js';
import { LocalWriter } from '../query/exec/local_collection.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { PreparedWrite } from '../storage/storage_transaction.js';
import type { LogicalClock } from './logical_clock.js';
import { priorExecution, statementResultToBSON, type SessionTxnState, type StatementResult } from './retryable_write.js';
import {
  absorbMigrated, beginTxnNumber, migratedStatements, olderHistoryFilter, opTime, recordStatements, recordTransactionState, sessionFromRecord,
  statementRan, withHistoryEntries, type CachedSession, type SessionWrite,
} from './session_catalog_decisions.js';
import { lsidDoc, sessionIdOf, sessionKey, type LogicalSessionId } from './session_id.js';
import { historyForRange, type MigratedHistory } from './session_migration.js';

// MongoDB's collections for retryable writes, on every shard: one record per session with its
// txnNumber (config.transactions, MongoDB's shape plus docshard's `ns` and `stmts`: what the first
// write command of that txnNumber did, kept in the record so the common retryable write, one
// command per txnNumber, costs one document write), what any later command of the same txnNumber
// did (docshard's config.transaction_history, where MongoDB follows the oplog), and the document
// the session's last findAndModify returned (config.image_collection).
export const TRANSACTIONS_NS = 'config.transactions';
export const TRANSACTION_HISTORY_NS = 'config.transaction_history';
export const IMAGE_COLLECTION_NS = 'config.image_collection';

// The sessions' retryable-write state (MongoDB's SessionCatalog and TransactionParticipant): kept
// in memory, read from the collections above the first time a session is seen after a start, and
// written to them in the write unit of the statements themselves, so no crash can separate a
// write from its record.
export class SessionCatalog {
  private readonly sessions = new Map<string, CachedSession>();
  private readonly recordKeys: RecordKeys = new Map();

  constructor(private readonly storage: StorageEngine, private readonly clock: LogicalClock) {}

  // Begins or continues retryable write `txnNumber` of the session, inside the write unit that
  // will run its statements. TransactionTooOld when the session has started a newer one.
  begin(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number, ns: string): RetryableWriteRun {
    const key = sessionKey(lsid);
    const known = this.sessions.get(key) ?? this.load(lsid);
    const begun = beginTxnNumber(known, txnNumber, lsid);
    if (begun.kind === 'current') return new RetryableWriteRun(this.storage, this.clock, this.recordKeyOf(key), unit, lsid, ns, known!);
    this.cache(key, known, begun.state);
    return new RetryableWriteRun(this.storage, this.clock, this.recordKeyOf(key), unit, lsid, ns, begun.state);
  }

  // Where the session's record write finds, and leaves, its record's `_id` index key.
  private recordKeyOf(session: string): RecordKeySlot {
    return { keys: this.recordKeys, session };
  }

  // Whether statement `stmtId` of retryable write `txnNumber` ran here: a router asks every shard
  // before it picks where a write without shard key goes, so a retry goes where the write ran
  // whichever document its filter now finds first. TransactionTooOld and
  // IncompleteTransactionHistory as for the write itself.
  statementExecuted(lsid: LogicalSessionId, txnNumber: number, stmtId: number): boolean {
    return statementRan(this.sessions.get(sessionKey(lsid)) ?? this.load(lsid), txnNumber, stmtId, lsid);
  }

  // The donor's part of a migration: the history entries of `ns` after `after` (in _id order, at
  // most `limit` read), each cut to the statements that go with the moving range (`inRange`), with
  // the session's findAndModify image when one of them needs it.
  // `after` is where the last batch stopped: the records are read first, then the spilled history.
  historyForMigration(ns: string, inRange: (key: Doc) => boolean, after: unknown, limit: number): { entries: MigratedHistory[]; last: unknown; done: boolean } {
    const from = isPlainObject(after) && (after.in === TRANSACTIONS_NS || after.in === TRANSACTION_HISTORY_NS) ? after : { in: TRANSACTIONS_NS };
    const source = from.in as string;
    const filter: Doc = from.id === undefined ? { ns } : { ns, _id: { $gt: from.id } };
    const read = [...prepareFind(this.storage, this.storage.getCollection(source), { filter, sort: { _id: 1 }, limit }).results].map((r) => r.doc);
    const entries: MigratedHistory[] = [];
    for (const doc of read) {
      const part = historyForRange(source === TRANSACTIONS_NS ? asHistoryEntry(doc) : doc, inRange);
      if (part === undefined) continue;
      const needsImage = part.stmts.some((st) => st.op === 'findAndModify' && st.image !== 'none');
      const image = needsImage ? this.imageOf(part.lsid, part.txnNum) : undefined;
      entries.push({ ...part, ...(image !== undefined ? { image } : {}) });
    }
    if (read.length === limit) return { entries, last: { in: source, id: read.at(-1)!._id }, done: false };
    if (source === TRANSACTIONS_NS) return { entries, last: { in: TRANSACTION_HISTORY_NS }, done: false };
    return { entries, last: undefined, done: true };
  }

  // The recipient's part: what a migration brought joins each session's state, in the write unit
  // the recipient answers the commit from. A session already on a newer txnNumber here keeps it.
  applyMigratedHistory(unit: WriteUnit, ns: string, migrationId: unknown, entries: readonly MigratedHistory[]): void {
    for (const h of entries) {
      const lsid = sessionIdOf(h.lsid);
      const key = sessionKey(lsid);
      const known = this.sessions.get(key) ?? this.load(lsid);
      const stmts = migratedStatements(known, h);
      if (stmts === undefined) continue;
      const { state, writes } = absorbMigrated(known, h, stmts, { session: lsidDoc(lsid), ts: this.clock.tick(), wallDate: new Date(this.clock.wallMs()) }, ns, migrationId);
      this.cache(key, known, state);
      applyWrites(this.storage, this.recordKeyOf(key), unit, writes);
    }
  }

  private imageOf(lsid: Doc, txnNum: number): Doc | undefined {
    const coll = this.storage.getCollection(IMAGE_COLLECTION_NS);
    const [found] = [...prepareFind(this.storage, coll, { filter: { _id: lsid }, limit: 1 }).results];
    return found !== undefined && isNumber(found.doc.txnNum) && toDouble(found.doc.txnNum) === txnNum ? found.doc : undefined;
  }

  // The txnNumber the session last used here, by a retryable write or a committed transaction,
  // and whether it was such a transaction; undefined for a session this node has no record of.
  lastTxnNumber(lsid: LogicalSessionId): { txnNum: number; committedTransaction: boolean; ranStatements: boolean } | undefined {
    const known = this.sessions.get(sessionKey(lsid)) ?? this.load(lsid);
    return known === undefined ? undefined : { txnNum: known.txnNum, committedTransaction: known.committedTransaction === true, ranStatements: known.executed.size > 0 || known.incompleteHistory };
  }

  // A multi-document transaction's commit, in the unit that applies its writes: the session's
  // record takes its txnNumber with MongoDB's `state: 'committed'`, so that a commit asked again
  // after a restart answers ok and older txnNumbers answer TransactionTooOld.
  recordTransactionCommit(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number): void {
    unit.sessionInfo = { lsid: lsidDoc(lsid), txnNumber, transaction: true };
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    this.recordState(unit, lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'committed' }, true);
  }

  // A transaction's prepare (the first phase of a two-phase commit): the session's record takes
  // its txnNumber with `state: 'prepared'`, the prepare's time and the writes the commit will
  // apply, in one unit, so that a restart finds it prepared (preparedTransactions). The unit's
  // commit time is the prepareTimestamp.
  recordTransactionPrepare(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number, writes: readonly PreparedWrite[]): Timestamp {
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    const preparedWrites = writes.map((x) => ({ ns: x.ns, id: x.id, existed: x.existed, ...(x.after === undefined ? {} : { after: new Binary(x.after) }) }));
    this.recordState(unit, lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'prepared', prepareTimestamp: ts, preparedWrites }, false);
    return ts;
  }

  // A prepared transaction's abort: the record says so, and holds its writes no longer.
  recordTransactionAbort(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number): void {
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    this.recordState(unit, lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'aborted' }, false);
  }

  // The transactions a crash left prepared, as their records hold them.
  preparedTransactions(): { lsid: LogicalSessionId; txnNumber: number; prepareTimestamp: Timestamp; writes: PreparedWrite[] }[] {
    const coll = this.storage.getCollection(TRANSACTIONS_NS);
    if (coll === undefined) return [];
    return [...prepareFind(this.storage, coll, { filter: { state: 'prepared' } }).results].map(({ doc }) => ({
      lsid: sessionIdOf(doc._id),
      txnNumber: toDouble(doc.txnNum as number),
      prepareTimestamp: doc.prepareTimestamp as Timestamp,
      writes: (doc.preparedWrites as Doc[]).map((x) => ({ ns: String(x.ns), id: x.id, existed: x.existed === true, after: x.after === undefined ? undefined : Buffer.from((x.after as Binary).buffer) })),
    }));
  }

  private recordState(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number, fields: Doc, committed: boolean): void {
    const key = sessionKey(lsid);
    const known = this.sessions.get(key) ?? this.load(lsid);
    const { state, writes } = recordTransactionState(known, lsidDoc(lsid), txnNumber, fields, committed);
    applyWrites(this.storage, this.recordKeyOf(key), unit, writes);
    this.cache(key, known, state);
  }

  // The session's new state, until the unit rolls back.
  private cache(key: string, known: CachedSession | undefined, state: CachedSession): void {
    this.sessions.set(key, state);
    this.storage.onRollback(() => {
      if (known === undefined) this.sessions.delete(key);
      else this.sessions.set(key, known);
    });
  }

  // Drops what memory holds of every session: a replica-set member that became primary reads the
  // records its applier wrote beneath this cache again, as each session is next seen.
  forgetAll(): void {
    this.sessions.clear();
    this.recordKeys.clear();
  }

  // Drops what memory holds of a session whose records the transaction reaper removed.
  forget(lsid: LogicalSessionId): void {
    this.sessions.delete(sessionKey(lsid));
    this.recordKeys.delete(sessionKey(lsid));
  }

  // What is on disk for the session: its record and the history of its txnNumber.
  private load(lsid: LogicalSessionId): CachedSession | undefined {
    const coll = this.storage.getCollection(TRANSACTIONS_NS);
    const [record] = [...prepareFind(this.storage, coll, { filter: { _id: lsidDoc(lsid) }, limit: 1 }).results];
    const fromRecord = sessionFromRecord(record?.doc);
    if (fromRecord === undefined) return undefined;
    const state = withHistoryEntries(fromRecord, historyOf(this.storage, lsid, fromRecord.txnNum));
    this.sessions.set(sessionKey(lsid), state);
    return state;
  }
}

// One write command's part in a retryable write: which of its statements ran before, and what the
// ones it runs now did, recorded in the command's write unit.
export class RetryableWriteRun {
  readonly retriedStmtIds: number[] = [];
  private readonly recorded: Doc[] = [];
  private image: { kind: 'preImage' | 'postImage'; doc: Doc } | undefined;
  // Runs in the write unit just before statements run now are recorded (never for a retry of
  // statements that all ran): where MongoDB's onPrimaryTransactionalWrite fail point fires. It may
  // throw, which aborts the unit.
  beforeRecording: (() => void) | undefined;

  constructor(
    private readonly storage: StorageEngine,
    private readonly clock: LogicalClock,
    private readonly recordKey: RecordKeySlot,
    private readonly unit: WriteUnit,
    private readonly lsid: LogicalSessionId,
    private readonly ns: string,
    private readonly state: CachedSession,
  ) {}

  // What statement `stmtId` did when it ran before; undefined when it is to run now.
  executed(stmtId: number): StatementResult | undefined {
    const prior = priorExecution(this.state as SessionTxnState, stmtId, this.lsid);
    if (prior !== undefined) this.retriedStmtIds.push(stmtId);
    return prior;
  }

  // `key`: the shard key of the document the statement wrote, when the collection is sharded, so
  // that a migration of its range can carry the statement's history with it.
  record(stmtId: number, result: StatementResult, written: { key?: Doc; image?: { kind: 'preImage' | 'postImage'; doc: Doc } } = {}): void {
    this.state.executed.set(stmtId, result);
    this.storage.onRollback(() => this.state.executed.delete(stmtId));
    this.recorded.push({ ...statementResultToBSON(stmtId, result), ...(written.key !== undefined ? { key: written.key } : {}) });
    if (written.image !== undefined) this.image = written.image;
  }

  // The document a retried findAndModify answers with: the image its first execution kept.
  storedImage(): Doc | null {
    const coll = this.storage.getCollection(IMAGE_COLLECTION_NS);
    const [found] = [...prepareFind(this.storage, coll, { filter: { _id: lsidDoc(this.lsid) }, limit: 1 }).results];
    if (found === undefined || !isNumber(found.doc.txnNum) || toDouble(found.doc.txnNum) !== this.state.txnNum) return null;
    return (found.doc.image as Doc | undefined) ?? null;
  }

  // Writes what the statements run now did, in the same write unit as their writes: in the record
  // for the txnNumber's first command (replacing the older txnNumber's, whose history goes), in a
  // history entry for any later one.
  finish(): void {
    if (this.recorded.length === 0) return;
    this.beforeRecording?.();
    // The time the unit's writes commit under, so the history orders as the commits do; an engine
    // without a clock (storage-level tests) leaves it to the catalog's.
    const ts = this.unit.commitTimestamp() ?? this.clock.tick();
    const ctx = { session: lsidDoc(this.lsid), ts, wallDate: new Date(this.clock.wallMs()) };
    const { writes, next } = recordStatements(this.state, ctx, this.ns, this.recorded, this.image);
    this.unit.sessionInfo = { lsid: ctx.session, txnNumber: this.state.txnNum, stmtIds: this.recorded.map((r) => r.stmtId as number) };
    applyWrites(this.storage, this.recordKey, this.unit, writes);
    const before = Object.fromEntries(Object.keys(next).map((k) => [k, this.state[k as keyof CachedSession]]));
    Object.assign(this.state, next);
    if (Object.keys(next).length > 0) this.storage.onRollback(() => Object.assign(this.state, before));
  }
}

// The `_id` index key of each session's record (by sessionKey), worked out from the lsid once per
// session: a session's retryable writes put its record again and again.
type RecordKeys = Map<string, Buffer>;
type RecordKeySlot = { keys: RecordKeys; session: string };

// The session's record is put whole by its _id from its bytes (WriteUnit.upsertById: one point
// read in the _id index by the key kept for the session, one of the old record for its size,
// nothing decoded, the index untouched): the retryable write's one extra document write, without
// the query, the replacement and the decoding that an update through the query layer would cost.
function applyWrites(storage: StorageEngine, record: RecordKeySlot, unit: WriteUnit, writes: readonly SessionWrite[]): void {
  const w = new LocalWriter(storage, unit);
  for (const write of writes) {
    switch (write.type) {
      case 'dropOlderHistory':
        w.delete(TRANSACTION_HISTORY_NS, olderHistoryFilter(write.session, write.txnNum));
        break;
      case 'putRecord': {
        const coll = storage.getCollection(TRANSACTIONS_NS) ?? storage.ensureCollection(TRANSACTIONS_NS).coll;
        const key = unit.upsertById(coll, write.session, serializeDocument(write.record), record.keys.get(record.session));
        if (key !== undefined) record.keys.set(record.session, key);
        break;
      }
      case 'setRecordFields':
        w.update(TRANSACTIONS_NS, { _id: write.session }, { $set: write.fields });
        break;
      case 'insertHistory':
        w.insert(TRANSACTION_HISTORY_NS, write.entry);
        break;
      case 'putImage':
        w.update(IMAGE_COLLECTION_NS, { _id: write.session }, write.image, { upsert: true });
        break;
    }
  }
}

// A record read as a history entry (its statements under the history's _id shape).
function asHistoryEntry(record: Doc): Doc {
  return { _id: { lsid: record._id, txnNum: record.txnNum }, ns: record.ns, stmts: record.stmts };
}

// The history entries of one txnNumber of a session, through the _id index.
function historyOf(storage: StorageEngine, lsid: LogicalSessionId, txnNum: number): Doc[] {
  const coll = storage.getCollection(TRANSACTION_HISTORY_NS);
  const session = lsidDoc(lsid);
  const txn = Long.fromNumber(txnNum);
  const min = { _id: { lsid: session, txnNum: txn, stmtId: new MinKey() } };
  const max = { _id: { lsid: session, txnNum: txn, stmtId: new MaxKey() } };
  return [...prepareFind(storage, coll, { filter: {}, hint: '_id_', min, max }).results].map((r) => r.doc);
}

