import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// A member syncing from this one reports its position and its own downstream members'.
export const replSetUpdatePositionCommand: CommandDefinition = {
  names: ['replSetUpdatePosition'],
  adminOnly: true,
  run: (ctx, cmd) => replicationOf(ctx.node).handleUpdatePosition(cmd),
};
