import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

export const replSetGetStatusCommand: CommandDefinition = {
  names: ['replSetGetStatus'],
  adminOnly: true,
  run: (ctx) => replicationOf(ctx.node).status(),
};
