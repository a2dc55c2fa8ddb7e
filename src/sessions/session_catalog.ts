import { Long, MaxKey, MinKey, type Timestamp } from 'bson';
import { isNumber, toDouble, type Doc } from '../bson/values.js';
import { LocalWriter } from '../query/exec/local_collection.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { LogicalClock } from './logical_clock.js';
import {
  checkTxnNumber, priorExecution, statementResultFromBSON, statementResultToBSON,
  type SessionTxnState, type StatementResult,
} from './retryable_write.js';
import { lsidDoc, sessionIdOf, sessionKey, type LogicalSessionId } from './session_id.js';
import { historyForRange, isIncompleteHistoryMarker, type MigratedHistory } from './session_migration.js';

// MongoDB's collections for retryable writes, on every shard: one record per session with its
// txnNumber (config.transactions, MongoDB's shape), what the statements of that txnNumber did
// (docshard's config.transaction_history, where MongoDB follows the oplog), and the document the
// session's last findAndModify returned (config.image_collection).
export const TRANSACTIONS_NS = 'config.transactions';
export const TRANSACTION_HISTORY_NS = 'config.transaction_history';
export const IMAGE_COLLECTION_NS = 'config.image_collection';

interface CachedSession {
  txnNum: number;
  executed: Map<number, StatementResult>;
  incompleteHistory: boolean;
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
    if (checkTxnNumber(known, txnNumber, lsid) === 'current') return new RetryableWriteRun(this.storage, this.clock, unit, lsid, ns, known!, false);
    const fresh: CachedSession = { txnNum: txnNumber, executed: new Map(), incompleteHistory: false };
    this.sessions.set(key, fresh);
    this.storage.onRollback(() => {
      if (known === undefined) this.sessions.delete(key);
      else this.sessions.set(key, known);
    });
    return new RetryableWriteRun(this.storage, this.clock, unit, lsid, ns, fresh, true);
  }

  // The donor's part of a migration: the history entries of `ns` after `after` (in _id order, at
  // most `limit` read), each cut to the statements that go with the moving range (`inRange`), with
  // the session's findAndModify image when one of them needs it.
  historyForMigration(ns: string, inRange: (key: Doc) => boolean, after: unknown, limit: number): { entries: MigratedHistory[]; last: unknown; done: boolean } {
    const coll = this.storage.getCollection(TRANSACTION_HISTORY_NS);
    const filter: Doc = after === undefined ? { ns } : { ns, _id: { $gt: after } };
    const read = [...prepareFind(this.storage, coll, { filter, sort: { _id: 1 }, limit }).results].map((r) => r.doc);
    const entries: MigratedHistory[] = [];
    for (const doc of read) {
      const part = historyForRange(doc, inRange);
      if (part === undefined) continue;
      const needsImage = part.stmts.some((st) => st.op === 'findAndModify' && st.image !== 'none');
      const image = needsImage ? this.imageOf(part.lsid, part.txnNum) : undefined;
      entries.push({ ...part, ...(image !== undefined ? { image } : {}) });
    }
    return { entries, last: read.at(-1)?._id ?? after, done: read.length < limit };
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
      const state: CachedSession = same
        ? { txnNum: known.txnNum, executed: new Map(known.executed), incompleteHistory: known.incompleteHistory }
        : { txnNum: h.txnNum, executed: new Map(), incompleteHistory: false };
      absorbHistory(state, h.stmts);
      this.sessions.set(key, state);
      this.storage.onRollback(() => {
        if (known === undefined) this.sessions.delete(key);
        else this.sessions.set(key, known);
      });
      const session = lsidDoc(lsid);
      const txnNum = Long.fromNumber(h.txnNum);
      const ts = this.clock.tick();
      if (!same) w.delete(TRANSACTION_HISTORY_NS, { _id: { $lt: { lsid: session, txnNum }, $gte: { lsid: session, txnNum: new MinKey() } } });
      w.insert(TRANSACTION_HISTORY_NS, { _id: { lsid: session, txnNum, stmtId: h.stmts[0]!.stmtId, from: migrationId }, ns, ts, stmts: h.stmts });
      w.update(TRANSACTIONS_NS, { _id: session }, { _id: session, txnNum, lastWriteOpTime: opTime(ts), lastWriteDate: new Date() }, { upsert: true });
      if (h.image !== undefined) w.update(IMAGE_COLLECTION_NS, { _id: session }, { ...h.image, _id: session }, { upsert: true });
    }
  }

  private imageOf(lsid: Doc, txnNum: number): Doc | undefined {
    const coll = this.storage.getCollection(IMAGE_COLLECTION_NS);
    const [found] = [...prepareFind(this.storage, coll, { filter: { _id: lsid }, limit: 1 }).results];
    return found !== undefined && isNumber(found.doc.txnNum) && toDouble(found.doc.txnNum) === txnNum ? found.doc : undefined;
  }


  // What is on disk for the session: its record and the history of its txnNumber.
  private load(lsid: LogicalSessionId): CachedSession | undefined {
    const coll = this.storage.getCollection(TRANSACTIONS_NS);
    const [record] = [...prepareFind(this.storage, coll, { filter: { _id: lsidDoc(lsid) }, limit: 1 }).results];
    if (record === undefined || !isNumber(record.doc.txnNum)) return undefined;
    const txnNum = toDouble(record.doc.txnNum);
    const state: CachedSession = { txnNum, executed: new Map(), incompleteHistory: false };
    for (const entry of historyOf(this.storage, lsid, txnNum)) absorbHistory(state, entry.stmts as Doc[]);
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

  constructor(
    private readonly storage: StorageEngine,
    private readonly clock: LogicalClock,
    private readonly unit: WriteUnit,
    private readonly lsid: LogicalSessionId,
    private readonly ns: string,
    private readonly state: CachedSession,
    private readonly startsTxnNumber: boolean,
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

  // Writes what the statements run now did, in the same write unit as their writes. A txnNumber
  // that starts here replaces the session's record and drops the history of the older ones.
  finish(): void {
    if (this.recorded.length === 0) return;
    const w = new LocalWriter(this.storage, this.unit);
    const ts = this.clock.tick();
    const session = lsidDoc(this.lsid);
    const txnNum = Long.fromNumber(this.state.txnNum);
    if (this.startsTxnNumber) {
      w.delete(TRANSACTION_HISTORY_NS, { _id: { $lt: { lsid: session, txnNum } , $gte: { lsid: session, txnNum: new MinKey() } } });
    }
    w.insert(TRANSACTION_HISTORY_NS, { _id: { lsid: session, txnNum, stmtId: this.recorded[0]!.stmtId }, ns: this.ns, ts, stmts: this.recorded });
    w.update(TRANSACTIONS_NS, { _id: session }, { _id: session, txnNum, lastWriteOpTime: opTime(ts), lastWriteDate: new Date() }, { upsert: true });
    if (this.image !== undefined) {
      w.update(IMAGE_COLLECTION_NS, { _id: session }, { _id: session, txnNum, ts, imageKind: this.image.kind, image: this.image.doc, invalidated: false }, { upsert: true });
    }
  }
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
