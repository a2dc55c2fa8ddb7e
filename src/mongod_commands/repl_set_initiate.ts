import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isPlainObject } from '../bson/values.js';
import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// replSetInitiate: checks the config (replication/replica_set_config_document.ts), asks every other
// member whether it is an empty member of the set (the quorum check), then stores the config and
// starts the member. Without a config, a one-member set of this node, as MongoDB builds it.
export const replSetInitiateCommand: CommandDefinition = {
  names: ['replSetInitiate'],
  adminOnly: true,
  run: async (ctx, cmd) => {
    const repl = replicationOf(ctx.node, 'This node was not started with replication enabled.');
    const given = cmd.replSetInitiate;
    if (given !== undefined && given !== null && !isPlainObject(given)) throw new MongoError(ErrorCodes.TypeMismatch, 'no configuration specified');
    const config = isPlainObject(given) ? given : { _id: repl.setName, version: 1, members: [{ _id: 0, host: `${ctx.node.options.bindIp}:${ctx.node.options.port}` }] };
    await repl.initiate(config);
    return { ok: 1 };
  },
};
