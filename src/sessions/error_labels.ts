import type { Doc } from '../bson/values.js';
import { isRetryableWriteCommand } from './operation_session_info.js';

// MongoDB's RetriableError category (error_codes.yml): failures after which the same write, sent
// again, can succeed.
const RETRIABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

// ErrorCodes::isSnapshotError, isNeedRetargettingError and the codes error_labels.cpp adds: after
// these the whole transaction, run again, can succeed.
const TRANSIENT_TRANSACTION_CODES = new Set([
  112, // WriteConflict
  24, // LockTimeout
  267, // PreparedTransactionInProgress
  239, // SnapshotTooOld
  246, // SnapshotUnavailable
  250, // StaleChunkHistory
  272, // MigrationConflict
  13388, // StaleConfig
  150, // StaleEpoch
  249, // StaleDbVersion
  287, // CannotImplicitlyCreateCollection
]);

// The labels MongoDB's error_labels.cpp puts on a reply: RetryableWriteError on a retryable write
// (an lsid and txnNumber, no autocommit) whose error or writeConcernError is retriable, with
// NoWritesPerformed when the command wrote nothing before it failed; in a transaction,
// TransientTransactionError where running the whole transaction again can succeed (NoSuchTransaction
// too, but on a commit or abort with a write concern error), and UnknownTransactionCommitResult on
// a commit that may or may not have committed (a retriable error, a write concern error, a time
// limit), with RetryableWriteError as on any retryable command.
export function errorLabelsFor(commandName: string, cmd: Doc, code: number | undefined, writeConcernCode: number | undefined, wroteSomething: boolean): string[] {
  if (cmd.autocommit === false) return transactionLabels(commandName, code, writeConcernCode);
  if (cmd.txnNumber === undefined || cmd.autocommit !== undefined || !isRetryableWriteCommand(commandName)) return [];
  const retriable = (code !== undefined && RETRIABLE_CODES.has(code)) || (writeConcernCode !== undefined && RETRIABLE_CODES.has(writeConcernCode));
  if (!retriable) return [];
  return wroteSomething ? ['RetryableWriteError'] : ['RetryableWriteError', 'NoWritesPerformed'];
}

function transactionLabels(commandName: string, code: number | undefined, writeConcernCode: number | undefined): string[] {
  const ending = commandName === 'commitTransaction' || commandName === 'abortTransaction';
  const retriable = (code !== undefined && RETRIABLE_CODES.has(code)) || (writeConcernCode !== undefined && RETRIABLE_CODES.has(writeConcernCode));
  const labels: string[] = [];
  // A statement's retriable error (a shard shutting down or stepping down) is transient too; a
  // commit's or abort's is retried as it is instead.
  const transient = code !== undefined && (TRANSIENT_TRANSACTION_CODES.has(code) || (code === 251 && !(ending && writeConcernCode !== undefined)) || (!ending && RETRIABLE_CODES.has(code)));
  if (transient) labels.push('TransientTransactionError');
  if (ending && retriable) labels.push('RetryableWriteError');
  // A write concern that can never be satisfied says nothing about whether the commit happened.
  const unknownWriteConcern = writeConcernCode !== undefined && writeConcernCode !== 100 && writeConcernCode !== 79;
  if (commandName === 'commitTransaction' && (retriable || unknownWriteConcern || code === 50)) labels.push('UnknownTransactionCommitResult');
  return labels;
}
