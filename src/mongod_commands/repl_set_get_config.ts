import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

export const replSetGetConfigCommand: CommandDefinition = {
  names: ['replSetGetConfig'],
  adminOnly: true,
  run: (ctx) => {
    const repl = replicationOf(ctx.node);
    repl.requireConfig();
    return { config: repl.config(), ok: 1 };
  },
};
