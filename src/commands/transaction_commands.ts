import type { CommandDefinition } from './command.js';
import { noTransactionToEnd } from '../sessions/operation_session_info.js';

// There are no transactions to end yet: a statement of one is refused by the dispatcher's session
// check, and these answer as mongod does outside a transaction, never ok.
export const commitTransactionCommand: CommandDefinition = {
  names: ['commitTransaction'],
  adminOnly: true,
  run() {
    throw noTransactionToEnd('commitTransaction');
  },
};

export const abortTransactionCommand: CommandDefinition = {
  names: ['abortTransaction'],
  adminOnly: true,
  run() {
    throw noTransactionToEnd('abortTransaction');
  },
};
