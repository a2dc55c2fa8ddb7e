import { AsyncLocalStorage } from 'node:async_hooks';
import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { describeSession, sessionIdOf, sessionKey } from '../sessions/session_id.js';
import { checkAllowedInTransaction } from '../sessions/transaction_rules.js';

// MongoDB's TransactionRouter: a session's transaction as a router runs it over its shards. Its
// first statement picks the snapshot every participant reads (the readConcern's atClusterTime, or
// the router's time: beyond MongoDB, whatever the level, so that a transaction never reads a
// cross-shard commit half done); every command the statements send a shard carries the session,
// the txnNumber and autocommit: false, and the first one a shard gets also startTransaction and
// that readConcern (`fieldsFor`, applied where requests to shards are built while the statement
// runs: `withRouterTransaction`). The participants are the shards contacted, in order, each
// read-only until a write goes to it. The commit goes, as MongoDB's router sends it, to the one
// participant; or to the read-only ones and then the one that wrote; or, when two or more wrote,
// to the first participant as coordinator of a two-phase commit (coordinateCommitTransaction).

export type RouterTransactionPhase = 'inProgress' | 'committed' | 'aborted';

const WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);
const STALE_CODES = new Set<number>([ErrorCodes.StaleConfig, ErrorCodes.StaleDbVersion]);

export class RouterTransaction {
  // In the order they were contacted; `readOnly` until a write is sent to one; `starting` until
  // the shard answers the request that began the transaction there.
  readonly participants = new Map<string, { readOnly: boolean; starting: boolean }>();
  phase: RouterTransactionPhase = 'inProgress';
  // Once a two-phase commit is asked for, only its coordinator may end the transaction: an abort
  // from here could reach a participant prepared for a commit already decided.
  coordinating = false;

  // `readConcern`: the first statement's, whose atClusterTime, when it names none, is the router's
  // time when the statement first needs one (`pickTime`): after the routing it targets by is loaded,
  // whose reply moved the router's clock past the catalog changes it holds, so that a collection
  // sharded just now through another router has a history that reaches back to it.
  constructor(readonly lsid: Doc, readonly txnNumber: unknown, readonly txnNum: number, private readonly requested: Doc, private readonly pickTime: () => Timestamp) {}

  private picked: Timestamp | undefined;

  get readConcern(): Doc {
    return { ...this.requested, atClusterTime: this.readAt };
  }

  // The command for shard `shardId` as a statement of this transaction.
  fieldsFor(shardId: string, cmd: Doc): Doc {
    const command = Object.keys(cmd)[0] ?? '';
    const write = WRITE_COMMANDS.has(command);
    const known = this.participants.get(shardId);
    if (known === undefined) this.participants.set(shardId, { readOnly: !write, starting: true });
    else if (write) known.readOnly = false;
    const out: Doc = {};
    for (const [k, v] of Object.entries(cmd)) if (k !== 'readConcern' && k !== 'lsid' && k !== 'txnNumber' && k !== 'stmtIds') out[k] = v;
    out.lsid = this.lsid;
    out.txnNumber = this.txnNumber;
    out.autocommit = false;
    if (known === undefined) {
      out.startTransaction = true;
      out.readConcern = this.readConcern;
    }
    return out;
  }

  // A shard answered a request of the transaction. One that refused the request that was to begin
  // the transaction there for stale routing never began it (the version check comes first): it is
  // no participant, so the router's retry of the statement, there or on the shard that owns the
  // range now, begins it afresh. Beyond MongoDB, whose transaction fails there (SERVER-39704).
  answered(shardId: string, reply: Doc): void {
    const p = this.participants.get(shardId);
    if (p === undefined || !p.starting) return;
    if (reply.ok === 0 && STALE_CODES.has(reply.code as number)) {
      this.participants.delete(shardId);
      // No shard reads at the time picked yet: the retry, with the routing refreshed, picks again
      // (MongoDB's router resets a transaction it may still start afresh).
      if (this.participants.size === 0) this.picked = undefined;
    } else {
      p.starting = false;
    }
  }

  get readAt(): Timestamp {
    this.picked ??= (this.requested.atClusterTime as Timestamp | undefined) ?? this.pickTime();
    return this.picked;
  }

  // What a getMore or killCursors of a cursor the transaction opened carries.
  sessionFields(cmd: Doc): Doc {
    return { ...cmd, lsid: this.lsid, txnNumber: this.txnNumber, autocommit: false };
  }

  writer(): string | undefined {
    return this.writers()[0];
  }

  writers(): string[] {
    return [...this.participants].filter(([, p]) => !p.readOnly).map(([shard]) => shard);
  }

  // The shard that runs a two-phase commit: the first participant, as MongoDB's router picks it.
  coordinator(): string | undefined {
    return this.participants.keys().next().value;
  }

  // The shard a commit through another router asks for the decision (MongoDB's recoveryToken).
  recoveryShard(): string | undefined {
    return this.writer() ?? this.participants.keys().next().value;
  }
}

