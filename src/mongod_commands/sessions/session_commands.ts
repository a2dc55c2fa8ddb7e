import { SessionKillerMatcher } from '../../sessions/kill_sessions.js';
import type { CommandDefinition } from '../command.js';
import { KILL_COMMAND_NAMES, killPatterns, sessionsArgument, startSession } from '../../command_layer/session_arguments.js';

// The logical session commands, as mongod answers them, over the arguments of
// command_layer/session_arguments.ts (the router answers the same ones from the same parsing, in
// src/router/commands/cluster_sessions.ts).

export const startSessionCommand: CommandDefinition = {
  names: ['startSession'],
  run: (ctx) => startSession(ctx.node.sessions, ctx.node.wallClock.now()),
};

export const refreshSessionsCommand: CommandDefinition = {
  names: ['refreshSessions'],
  run(ctx, cmd) {
    const now = ctx.node.wallClock.now();
    for (const lsid of sessionsArgument('refreshSessions', cmd)) ctx.node.sessions.vivify(lsid, now);
    return { ok: 1 };
  },
};

export const endSessionsCommand: CommandDefinition = {
  names: ['endSessions'],
  run(ctx, cmd) {
    ctx.node.sessions.end(sessionsArgument('endSessions', cmd));
    return { ok: 1 };
  },
};

// Killing interrupts the sessions' operations in progress and closes their cursors here.
export const killSessionsCommands: CommandDefinition[] = KILL_COMMAND_NAMES.map((name) => ({
  names: [name],
  async run(ctx, cmd) {
    await ctx.node.sessionKiller.kill(new SessionKillerMatcher(killPatterns(name, cmd)));
    return { ok: 1 };
  },
}));
