import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// replSetFreeze N: no standing for election for N seconds; 0 unfreezes.
export const replSetFreezeCommand: CommandDefinition = {
  names: ['replSetFreeze'],
  adminOnly: true,
  run: (ctx, cmd) => {
    const secs = Number(cmd.replSetFreeze);
    if (!Number.isFinite(secs) || secs < 0) throw new MongoError(ErrorCodes.BadValue, 'replSetFreeze takes a number of seconds');
    return { ...replicationOf(ctx.node).freeze(secs), ok: 1 };
  },
};
