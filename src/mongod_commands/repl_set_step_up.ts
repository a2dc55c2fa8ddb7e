import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// replSetStepUp: this member stands for election now; ok once it is primary.
export const replSetStepUpCommand: CommandDefinition = {
  names: ['replSetStepUp'],
  adminOnly: true,
  run: async (ctx) => {
    await replicationOf(ctx.node).stepUp();
    return { ok: 1 };
  },
};
