import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import type { StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import { applyPreparedWrites, type PreparedWrite, type StorageTransaction } from '../storage/storage_transaction.js';
import type { LogicalClock } from './logical_clock.js';
import type { SessionCatalog } from './session_catalog.js';
import type { SessionKillerMatcher } from './kill_sessions.js';
import { describeSession, sessionIdOf, sessionKey, type LogicalSessionId } from './session_id.js';
import { checkAllowedInTransaction, decideStatement, type TransactionPhase } from './transaction_rules.js';
import type { Clock } from '../base/clock.js';

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
  // The storage transaction while in progress, and while prepared unless recovered from disk.
  txn: StorageTransaction | undefined;
  startedMs: number;
  prepared?: Prepared;
}

// A prepared transaction: what it will write and where, and when its decision comes.
interface Prepared {
  ts: Timestamp;
  writes: PreparedWrite[];
  namespaces: Set<string>;
  decided: Promise<void>;
  decide: () => void;
  // When it was prepared (wall clock).
  atMs: number;
}

export const DEFAULT_TRANSACTION_LIFETIME_MS = 60_000;

export class TransactionParticipants {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    private readonly storage: StorageEngine,
    private readonly catalog: SessionCatalog,
    private readonly clock: LogicalClock,
    // The wall clock a transaction's age (transactionLifetimeLimitSeconds) is measured on.
    private readonly wallClock: Clock,
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
    this.sessions.set(key, { lsid, txnNumber, phase: 'inProgress', txn, startedMs: this.wallClock.now() });
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
  // transaction that committed answers ok again. `check` may refuse a document it wrote
  // (StorageTransaction.commit). A prepared transaction commits at the commitTimestamp its
  // coordinator sent, and cannot fail.
  commit(cmd: Doc, check?: (ns: string, doc: Buffer) => void): void {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    const decision = decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: false, command: 'commitTransaction' }, describeSession(lsid));
    if (decision === 'committed') return;
    const state = current!;
    const record = (unit: WriteUnit): void => this.catalog.recordTransactionCommit(unit, lsid, txnNumber);
    if (state.phase === 'prepared') {
      const prepared = state.prepared!;
      const at = commitTimestampOf(cmd, prepared.ts);
      this.clock.advance(at);
      if (state.txn !== undefined) state.txn.commitPrepared(at, record);
      else applyPreparedWrites(this.storage, prepared.writes, record, at);
      this.end(state, 'committed');
      return;
    }
    if (cmd.commitTimestamp !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'commitTimestamp may only be given for a prepared transaction');
    try {
      state.txn!.commit(record, check);
      this.end(state, 'committed');
    } catch (err) {
      this.end(state, 'aborted');
      throw err;
    }
  }

  // prepareTransaction, the first phase of a two-phase commit: checks what the commit will apply
  // (`check` as for commit), persists it with the session's record `state: 'prepared'`, and from
  // then on holds it until the coordinator's decision, across restarts and beyond
  // transactionLifetimeLimitSeconds. Its prepareTimestamp; the same one when asked again.
  prepare(cmd: Doc, check?: (ns: string, doc: Buffer) => void): Timestamp {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: false, command: 'prepareTransaction' }, describeSession(lsid));
    const state = current!;
    if (state.phase === 'prepared') return state.prepared!.ts;
    let writes: PreparedWrite[];
    let ts: Timestamp;
    try {
      writes = state.txn!.prepare(check);
      ts = this.storage.write((unit) => this.catalog.recordTransactionPrepare(unit, lsid, txnNumber, writes));
    } catch (err) {
      this.end(state, 'aborted');
      throw err;
    }
    this.markPrepared(state, ts, writes);
    return ts;
  }

  // When the node becomes primary (at startup outside a replica set, before it serves): the
  // transactions its records hold prepared (left by a crash, or replicated from the primary that
  // prepared them) are prepared again, holding their collections until their decision comes.
  recoverPrepared(): number {
    const found = this.catalog.preparedTransactions();
    for (const p of found) {
      if (this.sessions.get(sessionKey(p.lsid))?.phase === 'prepared') continue;
      const state: SessionState = { lsid: p.lsid, txnNumber: p.txnNumber, phase: 'inProgress', txn: undefined, startedMs: this.wallClock.now() };
      this.sessions.set(sessionKey(p.lsid), state);
      this.markPrepared(state, p.prepareTimestamp, p.writes);
    }
    return found.length;
  }

  // What a request on `ns` waits for: the decisions of the transactions prepared on it. A read at a
  // time before a prepare (`readAt`) does not: the commit's time will be later than its own. Any
  // other request does: a read might miss a commit at a time it should see, a write might change
  // what the commit will overwrite.
  preparedOn(ns: string, readAt?: Timestamp): Promise<void> | undefined {
    if (this.preparedCount === 0) return undefined;
    const waits: Promise<void>[] = [];
    for (const state of this.sessions.values()) {
      const p = state.prepared;
      if (state.phase !== 'prepared' || p === undefined || !p.namespaces.has(ns)) continue;
      if (readAt !== undefined && readAt.lessThan(p.ts)) continue;
      waits.push(p.decided);
    }
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => undefined);
  }

  // What a request of a newer txnNumber on a session whose transaction is prepared waits for: that
  // transaction's decision, as MongoDB's service entry point waits (onExitPrepare) on the
  // PreparedTransactionInProgress its beginOrContinue raises. A client may send its next
  // retryable write before the coordinator's commit reaches this shard; run at once, it would move
  // the session past the prepared transaction, whose commit would then be answered
  // TransactionTooOld, taken by the coordinator as applied, and never applied.
  preparedBefore(cmd: Doc): Promise<void> | undefined {
    if (this.preparedCount === 0 || cmd.lsid === undefined || cmd.txnNumber === undefined) return undefined;
    const { txnNumber, key } = this.identify(cmd);
    const state = this.sessions.get(key);
    return state?.phase === 'prepared' && state.txnNumber < txnNumber ? state.prepared!.decided : undefined;
  }

  // A router that did not run the transaction asks for its decision (coordinateCommitTransaction
  // with no participants, MongoDB's recovery): committed answers ok; a prepared one answers once
  // its coordinator decided; a transaction still in progress is aborted, as MongoDB's coordinator
  // decides on recovery, and like an aborted or unknown one answers NoSuchTransaction.
  async recoverDecision(cmd: Doc): Promise<void> {
    const { txnNumber, key } = this.identify(cmd);
    const phase = this.phaseOf(cmd);
    if (phase === 'prepared') {
      await this.sessions.get(key)!.prepared!.decided;
      return this.recoverDecision(cmd);
    }
    if (phase === 'committed') return;
    if (phase === 'inProgress') this.end(this.sessions.get(key)!, 'aborted');
    throw new MongoError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txnNumber} } has no commit decision on this shard; it is aborted`);
  }

  // The phase of the session's transaction `txnNumber` here, as far as this node knows.
  phaseOf(cmd: Doc): TransactionPhase | undefined {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    if (current?.txnNumber === txnNumber) return current.phase;
    const last = this.catalog.lastTxnNumber(lsid);
    return last?.txnNum === txnNumber && last.committedTransaction ? 'committed' : undefined;
  }

  abort(cmd: Doc): void {
    const { lsid, txnNumber, key } = this.identify(cmd);
    const current = this.sessions.get(key);
    const decision = decideStatement(current, this.catalog.lastTxnNumber(lsid), { txnNumber, startTransaction: false, command: 'abortTransaction' }, describeSession(lsid));
    if (decision === 'committed') throw new MongoError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txnNumber} } has been committed.`);
    if (current!.phase === 'prepared') this.storage.write((unit) => this.catalog.recordTransactionAbort(unit, lsid, txnNumber));
    this.end(current!, 'aborted');
  }

  // A step-down, as MongoDB's: the transactions in progress are aborted, and those prepared are let
  // go: their decisions now come through replication, as the new primary's commit or abort of
  // each, which a held prepare would stand in the way of. A step-up takes up again those the
  // records still hold prepared (recoverPrepared).
  stepDown(): void {
    for (const state of this.sessions.values()) {
      if (state.phase === 'inProgress') this.end(state, 'aborted');
      if (state.phase !== 'prepared') continue;
      this.end(state, 'aborted');
      this.sessions.delete(sessionKey(state.lsid));
    }
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

  private preparedCount = 0;

  // The transactions prepared here and waiting for their decision, for currentOp.
  preparedTransactions(): { lsid: LogicalSessionId; txnNumber: number; prepareTimestamp: Timestamp; preparedMs: number; namespaces: string[] }[] {
    return [...this.sessions.values()].flatMap((s) => (s.phase === 'prepared' && s.prepared !== undefined
      ? [{ lsid: s.lsid, txnNumber: s.txnNumber, prepareTimestamp: s.prepared.ts, preparedMs: s.prepared.atMs, namespaces: [...s.prepared.namespaces] }]
      : []));
  }

  // The earliest prepareTimestamp of the transactions prepared and not yet decided: the
  // commitTimestamp of each is at or after its own, and may be before the clock.
  oldestPrepared(): Timestamp | undefined {
    if (this.preparedCount === 0) return undefined;
    let oldest: Timestamp | undefined;
    for (const state of this.sessions.values()) {
      const ts = state.phase === 'prepared' ? state.prepared?.ts : undefined;
      if (ts !== undefined && (oldest === undefined || ts.lessThan(oldest))) oldest = ts;
    }
    return oldest;
  }

  private markPrepared(state: SessionState, ts: Timestamp, writes: PreparedWrite[]): void {
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    state.prepared = { ts, writes, namespaces: new Set(writes.map((w) => w.ns)), decided, decide, atMs: this.wallClock.now() };
    state.phase = 'prepared';
    this.preparedCount += 1;
  }

  private end(state: SessionState, phase: 'committed' | 'aborted'): void {
    state.txn?.abort();
    state.txn = undefined;
    if (state.phase === 'prepared') {
      this.preparedCount -= 1;
      state.prepared!.decide();
    }
    state.prepared = undefined;
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

// commitTransaction's commitTimestamp for a prepared transaction: required, and not before its
// prepare.
function commitTimestampOf(cmd: Doc, prepareTs: Timestamp): Timestamp {
  const at = cmd.commitTimestamp as Timestamp | undefined;
  if (at === undefined) throw new MongoError(ErrorCodes.InvalidOptions, "'commitTimestamp' must be provided to commit a prepared transaction");
  if (at._bsontype !== 'Timestamp') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'commitTransaction.commitTimestamp' is the wrong type, expected type 'timestamp'");
  if (at.lessThan(prepareTs)) throw new MongoError(ErrorCodes.InvalidOptions, 'commitTimestamp cannot be less than the prepareTimestamp');
  return at;
}
