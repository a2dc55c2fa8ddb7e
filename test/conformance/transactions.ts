import type { ClientSession, TransactionOptions } from 'mongodb';
import { readPreferenceOf, toNative } from './arguments.js';
import type { Doc } from './test_file.js';

// Transactions of session entities: the options a test gives startTransaction and
// withTransaction, and the driver's transaction state and pinned mongos as the format names them.

const OPTION_NAMES = ['readConcern', 'writeConcern', 'readPreference', 'maxCommitTimeMS'];

/** The TransactionOptions among an operation's arguments; the others are the caller's. */
export function transactionOptionsOf(args: Doc): TransactionOptions {
  const options: Doc = {};
  for (const name of OPTION_NAMES) {
    if (args[name] === undefined) continue;
    options[name] = name === 'readPreference' ? readPreferenceOf(args[name] as Doc) : toNative(args[name]);
  }
  return options as TransactionOptions;
}

// The driver's TxnState values (not exported in its types) by the names
// assertSessionTransactionState uses; an empty commit is a commit to the test.
const STATE_NAMES: Record<string, string> = {
  NO_TRANSACTION: 'none',
  STARTING_TRANSACTION: 'starting',
  TRANSACTION_IN_PROGRESS: 'in_progress',
  TRANSACTION_COMMITTED: 'committed',
  TRANSACTION_COMMITTED_EMPTY: 'committed',
  TRANSACTION_ABORTED: 'aborted',
};

export function transactionState(session: ClientSession): string {
  const state = (session as unknown as { transaction: { state: string } }).transaction.state;
  return STATE_NAMES[state] ?? `unknown driver state ${state}`;
}

/**
 * The mongos a sharded transaction is pinned to; the driver pins it at the transaction's first
 * server selection (one router in the URI or several) and keeps it on its transaction state.
 */
export function pinnedMongos(session: ClientSession): string | undefined {
  if (!session.isPinned) return undefined;
  return (session as unknown as { transaction: { server?: { description: { address: string } } } }).transaction.server?.description.address;
}