// How a router commits a transaction (pure; MongoDB's TransactionRouter commit types): nothing to
// send without participants; with one writer at most, commitTransaction to the read-only
// participants and then to the writer, so that a failure before the writer commits leaves nothing
// committed; with two or more writers, a two-phase commit run by the coordinator.
export type CommitPlan =
  | { type: 'noShards' }
  | { type: 'direct'; readOnly: string[]; writer: string | undefined }
  | { type: 'twoPhase'; coordinator: string; participants: string[] };

export function commitPlan(txn: Pick<RouterTransaction, 'participants' | 'writers' | 'coordinator'>): CommitPlan {
  const all = [...txn.participants.keys()];
  if (all.length === 0) return { type: 'noShards' };
  const writers = txn.writers();
  if (writers.length >= 2) return { type: 'twoPhase', coordinator: txn.coordinator()!, participants: all };
  return { type: 'direct', readOnly: all.filter((s) => s !== writers[0]), writer: writers[0] };
}

const current = new AsyncLocalStorage<RouterTransaction>();
const snapshotReadTime = new AsyncLocalStorage<Timestamp>();

// Runs a statement with the requests it sends to shards made statements of `txn`.
export function withRouterTransaction<T>(txn: RouterTransaction, fn: () => T): T {
  return current.run(txn, fn);
}

export function currentRouterTransaction(): RouterTransaction | undefined {
  return current.getStore();
}

// Runs a snapshot read (readConcern snapshot outside a transaction) reading at `at`.
export function withSnapshotReadTime<T>(at: Timestamp, fn: () => T): T {
  return snapshotReadTime.run(at, fn);
}

// The cluster time the running statement reads at: its transaction's snapshot time, or a snapshot
// read's atClusterTime; undefined outside both. Such a statement is routed by the routing table as
// of that time (CatalogCache.getCollection, ChunkManager.atClusterTime), as mongos routes it: a
// chunk goes to the shard that owned it then, which still serves that time from its versions.
// Whether a transaction statement or a snapshot read is running (cheap: picks no read time).
export function inStatementAtReadTime(): boolean {
  return current.getStore() !== undefined || snapshotReadTime.getStore() !== undefined;
}

export function statementReadTime(): Timestamp | undefined {
  return current.getStore()?.readAt ?? snapshotReadTime.getStore();
}

// The router's transactions, by session: a statement with startTransaction begins one (aborting an
// older one of the session, whose participants the caller tells), a later one must name it.
export class TransactionRouter {
  private readonly sessions = new Map<string, RouterTransaction>();

  // The transaction a statement (autocommit: false) runs in, and the one it replaced, if any,
  // which the caller aborts on its shards.
  statement(cmd: Doc, command: string, db: string, now: () => Timestamp): { txn: RouterTransaction; replaced?: RouterTransaction } {
    const { key, txnNum, session } = identify(cmd);
    const start = cmd.startTransaction === true;
    if (command !== 'commitTransaction' && command !== 'abortTransaction') checkAllowedInTransaction(command, db, start, cmd.readConcern);
    const known = this.sessions.get(key);
    if (known !== undefined && txnNum < known.txnNum) {
      throw new MongoError(ErrorCodes.TransactionTooOld, `Cannot start transaction ${txnNum} on session ${session} because a newer transaction ${known.txnNum} has already started.`);
    }
    if (start) {
      if (known !== undefined && known.txnNum === txnNum) {
        throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `Cannot start a transaction at given transaction number ${txnNum} on session ${session} because a transaction with the same number is in state ${known.phase}`);
      }
      const rc = isPlainObject(cmd.readConcern) ? cmd.readConcern : {};
      const txn = new RouterTransaction(cmd.lsid as Doc, cmd.txnNumber, txnNum, rc.atClusterTime === undefined ? { level: rc.level ?? 'snapshot' } : { level: rc.level ?? 'snapshot', atClusterTime: rc.atClusterTime }, now);
      this.sessions.set(key, txn);
      return known !== undefined && known.phase === 'inProgress' ? { txn, replaced: known } : { txn };
    }
    if (known === undefined || known.txnNum !== txnNum) {
      throw new MongoError(ErrorCodes.NoSuchTransaction, `Given transaction number ${txnNum} does not match any in-progress transactions. The active transaction number is ${known?.txnNum ?? -1}`);
    }
    if (known.phase === 'aborted' && command !== 'abortTransaction') {
      throw new MongoError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txnNum} } has been aborted.`);
    }
    return { txn: known };
  }

  // The session's transaction this router knows of, for a commit it may not (recoveryToken).
  find(cmd: Doc): RouterTransaction | undefined {
    const { key, txnNum } = identify(cmd);
    const known = this.sessions.get(key);
    return known?.txnNum === txnNum ? known : undefined;
  }

  forget(cmd: Doc): void {
    this.sessions.delete(identify(cmd).key);
  }
}

function identify(cmd: Doc): { key: string; txnNum: number; session: string } {
  const lsid = sessionIdOf(cmd.lsid);
  if (!isNumber(cmd.txnNumber)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'txnNumber' is the wrong type, expected type 'long'");
  return { key: sessionKey(lsid), txnNum: toDouble(cmd.txnNumber), session: describeSession(lsid) };
}
