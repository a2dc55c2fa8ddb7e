import type { CommandDefinition } from './command.js';
import { replicationOf } from './repl_set_support.js';

// A member's heartbeat (replication/member_messages.ts has its fields).
export const replSetHeartbeatCommand: CommandDefinition = {
  names: ['replSetHeartbeat'],
  run: (ctx, cmd) => replicationOf(ctx.node).handleHeartbeat(cmd),
};
