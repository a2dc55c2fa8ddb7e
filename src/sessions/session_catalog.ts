import { Long, MaxKey, MinKey, type Timestamp } from 'bson';
import { isNumber, toDouble, type Doc } from '../bson/values.js';
import { LocalWriter } from '../query/exec/local_collection.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { LogicalClock } from './logical_clock.js';
import {
  checkTxnNumber, INCOMPLETE_HISTORY_STMT_ID, priorExecution, statementResultFromBSON, statementResultToBSON,
  type SessionTxnState, type StatementResult,
} from './retryable_write.js';
import { lsidDoc, sessionKey, type LogicalSessionId } from './session_id.js';

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

  // What is on disk for the session: its record and the history of its txnNumber.
  private load(lsid: LogicalSessionId): CachedSession | undefined {
    const coll = this.storage.getCollection(TRANSACTIONS_NS);
    const [record] = [...prepareFind(this.storage, coll, { filter: { _id: lsidDoc(lsid) }, limit: 1 }).results];
    if (record === undefined || !isNumber(record.doc.txnNum)) return undefined;
    const txnNum = toDouble(record.doc.txnNum);
    const state: CachedSession = { txnNum, executed: new Map(), incompleteHistory: false };
    for (const entry of historyOf(this.storage, lsid, txnNum)) {
      for (const raw of entry.stmts as unknown[]) {
        const { stmtId, result } = statementResultFromBSON(raw);
        if (stmtId === INCOMPLETE_HISTORY_STMT_ID) state.incompleteHistory = true;
        else state.executed.set(stmtId, result);
      }
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

  record(stmtId: number, result: StatementResult, image?: { kind: 'preImage' | 'postImage'; doc: Doc }): void {
    this.state.executed.set(stmtId, result);
    this.storage.onRollback(() => this.state.executed.delete(stmtId));
    this.recorded.push(statementResultToBSON(stmtId, result));
    if (image !== undefined) this.image = image;
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
