import type { RouterCommand } from '../router_services.js';
import { SessionKillerMatcher } from '../../sessions/kill_sessions.js';
import { KILL_COMMAND_NAMES, killPatterns, sessionsArgument, startSession } from '../../command_layer/session_arguments.js';

// The logical session commands as mongos answers them. startSession, refreshSessions and
// endSessions act on the router's own session cache, whose refresh carries them to
// config.system.sessions; the kill commands interrupt the sessions' operations here, close their
// cluster cursors (and so their shard cursors), then kill them on every shard.
export const clusterSessionCommands: readonly RouterCommand[] = [
  { names: ['startSession'], run: (ctx) => startSession(ctx.router.sessions, ctx.router.wallClock.now()) },
  {
    names: ['refreshSessions'],
    run(ctx, cmd) {
      const now = ctx.router.wallClock.now();
      for (const lsid of sessionsArgument('refreshSessions', cmd)) ctx.router.sessions.vivify(lsid, now);
      return { ok: 1 };
    },
  },
  {
    names: ['endSessions'],
    run(ctx, cmd) {
      ctx.router.sessions.end(sessionsArgument('endSessions', cmd));
      return { ok: 1 };
    },
  },
  ...KILL_COMMAND_NAMES.map((name): RouterCommand => ({
    names: [name],
    async run(ctx, cmd) {
      await ctx.router.sessionKiller.kill(new SessionKillerMatcher(killPatterns(name, cmd)));
      return { ok: 1 };
    },
  })),
];
