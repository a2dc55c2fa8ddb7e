import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// The rollback id a sync source reports, so a fetcher sees that it rolled back meanwhile.
export const replSetGetRBIDCommand: CommandDefinition = {
  names: ['replSetGetRBID'],
  adminOnly: true,
  run: (ctx) => {
    const repl = replicationOf(ctx.node);
    repl.requireConfig();
    return { rbid: repl.rollbackId(), ok: 1 };
  },
};
