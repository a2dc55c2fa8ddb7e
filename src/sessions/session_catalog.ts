import { Binary, Long, MaxKey, MinKey, type Timestamp } from 'bson';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { LocalWriter } from '../query/exec/local_collection.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { PreparedWrite } from '../storage/storage_transaction.js';
import type { LogicalClock } from './logical_clock.js';
import {
  checkTxnNumber, priorExecution, statementResultFromBSON, statementResultToBSON,
  type SessionTxnState, type StatementResult,
} from './retryable_write.js';
import { describeSession, lsidDoc, sessionIdOf, sessionKey, type LogicalSessionId } from './session_id.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { historyForRange, isIncompleteHistoryMarker, type MigratedHistory } from './session_migration.js';

// MongoDB's collections for retryable writes, on every shard: one record per session with its
// txnNumber (config.transactions, MongoDB's shape plus docshard's `ns` and `stmts`: what the first
// write command of that txnNumber did, kept in the record so the common retryable write, one
// command per txnNumber, costs one document write), what any later command of the same txnNumber
// did (docshard's config.transaction_history, where MongoDB follows the oplog), and the document
// the session's last findAndModify returned (config.image_collection).
export const TRANSACTIONS_NS = 'config.transactions';
export const TRANSACTION_HISTORY_NS = 'config.transaction_history';
export const IMAGE_COLLECTION_NS = 'config.image_collection';

interface CachedSession {
  txnNum: number;
  executed: Map<number, StatementResult>;
  incompleteHistory: boolean;
  // Whether config.transaction_history holds entries of this txnNumber.
  spilled: boolean;
  // Whether this txnNumber was a multi-document transaction that committed here.
  committedTransaction?: boolean;
  // Whether the session's record on disk is of this txnNumber yet.
  recordWritten: boolean;
  // Whether entries of an older txnNumber may remain in config.transaction_history: the record
  // of this one drops them.
  olderHistory: boolean;
}

// The sessions' retryable-write state (MongoDB's SessionCatalog and TransactionParticipant): kept
// in memory, read from the collections above the first time a session is seen after a start, and
// written to them in the write unit of the statements themselves, so no crash can separate a
// write from its record.
export class SessionCatalog {
  private readonly sessions = new Map<string, CachedSession>();

  constructor(private readonly storage: StorageEngine, private readonly clock: LogicalClock) {}

  // Begins or continues retryable write `txnNumber` of the session, inside the write unit that
  // will run its statements. TransactionTooOld when the session has started a newer one.
  begin(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number, ns: string): RetryableWriteRun {
    const key = sessionKey(lsid);
    const known = this.sessions.get(key) ?? this.load(lsid);
    if (known?.txnNum === txnNumber && known.committedTransaction === true) {
      // Only a router's move of a document to another shard makes a retryable write's txnNumber a
      // transaction (WouldChangeOwningShard): this is its retry, after the move committed.
      throw new MongoError(ErrorCodes.IncompleteTransactionHistory, `Incomplete history detected for transaction ${txnNumber} on session ${describeSession(lsid)}: the write was converted to a transaction that committed`, { errInfo: { convertedToTransaction: true } });
    }
    if (checkTxnNumber(known, txnNumber, lsid) === 'current') return new RetryableWriteRun(this.storage, this.clock, unit, lsid, ns, known!);
    const fresh: CachedSession = { txnNum: txnNumber, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: false, olderHistory: known?.spilled === true || known?.olderHistory === true };
    this.sessions.set(key, fresh);
    this.storage.onRollback(() => {
      if (known === undefined) this.sessions.delete(key);
      else this.sessions.set(key, known);
    });
    return new RetryableWriteRun(this.storage, this.clock, unit, lsid, ns, fresh);
  }

