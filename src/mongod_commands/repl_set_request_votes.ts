import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// A candidate's vote request; a granted vote is in local.replset.election before this answers.
export const replSetRequestVotesCommand: CommandDefinition = {
  names: ['replSetRequestVotes'],
  adminOnly: true,
  run: (ctx, cmd) => replicationOf(ctx.node).handleRequestVotes(cmd),
};
