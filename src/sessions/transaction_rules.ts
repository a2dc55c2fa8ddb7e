import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// MongoDB's TransactionParticipant checks of a statement's txnNumber against the session's
// (pure): what a statement of transaction `txnNumber` does given the session's transaction here
// and the txnNumber its retryable writes or committed transactions last used.

export type TransactionPhase = 'inProgress' | 'prepared' | 'committed' | 'aborted';

export interface SessionTransaction {
  txnNumber: number;
  phase: TransactionPhase;
}

export interface StatementRequest {
  txnNumber: number;
  startTransaction: boolean;
  command: string;
}

// 'start': begin the transaction (aborting an older one in progress); 'continue': run in the one
// in progress; 'committed': a commitTransaction of one that committed, answered ok again.
export type StatementDecision = 'start' | 'continue' | 'committed';

export function decideStatement(
  current: SessionTransaction | undefined,
  lastUsed: { txnNum: number; committedTransaction: boolean; ranStatements?: boolean } | undefined,
  req: StatementRequest,
  session: string,
): StatementDecision {
  const { txnNumber } = req;
  if (current?.phase === 'prepared' && txnNumber > current.txnNumber) {
    throw new MongoError(ErrorCodes.PreparedTransactionInProgress, `Cannot start a new transaction ${txnNumber} on session ${session} while transaction ${current.txnNumber} is prepared: it ends only with its coordinator's decision.`);
  }
  const newest = Math.max(current?.txnNumber ?? -1, lastUsed?.txnNum ?? -1);
  if (txnNumber < newest) {
    throw new MongoError(ErrorCodes.TransactionTooOld, `Cannot start transaction ${txnNumber} on session ${session} because a newer transaction ${newest} has already started.`);
  }
  const here = current?.txnNumber === txnNumber ? current : undefined;
  const committedBefore = here === undefined && lastUsed?.txnNum === txnNumber && lastUsed.committedTransaction;
  if (req.startTransaction) {
    // A retryable write of this txnNumber that ran no statement here (its one update would have
    // moved a document to another shard) becomes the transaction a router moves it in.
    const retryableWriteRan = lastUsed?.txnNum === txnNumber && (lastUsed.committedTransaction || lastUsed.ranStatements !== false);
    if (here !== undefined || retryableWriteRan) {
      const state = here?.phase ?? (committedBefore ? 'committed' : 'a retryable write');
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `Cannot start a transaction at given transaction number ${txnNumber} on session ${session} because a transaction with the same number is in state ${state}`);
    }
    return 'start';
  }
  const phase = here?.phase ?? (committedBefore ? 'committed' : undefined);
  if (phase === undefined) {
    throw new MongoError(ErrorCodes.NoSuchTransaction, `Given transaction number ${txnNumber} does not match any in-progress transactions. The active transaction number is ${newest}`);
  }
  if (phase === 'aborted') throw new MongoError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txnNumber} } has been aborted.`);
  if (phase === 'committed') {
    if (req.command === 'commitTransaction') return 'committed';
    throw new MongoError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txnNumber} } has been committed.`);
  }
  if (phase === 'prepared' && !PREPARED_MAY_RUN.has(req.command)) {
    throw new MongoError(ErrorCodes.PreparedTransactionInProgress, `Cannot call ${req.command} on a prepared transaction: only commitTransaction and abortTransaction may follow prepareTransaction.`);
  }
  return 'continue';
}

const PREPARED_MAY_RUN = new Set(['commitTransaction', 'abortTransaction', 'prepareTransaction']);

// The commands a transaction may run (MongoDB's txnCmdAllowlist).
const IN_TRANSACTION = new Set([
  'find', 'getMore', 'killCursors', 'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'aggregate', 'distinct',
  'create', 'createIndexes', 'commitTransaction', 'abortTransaction', 'bulkWrite', 'coordinateCommitTransaction', 'prepareTransaction',
]);

// A command a transaction may not run, or a database it may not touch: OperationNotSupportedInTransaction.
export function checkAllowedInTransaction(command: string, db: string, first: boolean, readConcern: unknown): void {
  if (!IN_TRANSACTION.has(command)) {
    throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, `Cannot run '${command}' in a multi-document transaction.`);
  }
  if ((db === 'config' || db === 'admin' || db === 'local') && command !== 'commitTransaction' && command !== 'abortTransaction' && command !== 'prepareTransaction') {
    throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, `Cannot run command against the '${db}' database in a transaction.`);
  }
  if (readConcern === undefined) return;
  if (!first) throw new MongoError(ErrorCodes.InvalidOptions, 'Only the first command in a transaction may specify a readConcern');
  const level = (readConcern as { level?: unknown }).level ?? 'local';
  if (level !== 'local' && level !== 'majority' && level !== 'snapshot') {
    throw new MongoError(ErrorCodes.InvalidOptions, "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run in a transaction");
  }
}