  // Whether statement `stmtId` of retryable write `txnNumber` ran here: a router asks every shard
  // before it picks where a write without shard key goes, so a retry goes where the write ran
  // whichever document its filter now finds first. TransactionTooOld and
  // IncompleteTransactionHistory as for the write itself.
  statementExecuted(lsid: LogicalSessionId, txnNumber: number, stmtId: number): boolean {
    const known = this.sessions.get(sessionKey(lsid)) ?? this.load(lsid);
    if (checkTxnNumber(known, txnNumber, lsid) === 'new') return false;
    return priorExecution(known!, stmtId, lsid) !== undefined;
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
    const w = new LocalWriter(this.storage, unit);
    for (const h of entries) {
      const lsid = sessionIdOf(h.lsid);
      const key = sessionKey(lsid);
      const known = this.sessions.get(key) ?? this.load(lsid);
      if (known !== undefined && known.txnNum > h.txnNum) continue;
      const same = known !== undefined && known.txnNum === h.txnNum;
      // A statement can reach a shard twice: a range that comes back brings history this shard
      // wrote or received before, and a donor may hold one statement both in a session's record
      // and in a history entry. As MongoDB's migration destination, what is known is skipped.
      const stmts = same ? h.stmts.filter((st) => isIncompleteHistoryMarker(st) ? !known.incompleteHistory : !known.executed.has(statementResultFromBSON(st).stmtId)) : h.stmts;
      if (stmts.length === 0) continue;
      const state: CachedSession = same
        ? { ...known, executed: new Map(known.executed), spilled: known.spilled || known.recordWritten }
        : { txnNum: h.txnNum, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false };
      absorbHistory(state, stmts);
      this.sessions.set(key, state);
      this.storage.onRollback(() => {
        if (known === undefined) this.sessions.delete(key);
        else this.sessions.set(key, known);
      });
      const session = lsidDoc(lsid);
      const txnNum = Long.fromNumber(h.txnNum);
      const ts = this.clock.tick();
      if (same && known.recordWritten) {
        w.insert(TRANSACTION_HISTORY_NS, { _id: { lsid: session, txnNum, stmtId: stmts[0]!.stmtId, from: migrationId }, ns, ts, stmts });
        w.update(TRANSACTIONS_NS, { _id: session }, { $set: { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()) } });
      } else {
        if (known !== undefined && (known.spilled || known.olderHistory)) dropHistory(w, session, txnNum);
        w.update(TRANSACTIONS_NS, { _id: session }, sessionRecord(session, txnNum, ts, ns, stmts, new Date(this.clock.wallMs())), { upsert: true });
        state.recordWritten = true;
        state.olderHistory = false;
      }
      if (h.image !== undefined) w.update(IMAGE_COLLECTION_NS, { _id: session }, { ...h.image, _id: session }, { upsert: true });
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
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    this.recordState(new LocalWriter(this.storage, unit), lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'committed' }, true);
  }

  // A transaction's prepare (the first phase of a two-phase commit): the session's record takes
  // its txnNumber with `state: 'prepared'`, the prepare's time and the writes the commit will
  // apply, in one unit, so that a restart finds it prepared (preparedTransactions). The unit's
  // commit time is the prepareTimestamp.
  recordTransactionPrepare(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number, writes: readonly PreparedWrite[]): Timestamp {
    const w = new LocalWriter(this.storage, unit);
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    const preparedWrites = writes.map((x) => ({ ns: x.ns, id: x.id, existed: x.existed, ...(x.after === undefined ? {} : { after: new Binary(x.after) }) }));
    this.recordState(w, lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'prepared', prepareTimestamp: ts, preparedWrites }, false);
    return ts;
  }

  // A prepared transaction's abort: the record says so, and holds its writes no longer.
  recordTransactionAbort(unit: WriteUnit, lsid: LogicalSessionId, txnNumber: number): void {
    const ts = unit.commitTimestamp() ?? this.clock.tick();
    this.recordState(new LocalWriter(this.storage, unit), lsid, txnNumber, { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()), state: 'aborted' }, false);
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

  private recordState(w: LocalWriter, lsid: LogicalSessionId, txnNumber: number, fields: Doc, committed: boolean): void {
    const key = sessionKey(lsid);
    const known = this.sessions.get(key) ?? this.load(lsid);
    const session = lsidDoc(lsid);
    const txnNum = Long.fromNumber(txnNumber);
    if (known !== undefined && (known.spilled || known.olderHistory)) dropHistory(w, session, txnNum);
    w.update(TRANSACTIONS_NS, { _id: session }, { _id: session, txnNum, ...fields }, { upsert: true });
    this.sessions.set(key, { txnNum: txnNumber, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false, committedTransaction: committed });
    this.storage.onRollback(() => {
      if (known === undefined) this.sessions.delete(key);
      else this.sessions.set(key, known);
    });
  }

  // Drops what memory holds of a session whose records the transaction reaper removed.
  forget(lsid: LogicalSessionId): void {
    this.sessions.delete(sessionKey(lsid));
  }

  // What is on disk for the session: its record and the history of its txnNumber.
  private load(lsid: LogicalSessionId): CachedSession | undefined {
    const coll = this.storage.getCollection(TRANSACTIONS_NS);
    const [record] = [...prepareFind(this.storage, coll, { filter: { _id: lsidDoc(lsid) }, limit: 1 }).results];
    if (record === undefined || !isNumber(record.doc.txnNum)) return undefined;
    const txnNum = toDouble(record.doc.txnNum);
    const state: CachedSession = { txnNum, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false, committedTransaction: record.doc.state === 'committed' };
    if (Array.isArray(record.doc.stmts)) absorbHistory(state, record.doc.stmts as Doc[]);
    for (const entry of historyOf(this.storage, lsid, txnNum)) {
      absorbHistory(state, entry.stmts as Doc[]);
      state.spilled = true;
    }
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
    const w = new LocalWriter(this.storage, this.unit);
    // The time the unit's writes commit under, so the history orders as the commits do; an engine
    // without a clock (storage-level tests) leaves it to the catalog's.
    const ts = this.unit.commitTimestamp() ?? this.clock.tick();
    const session = lsidDoc(this.lsid);
    const txnNum = Long.fromNumber(this.state.txnNum);
    if (!this.state.recordWritten) {
      // The first command of the txnNumber to record anything: its statements go in the record.
      const { olderHistory } = this.state;
      if (olderHistory) dropHistory(w, session, txnNum);
      w.update(TRANSACTIONS_NS, { _id: session }, sessionRecord(session, txnNum, ts, this.ns, this.recorded, new Date(this.clock.wallMs())), { upsert: true });
      this.state.recordWritten = true;
      this.state.olderHistory = false;
      this.storage.onRollback(() => {
        this.state.recordWritten = false;
        this.state.olderHistory = olderHistory;
      });
    } else {
      w.insert(TRANSACTION_HISTORY_NS, { _id: { lsid: session, txnNum, stmtId: this.recorded[0]!.stmtId }, ns: this.ns, ts, stmts: this.recorded });
      w.update(TRANSACTIONS_NS, { _id: session }, { $set: { lastWriteOpTime: opTime(ts), lastWriteDate: new Date(this.clock.wallMs()) } });
      if (!this.state.spilled) {
        this.state.spilled = true;
        this.storage.onRollback(() => (this.state.spilled = false));
      }
    }
    if (this.image !== undefined) {
      w.update(IMAGE_COLLECTION_NS, { _id: session }, { _id: session, txnNum, ts, imageKind: this.image.kind, image: this.image.doc, invalidated: false }, { upsert: true });
    }
  }
}

