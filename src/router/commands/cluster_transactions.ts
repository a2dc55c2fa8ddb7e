import type { RouterCommand } from '../router_services.js';
import { noTransactionToEnd } from '../../sessions/operation_session_info.js';

// As on a node (commands/transaction_commands.ts): no transaction to end, never ok.
export const clusterCommitTransactionCommand: RouterCommand = {
  names: ['commitTransaction'],
  adminOnly: true,
  run() {
    throw noTransactionToEnd('commitTransaction');
  },
};

export const clusterAbortTransactionCommand: RouterCommand = {
  names: ['abortTransaction'],
  adminOnly: true,
  run() {
    throw noTransactionToEnd('abortTransaction');
  },
};
