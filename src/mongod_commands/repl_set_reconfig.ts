import { currentDeadline } from '../base/operation_deadline.js';
import { isPlainObject } from '../bson/values.js';
import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// replSetReconfig (mongosh's rs.reconfig, rs.add and rs.remove, which send replSetGetConfig's
// config with the version raised by one): the checks, the waits and the install are the
// coordinator's (replication/replication_coordinator.ts); maxTimeMS bounds its waits.
export const replSetReconfigCommand: CommandDefinition = {
  names: ['replSetReconfig'],
  adminOnly: true,
  run: async (ctx, cmd) => {
    const repl = replicationOf(ctx.node);
    const given = cmd.replSetReconfig;
    if (!isPlainObject(given)) return { ok: 0, errmsg: 'no configuration specified' };
    await repl.reconfig(given, cmd.force === true, currentDeadline());
    return { ok: 1 };
  },
};
