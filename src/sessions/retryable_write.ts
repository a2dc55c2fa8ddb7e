import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { describeSession, type LogicalSessionId } from './session_id.js';

// The rules of retryable writes (MongoDB's TransactionParticipant for retryable writes), pure: a
// session runs one txnNumber at a time; each statement of it (lsid, txnNumber, stmtId) takes
// effect at most once, and a retry of one that ran is answered from what it did.

// What a statement did, as much as its retry's reply needs.
export type StatementResult =
  | { readonly op: 'insert' }
  | { readonly op: 'update'; readonly n: number; readonly nModified: number; readonly upserted?: unknown }
  | { readonly op: 'delete'; readonly n: number }
  // findAndModify's document is the session's image in config.image_collection.
  | { readonly op: 'findAndModify'; readonly lastErrorObject: Doc; readonly image: 'preImage' | 'postImage' | 'none' };

// What a process knows of one session's retryable writes: the txnNumber in progress, the
// statements of it that ran, and whether some of its history is missing (it came in a migration
// that could not carry all of it): then a statement not known to have run may have.
export interface SessionTxnState {
  readonly txnNum: number;
  readonly executed: ReadonlyMap<number, StatementResult>;
  readonly incompleteHistory: boolean;
}

// A statement id no statement has: its history entry marks the txnNumber's history incomplete
// (MongoDB's kIncompleteHistoryStmtId).
export const INCOMPLETE_HISTORY_STMT_ID = -1;

// Whether txnNumber continues the session's current retryable write or starts a newer one; an
// older one is refused, as its history is gone.
export function checkTxnNumber(state: SessionTxnState | undefined, txnNumber: number, lsid: LogicalSessionId): 'current' | 'new' {
  if (state === undefined || txnNumber > state.txnNum) return 'new';
  if (txnNumber === state.txnNum) return 'current';
  throw new MongoError(ErrorCodes.TransactionTooOld,
    `Retryable write with txnNumber ${txnNumber} is prohibited on session ${describeSession(lsid)} because a newer retryable write with txnNumber ${state.txnNum} has already started on this session.`);
}

// What statement `stmtId` of the current txnNumber did, or undefined when it has not run.
export function priorExecution(state: SessionTxnState, stmtId: number, lsid: LogicalSessionId): StatementResult | undefined {
  const prior = state.executed.get(stmtId);
  if (prior !== undefined || !state.incompleteHistory) return prior;
  throw new MongoError(ErrorCodes.IncompleteTransactionHistory,
    `Incomplete history detected for transaction ${state.txnNum} on session ${describeSession(lsid)}`);
}

// The statement ids of a write command's statements: `stmtIds` (a router's sub-batch names the
// client's ids) or `stmtId` (the first, default 0) counted up.
export function statementIds(cmd: Doc, count: number): number[] {
  if (Array.isArray(cmd.stmtIds)) {
    if (cmd.stmtIds.length !== count) throw new MongoError(ErrorCodes.InvalidLength, 'The number of stmtIds must match the number of statements');
    return cmd.stmtIds.map((v) => {
      if (!isNumber(v)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'stmtIds' must hold integers");
      return toDouble(v);
    });
  }
  const first = isNumber(cmd.stmtId) ? toDouble(cmd.stmtId) : 0;
  return Array.from({ length: count }, (_, i) => first + i);
}

export function statementResultToBSON(stmtId: number, r: StatementResult): Doc {
  return { stmtId, ...r };
}

export function statementResultFromBSON(raw: unknown): { stmtId: number; result: StatementResult } {
  if (!isPlainObject(raw) || !isNumber(raw.stmtId) || typeof raw.op !== 'string') throw new MongoError(ErrorCodes.InternalError, 'malformed retryable write history entry');
  const { stmtId, key: _key, ...rest } = raw;
  const num = (v: unknown) => (isNumber(v) ? toDouble(v) : 0);
  switch (rest.op) {
    case 'insert': return { stmtId: toDouble(stmtId), result: { op: 'insert' } };
    case 'update': return { stmtId: toDouble(stmtId), result: { op: 'update', n: num(rest.n), nModified: num(rest.nModified), ...(rest.upserted !== undefined ? { upserted: rest.upserted } : {}) } };
    case 'delete': return { stmtId: toDouble(stmtId), result: { op: 'delete', n: num(rest.n) } };
    case 'findAndModify': return {
      stmtId: toDouble(stmtId),
      result: { op: 'findAndModify', lastErrorObject: isPlainObject(rest.lastErrorObject) ? rest.lastErrorObject : {}, image: rest.image === 'preImage' || rest.image === 'postImage' ? rest.image : 'none' },
    };
    default: throw new MongoError(ErrorCodes.InternalError, `unknown retryable write history entry op ${String(rest.op)}`);
  }
}
