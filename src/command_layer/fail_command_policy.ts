import { codeNameOf, ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { FailPointData } from '../base/fail_points.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { errorLabelsFor } from '../sessions/error_labels.js';
import { WRITE_CONCERN_COMMANDS } from './replication_waits.js';

// The fail points the driver specifications' tests inject faults with, decided from their data
// alone (fail_command.ts and crud/transactional_write_fail_point.ts apply them):
// - failCommand, as commands.cpp applies it: shouldActivateFailCommandFailPoint says which
//   commands it applies to, evaluateFailCommandFailPoint what it does to one before it runs
//   (block, close the connection, fail), and a write concern error is added after a command
//   that ran (service_entry_point_common.cpp, strategy.cpp on mongos);
// - onPrimaryTransactionalWrite, as transaction_participant.cpp applies it to a retryable write.

export const FAIL_COMMAND = 'failCommand';
export const ON_PRIMARY_TRANSACTIONAL_WRITE = 'onPrimaryTransactionalWrite';

// MongoDB's message for every failure the failCommand fail point causes.
const FAIL_COMMAND_MESSAGE = "Failing command via 'failCommand' failpoint";
// What MongoDB raises after it closed the connection (no client ever reads it).
const CLOSED_CONNECTION_CODE = 50985;

// A command as the fail point sees it.
export interface FailCommandTarget {
  // Every name the command answers to: failCommands may name any one (findandmodify for
  // findAndModify), as MongoDB matches them with hasAlias.
  names: readonly string[];
  // The namespace it is about, `db.coll`, or `db.$cmd` for one about a database; data.namespace
  // must equal it.
  ns: string;
  // The appName of the connection's client metadata; data.appName must equal it.
  appName: string | undefined;
  // One of docshard's own processes: failed only with data.failInternalCommands.
  internalClient: boolean;
}

export function failCommandApplies(data: FailPointData, target: FailCommandTarget): boolean {
  if (target.names.includes('configureFailPoint')) return false; // never, even when named
  if (data.appName !== undefined && data.appName !== target.appName) return false;
  if (data.namespace !== undefined && data.namespace !== target.ns) return false;
  if (data.failInternalCommands !== true && target.internalClient) return false;
  const named = Array.isArray(data.failCommands) ? data.failCommands : [];
  return named.some((name) => typeof name === 'string' && target.names.includes(name));
}

// What the fail point does to a command before it runs; absent fields do nothing. Only data that
// does something there is counted there (a writeConcernError alone is counted after the command).
export interface FailCommandEffect {
  blockTimeMS: number;
  closeConnection: boolean;
  errorCode: number | undefined;
}

export function actsBeforeRun(data: FailPointData): boolean {
  return data.closeConnection === true || data.blockConnection === true || isNumber(data.errorCode);
}

// Throws InvalidOptions, as MongoDB does when the fail point fires, for a block without a time.
export function failCommandEffect(data: FailPointData): FailCommandEffect {
  let blockTimeMS = 0;
  if (data.blockConnection === true) {
    if (!isNumber(data.blockTimeMS)) throw new MongoError(ErrorCodes.InvalidOptions, "must specify 'blockTimeMS' when 'blockConnection' is true");
    blockTimeMS = toDouble(data.blockTimeMS);
    if (blockTimeMS < 0) throw new MongoError(ErrorCodes.InvalidOptions, "'blockTimeMS' must be non-negative");
  }
  return { blockTimeMS, closeConnection: data.closeConnection === true, errorCode: isNumber(data.errorCode) ? toDouble(data.errorCode) : undefined };
}

// The command a failed command's labels are decided for, and by which kind of process.
export interface LabelledCommand {
  name: string;
  cmd: Doc;
  router: boolean;
}

// The labels of a reply the fail point failed (errorCode) or gave a writeConcernError. Its
// errorLabels, when it has them (even []), replace whatever the server would add
// (error_labels.cpp's errorLabelsOverride). Else the server's own: a node adds RetryableWriteError
// to a retryable write's retriable error (and NoWritesPerformed when it failed before running);
// a router adds none for a code outside a transaction, as mongos leaves RetryableWriteError to its
// shards, and a transaction's (TransientTransactionError, UnknownTransactionCommitResult) as both do.
function labelsOf(data: FailPointData, command: LabelledCommand, code: number | undefined, writeConcernCode: number | undefined): string[] {
  if (Array.isArray(data.errorLabels)) return data.errorLabels.map(String);
  if (command.router && command.cmd.autocommit !== false) return [];
  // An injected error comes before the command ran; a write concern error after it wrote.
  return errorLabelsFor(command.name, command.cmd, code, writeConcernCode, code === undefined);
}

export function failCommandErrorReply(data: FailPointData, command: LabelledCommand, code: number): Doc {
  const reply: Doc = { ok: 0, errmsg: FAIL_COMMAND_MESSAGE, code, codeName: codeNameOf(code) };
  const labels = labelsOf(data, command, code, undefined);
  if (labels.length > 0) reply.errorLabels = labels;
  return reply;
}

export function closedConnectionReply(): Doc {
  return { ok: 0, errmsg: FAIL_COMMAND_MESSAGE, code: CLOSED_CONNECTION_CODE, codeName: codeNameOf(CLOSED_CONNECTION_CODE) };
}

// Only the commands that wait for a write concern get data.writeConcernError (their invocation's
// supportsWriteConcern in MongoDB): the config server's catalog commands among them, which always
// wait for majority.
export function addsWriteConcernError(data: FailPointData, target: FailCommandTarget): boolean {
  return isPlainObject(data.writeConcernError) && target.names.some((name) => WRITE_CONCERN_COMMANDS.has(name) || name.startsWith('_configsvr')) && failCommandApplies(data, target);
}

// A command that ran and succeeded, answered as if waiting for its write concern had failed with
// data.writeConcernError: the write stays done, the reply says ok: 1.
export function withInjectedWriteConcernError(data: FailPointData, command: LabelledCommand, reply: Doc): Doc {
  const writeConcernError = data.writeConcernError as Doc;
  const out: Doc = { ...reply, writeConcernError };
  const labels = labelsOf(data, command, undefined, isNumber(writeConcernError.code) ? toDouble(writeConcernError.code) : undefined);
  if (labels.length > 0) out.errorLabels = labels;
  return out;
}

// onPrimaryTransactionalWrite, when it fires for a retryable write's write unit: closeConnection
// (true unless false) closes the connection the write came on, so its reply is lost;
// failBeforeCommitExceptionCode fails the write unit, so nothing of it is committed.
export interface TransactionalWriteEffect {
  closeConnection: boolean;
  failBeforeCommitCode: number | undefined;
}

export function transactionalWriteEffect(data: FailPointData): TransactionalWriteEffect {
  const code = data.failBeforeCommitExceptionCode;
  return { closeConnection: data.closeConnection !== false, failBeforeCommitCode: isNumber(code) ? toDouble(code) : undefined };
}