// A session's record: MongoDB's fields, then docshard's: the namespace and statements of the
// txnNumber's first command.
function sessionRecord(session: Doc, txnNum: Long, ts: Timestamp, ns: string, stmts: readonly Doc[], lastWriteDate: Date): Doc {
  return { _id: session, txnNum, lastWriteOpTime: opTime(ts), lastWriteDate, ns, stmts };
}

// A record read as a history entry (its statements under the history's _id shape).
function asHistoryEntry(record: Doc): Doc {
  return { _id: { lsid: record._id, txnNum: record.txnNum }, ns: record.ns, stmts: record.stmts };
}

// The history entries of the session's txnNumbers before `txnNum`.
function dropHistory(w: LocalWriter, session: Doc, txnNum: Long): void {
  w.delete(TRANSACTION_HISTORY_NS, { _id: { $lt: { lsid: session, txnNum }, $gte: { lsid: session, txnNum: new MinKey() } } });
}

// An optime without replication: the term is -1, as MongoDB writes it for a standalone.
function opTime(ts: Timestamp): Doc {
  return { ts, t: Long.fromNumber(-1) };
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

function absorbHistory(state: CachedSession, stmts: readonly Doc[]): void {
  for (const raw of stmts) {
    if (isIncompleteHistoryMarker(raw)) {
      state.incompleteHistory = true;
      continue;
    }
    const { stmtId, result } = statementResultFromBSON(raw);
    state.executed.set(stmtId, result);
  }
}
