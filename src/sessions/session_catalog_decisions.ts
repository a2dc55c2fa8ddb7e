import { Long, MinKey, type Timestamp } from 'bson';
import { isNumber, toDouble, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { checkTxnNumber, priorExecution, statementResultFromBSON, type StatementResult } from './retryable_write.js';
import { describeSession, type LogicalSessionId } from './session_id.js';
import { isIncompleteHistoryMarker, type MigratedHistory } from './session_migration.js';

// The session catalog's decisions (session_catalog.ts is their driver), pure: given what is known
// of a session, which txnNumber a command may run under, whether a statement ran, and what to
// write to config.transactions, config.transaction_history and config.image_collection. The
// driver performs the writes in the command's write unit and keeps the state in memory, putting
// back the old state if the unit rolls back.

// What is known of one session: its txnNumber and what that txnNumber's statements did.
export interface CachedSession {
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

export type SessionWrite =
  // The session's history entries of the txnNumbers before `txnNum`.
  | { readonly type: 'dropOlderHistory'; readonly session: Doc; readonly txnNum: Long }
  // The session's record in config.transactions, replaced whole (inserted if missing).
  | { readonly type: 'putRecord'; readonly session: Doc; readonly record: Doc }
  | { readonly type: 'setRecordFields'; readonly session: Doc; readonly fields: Doc }
  | { readonly type: 'insertHistory'; readonly entry: Doc }
  // The session's findAndModify image in config.image_collection, replaced whole.
  | { readonly type: 'putImage'; readonly session: Doc; readonly image: Doc };

// Where and when the writes of one decision land: the session's _id, its unit's commit time and
// the wall clock's date.
export interface WriteContext {
  readonly session: Doc;
  readonly ts: Timestamp;
  readonly wallDate: Date;
}

// A command of `txnNumber` begins: it continues the session's current retryable write, or starts
// a newer one (its fresh state). TransactionTooOld for an older txnNumber; a retry of a write a
// router converted to a transaction that committed answers IncompleteTransactionHistory.
export function beginTxnNumber(known: CachedSession | undefined, txnNumber: number, lsid: LogicalSessionId): { kind: 'current' } | { kind: 'new'; state: CachedSession } {
  if (known?.txnNum === txnNumber && known.committedTransaction === true) {
    // Only a router's move of a document to another shard makes a retryable write's txnNumber a
    // transaction (WouldChangeOwningShard): this is its retry, after the move committed.
    throw new MongoError(ErrorCodes.IncompleteTransactionHistory, `Incomplete history detected for transaction ${txnNumber} on session ${describeSession(lsid)}: the write was converted to a transaction that committed`, { errInfo: { convertedToTransaction: true } });
  }
  if (checkTxnNumber(known, txnNumber, lsid) === 'current') return { kind: 'current' };
  return {
    kind: 'new',
    state: { txnNum: txnNumber, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: false, olderHistory: known?.spilled === true || known?.olderHistory === true },
  };
}

// Whether statement `stmtId` of `txnNumber` ran here; the errors as for the write itself.
export function statementRan(known: CachedSession | undefined, txnNumber: number, stmtId: number, lsid: LogicalSessionId): boolean {
  if (checkTxnNumber(known, txnNumber, lsid) === 'new') return false;
  return priorExecution(known!, stmtId, lsid) !== undefined;
}

// What a write command's statements run now did, written in its unit: in the record for the
// txnNumber's first command (replacing the older txnNumber's, whose history goes), in a history
// entry for any later one. `next`: the fields of the state that change.
export function recordStatements(
  state: CachedSession, ctx: WriteContext, ns: string, recorded: readonly Doc[], image: { kind: 'preImage' | 'postImage'; doc: Doc } | undefined,
): { writes: SessionWrite[]; next: Partial<CachedSession> } {
  const { session, ts } = ctx;
  const txnNum = Long.fromNumber(state.txnNum);
  const writes: SessionWrite[] = [];
  let next: Partial<CachedSession>;
  if (!state.recordWritten) {
    if (state.olderHistory) writes.push({ type: 'dropOlderHistory', session, txnNum });
    writes.push({ type: 'putRecord', session, record: sessionRecord(session, txnNum, ctx, ns, recorded) });
    next = { recordWritten: true, olderHistory: false };
  } else {
    writes.push({ type: 'insertHistory', entry: { _id: { lsid: session, txnNum, stmtId: recorded[0]!.stmtId }, ns, ts, stmts: recorded } });
    writes.push({ type: 'setRecordFields', session, fields: lastWrite(ctx) });
    next = state.spilled ? {} : { spilled: true };
  }
  if (image !== undefined) writes.push({ type: 'putImage', session, image: { _id: session, txnNum, ts, imageKind: image.kind, image: image.doc, invalidated: false } });
  return { writes, next };
}

// The statements of a migrated history entry this shard does not know yet, or undefined when it
// takes none: a session already on a newer txnNumber here keeps it, and a statement can reach a
// shard twice (a range that comes back brings history this shard wrote or received before, and a
// donor may hold one statement both in a session's record and in a history entry). As MongoDB's
// migration destination, what is known is skipped.
export function migratedStatements(known: CachedSession | undefined, h: MigratedHistory): Doc[] | undefined {
  if (known !== undefined && known.txnNum > h.txnNum) return undefined;
  const same = known !== undefined && known.txnNum === h.txnNum;
  const stmts = same ? h.stmts.filter((st) => isIncompleteHistoryMarker(st) ? !known.incompleteHistory : !known.executed.has(statementResultFromBSON(st).stmtId)) : h.stmts;
  return stmts.length === 0 ? undefined : stmts;
}

// A migrated entry's statements join the session's state: a later part of the txnNumber on record
// here goes to the history, anything else becomes the record.
export function absorbMigrated(
  known: CachedSession | undefined, h: MigratedHistory, stmts: readonly Doc[], ctx: WriteContext, ns: string, migrationId: unknown,
): { state: CachedSession; writes: SessionWrite[] } {
  const { session } = ctx;
  const same = known !== undefined && known.txnNum === h.txnNum;
  const state: CachedSession = same
    ? { ...known, executed: new Map(known.executed), spilled: known.spilled || known.recordWritten }
    : { txnNum: h.txnNum, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false };
  absorbHistory(state, stmts);
  const txnNum = Long.fromNumber(h.txnNum);
  const writes: SessionWrite[] = [];
  if (same && known.recordWritten) {
    writes.push({ type: 'insertHistory', entry: { _id: { lsid: session, txnNum, stmtId: stmts[0]!.stmtId, from: migrationId }, ns, ts: ctx.ts, stmts } });
    writes.push({ type: 'setRecordFields', session, fields: lastWrite(ctx) });
  } else {
    if (known !== undefined && (known.spilled || known.olderHistory)) writes.push({ type: 'dropOlderHistory', session, txnNum });
    writes.push({ type: 'putRecord', session, record: sessionRecord(session, txnNum, ctx, ns, stmts) });
    state.recordWritten = true;
    state.olderHistory = false;
  }
  if (h.image !== undefined) writes.push({ type: 'putImage', session, image: { ...h.image, _id: session } });
  return { state, writes };
}

// A transaction's prepare, commit or abort: the record takes its txnNumber with `fields` (its
// state, times, prepared writes), the older txnNumber's history goes.
export function recordTransactionState(known: CachedSession | undefined, session: Doc, txnNumber: number, fields: Doc, committed: boolean): { state: CachedSession; writes: SessionWrite[] } {
  const txnNum = Long.fromNumber(txnNumber);
  const writes: SessionWrite[] = [];
  if (known !== undefined && (known.spilled || known.olderHistory)) writes.push({ type: 'dropOlderHistory', session, txnNum });
  writes.push({ type: 'putRecord', session, record: { _id: session, txnNum, ...fields } });
  return { state: { txnNum: txnNumber, executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false, committedTransaction: committed }, writes };
}

// The session as its record on disk says, or undefined without one (or without a txnNumber).
export function sessionFromRecord(record: Doc | undefined): CachedSession | undefined {
  if (record === undefined || !isNumber(record.txnNum)) return undefined;
  const state: CachedSession = { txnNum: toDouble(record.txnNum), executed: new Map(), incompleteHistory: false, spilled: false, recordWritten: true, olderHistory: false, committedTransaction: record.state === 'committed' };
  if (Array.isArray(record.stmts)) absorbHistory(state, record.stmts as Doc[]);
  return state;
}

// The history entries of the record's txnNumber join what it knows.
export function withHistoryEntries(state: CachedSession, entries: readonly Doc[]): CachedSession {
  for (const entry of entries) {
    absorbHistory(state, entry.stmts as Doc[]);
    state.spilled = true;
  }
  return state;
}

// The history entries a dropOlderHistory write deletes.
export function olderHistoryFilter(session: Doc, txnNum: Long): Doc {
  return { _id: { $lt: { lsid: session, txnNum }, $gte: { lsid: session, txnNum: new MinKey() } } };
}

// A session's record: MongoDB's fields, then docshard's: the namespace and statements of the
// txnNumber's first command.
function sessionRecord(session: Doc, txnNum: Long, ctx: WriteContext, ns: string, stmts: readonly Doc[]): Doc {
  return { _id: session, txnNum, lastWriteOpTime: opTime(ctx.ts), lastWriteDate: ctx.wallDate, ns, stmts };
}

function lastWrite(ctx: WriteContext): Doc {
  return { lastWriteOpTime: opTime(ctx.ts), lastWriteDate: ctx.wallDate };
}

// An optime without replication: the term is -1, as MongoDB writes it for a standalone.
export function opTime(ts: Timestamp): Doc {
  return { ts, t: Long.fromNumber(-1) };
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
