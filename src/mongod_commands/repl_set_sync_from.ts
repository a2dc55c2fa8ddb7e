import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// replSetSyncFrom "host:port" (mongosh's rs.syncFrom): this member's next sync source; the
// checks and the reply are the coordinator's.
export const replSetSyncFromCommand: CommandDefinition = {
  names: ['replSetSyncFrom'],
  adminOnly: true,
  run: (ctx, cmd) => {
    const host = cmd.replSetSyncFrom;
    if (typeof host !== 'string' || host === '') throw new MongoError(ErrorCodes.FailedToParse, 'Empty host component parsing HostAndPort from ""');
    return { ...replicationOf(ctx.node).syncFrom(host), ok: 1 };
  },
};
