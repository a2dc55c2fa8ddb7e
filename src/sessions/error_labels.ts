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

// The labels MongoDB's error_labels.cpp puts on a reply: RetryableWriteError on a retryable write
// (an lsid and txnNumber, no autocommit) whose error or writeConcernError is retriable, with
// NoWritesPerformed when the command wrote nothing before it failed.
export function errorLabelsFor(commandName: string, cmd: Doc, code: number | undefined, writeConcernCode: number | undefined, wroteSomething: boolean): string[] {
  if (cmd.txnNumber === undefined || cmd.autocommit !== undefined || !isRetryableWriteCommand(commandName)) return [];
  const retriable = (code !== undefined && RETRIABLE_CODES.has(code)) || (writeConcernCode !== undefined && RETRIABLE_CODES.has(writeConcernCode));
  if (!retriable) return [];
  return wroteSomething ? ['RetryableWriteError'] : ['RetryableWriteError', 'NoWritesPerformed'];
}
