import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { StorageTransaction } from '../storage/storage_transaction.js';
import type { LogicalClock } from './logical_clock.js';
import type { SessionCatalog } from './session_catalog.js';
import type { SessionKillerMatcher } from './kill_sessions.js';
import { describeSession, sessionIdOf, sessionKey, type LogicalSessionId } from './session_id.js';
import { checkAllowedInTransaction, decideStatement, type TransactionPhase } from './transaction_rules.js';

// MongoDB's TransactionParticipant for multi-document transactions on this node: a session's
// transaction (its txnNumber, phase and storage transaction), begun by a statement with
// startTransaction, continued by the statements after it, ended by commitTransaction or
// abortTransaction, by a statement that fails, by killSessions, or by outliving
// transactionLifetimeLimitSeconds. It reads the snapshot at its readConcern's atClusterTime, or
// at the node's time when it begins (what every statement then reads, whatever its level).

interface SessionState {
  lsid: LogicalSessionId;
  txnNumber: number;
  phase: TransactionPhase;
  txn: StorageTransaction | undefined;
  startedMs: number;
}

export const DEFAULT_TRANSACTION_LIFETIME_MS = 60_000;

export class TransactionParticipants {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    private readonly storage: StorageEngine,
    private readonly catalog: SessionCatalog,
    private readonly clock: LogicalClock,
    // Closes the session's cursors: a transaction's cursors end with it.
    private readonly ended: (lsid: LogicalSessionId) => void,
    private readonly lifetimeMs = DEFAULT_TRANSACTION_LIFETIME_MS,
  ) {}

  // The transaction a statement (autocommit: false) runs in: begun when it has startTransaction.
  // Errors as MongoDB answers them (transaction_rules.ts). commitTransaction and abortTransaction
  // go through `commit` and `abort` instead.
  statement(cmd: Doc, command: string, db: string): StorageTransaction {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const start = cmd.startTransaction === true;
    checkAllowedInTransaction(command, db, start, cmd.readConcern);
    const current = this.sessions.get(key);
    const decision = decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: start, command }, describeSession(lsid));
    if (decision === 'continue') return current!.txn!;
    if (current?.phase === 'inProgress') this.end(current, 'aborted');
    const txn = this.storage.beginTransaction(readTimestamp(cmd.readConcern) ?? this.clock.now());
    this.sessions.set(key, { lsid, txnNumber, phase: 'inProgress', txn, startedMs: Date.now() });
    return txn;
  }

  // A statement failed: as in MongoDB, the transaction is aborted.
  statementFailed(cmd: Doc): void {
    const state = this.sessions.get(sessionKey(sessionIdOf(cmd.lsid)));
    if (state?.phase === 'inProgress' && state.txnNumber === toDouble(cmd.txnNumber as number)) this.end(state, 'aborted');
  }

  // The namespaces the session's transaction in progress wrote to (none for any other).
  writtenNamespaces(cmd: Doc): string[] {
    const state = this.sessions.get(this.identify(cmd).key);
    return state?.phase === 'inProgress' && state.txn !== undefined ? state.txn.namespaces() : [];
  }

  // commitTransaction: applies the writes in one unit with the session's record; a commit of a
  // transaction that committed answers ok again. Its commit time, when it wrote anything. `check`
  // may refuse a document it wrote (StorageTransaction.commit).
  commit(cmd: Doc, check?: (ns: string, doc: Buffer) => void): Timestamp | undefined {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    const decision = decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: false, command: 'commitTransaction' }, describeSession(lsid));
    if (decision === 'committed') return undefined;
    const state = current!;
    try {
      const ts = state.txn!.commit((unit) => this.catalog.recordTransactionCommit(unit, lsid, txnNumber), check);
      this.end(state, 'committed');
      return ts;
    } catch (err) {
      this.end(state, 'aborted');
      throw err;
    }
  }

  // A router that did not run the transaction asks for its decision (coordinateCommitTransaction
  // with no participants, MongoDB's recovery): committed answers ok; a transaction still in
  // progress is aborted, as MongoDB's coordinator decides on recovery, and like an aborted or
  // unknown one answers NoSuchTransaction.
  recoverDecision(cmd: Doc): void {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    if (current?.txnNumber === txnNumber) {
      if (current.phase === 'committed') return;
      if (current.phase === 'inProgress') this.end(current, 'aborted');
    } else {
      const last = this.catalog.lastTxnNumber(lsid);
      if (last?.txnNum === txnNumber && last.committedTransaction) return;
    }
    throw new MongoError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txnNumber} } has no commit decision on this shard; it is aborted`);
  }

  abort(cmd: Doc): void {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    const decision = decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: false, command: 'abortTransaction' }, describeSession(lsid));
    if (decision === 'committed') throw new MongoError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txnNumber} } has been committed.`);
    this.end(current!, 'aborted');
  }

  // killSessions and its kin abort the sessions' transactions in progress.
  abortMatching(matcher: SessionKillerMatcher): void {
    for (const state of this.sessions.values()) if (state.phase === 'inProgress' && matcher.match(state.lsid)) this.end(state, 'aborted');
  }

  // Transactions in progress longer than transactionLifetimeLimitSeconds are aborted.
  abortExpired(nowMs: number): number {
    let aborted = 0;
    for (const state of this.sessions.values()) {
      if (state.phase === 'inProgress' && nowMs - state.startedMs > this.lifetimeMs) {
        this.end(state, 'aborted');
        aborted += 1;
      }
    }
    return aborted;
  }

  get inProgress(): number {
    let n = 0;
    for (const state of this.sessions.values()) if (state.phase === 'inProgress') n += 1;
    return n;
  }

  private end(state: SessionState, phase: 'committed' | 'aborted'): void {
    state.txn?.abort();
    state.txn = undefined;
    state.phase = phase;
    this.ended(state.lsid);
  }

  private identify(cmd: Doc): { lsid: LogicalSessionId; txnNumber: number; key: string } {
    const lsid = sessionIdOf(cmd.lsid);
    if (!isNumber(cmd.txnNumber)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'txnNumber' is the wrong type, expected type 'long'");
    return { lsid, txnNumber: toDouble(cmd.txnNumber), key: sessionKey(lsid) };
  }
}

// The time a transaction reads at when its first statement names one.
export function readTimestamp(readConcern: unknown): Timestamp | undefined {
  if (!isPlainObject(readConcern) || readConcern.atClusterTime === undefined) return undefined;
  const at = readConcern.atClusterTime as Timestamp;
  if (at._bsontype !== 'Timestamp') throw new MongoError(ErrorCodes.TypeMismatch, '"atClusterTime" had the wrong type. Expected timestamp');
  return at;
}
