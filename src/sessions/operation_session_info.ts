import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, toDouble, type Doc } from '../bson/values.js';

// What a standalone mongod answers to a transaction (logical_session_id_helpers.cpp): what a
// process without transactions answers to every statement of one. A router answers as mongos does
// over shards that cannot run transactions: mongos passes the shard's first refusal back to the
// client, with no TransientTransactionError label, so the driver's withTransaction gives up at
// once instead of retrying.
const NO_TRANSACTIONS = 'Transaction numbers are only allowed on a replica set member or mongos';

// MongoDB's checks of a command's session fields (initializeOperationSessionInfo), in its order:
// a txnNumber needs an lsid; autocommit needs a txnNumber and may only be false; startTransaction
// needs autocommit and may only be true. What passes and carries `autocommit: false` is a
// statement of a transaction, refused where `transactions` is false. A retryable write (lsid and
// txnNumber, no autocommit) passes.
export function checkOperationSessionInfo(cmd: Doc, transactions: boolean): void {
  const { lsid, txnNumber, autocommit, startTransaction } = cmd;
  if (txnNumber === undefined && autocommit === undefined && startTransaction === undefined) return;
  if (txnNumber !== undefined && lsid === undefined) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'Transaction number requires a session ID to also be specified');
  }
  if (txnNumber !== undefined && isNumber(txnNumber) && toDouble(txnNumber) < 0) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'Transaction number cannot be negative');
  }
  if (autocommit !== undefined && txnNumber === undefined) {
    throw new MongoError(ErrorCodes.InvalidOptions, "'autocommit' field requires a transaction number to also be specified");
  }
  if (autocommit !== undefined && autocommit !== false) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'Specifying autocommit=true is not allowed.');
  }
  if (autocommit === undefined && startTransaction !== undefined) {
    throw new MongoError(ErrorCodes.InvalidOptions, "'startTransaction' field requires 'autocommit' field to also be specified");
  }
  if (startTransaction !== undefined && startTransaction !== true) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'Specifying startTransaction=false is not allowed.');
  }
  if (autocommit === false && !transactions) throw new MongoError(ErrorCodes.IllegalOperation, NO_TRANSACTIONS);
}

// commitTransaction and abortTransaction outside a transaction, as mongod answers them.
export function noTransactionToEnd(command: 'commitTransaction' | 'abortTransaction' | 'prepareTransaction'): MongoError {
  return new MongoError(ErrorCodes.CommandFailed, `${command} must be run within a transaction`);
}

// The commands a txnNumber may come with outside a transaction: the retryable writes
// (write_ops_exec's retryable commands). Any other answers as mongod does.
const RETRYABLE_WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);

export function isRetryableWriteCommand(name: string): boolean {
  return RETRYABLE_WRITE_COMMANDS.has(name);
}

export function checkRetryableWriteCommand(name: string, cmd: Doc): void {
  if (cmd.txnNumber === undefined || cmd.autocommit !== undefined || RETRYABLE_WRITE_COMMANDS.has(name)) return;
  throw new MongoError(50768, `txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and ${name} is not a retryable write command.`);
}
