import { MongoError } from '../../base/errors.js';
import { sessionIdOf } from '../../sessions/session_id.js';
import { optionalNumber } from '../../command_layer/args.js';
import type { CommandDefinition } from '../command.js';

// docshard's own: whether a retryable write's statement ran on this shard. A router asks every
// shard of the collection before a write without shard key, whose filter may find another
// document, on another shard, when it is retried (MongoDB answers the same question from the
// internal transaction it runs such a write in). The statement is named by `txnNum` and `stmtId`,
// not `txnNumber`, as this command writes nothing.
export const retryableStatementExecutedCommand: CommandDefinition = {
  names: ['_shardsvrRetryableStatementExecuted'],
  adminOnly: true,
  run(ctx, cmd) {
    const txnNum = optionalNumber(cmd, 'txnNum');
    if (txnNum === undefined) throw new MongoError(40414, "BSON field '_shardsvrRetryableStatementExecuted.txnNum' is missing but a required field");
    const stmtId = optionalNumber(cmd, 'stmtId') ?? 0;
    return { executed: ctx.node.sessionCatalog.statementExecuted(sessionIdOf(cmd.lsid), txnNum, stmtId), ok: 1 };
  },
};
