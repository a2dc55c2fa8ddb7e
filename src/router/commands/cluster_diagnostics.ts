import os from 'node:os';
import type { RouterCommand } from '../router_services.js';
import { buildInfoReply, commandLine, helloReply, hostInfoReply, SERVER_VERSION } from '../../command_layer/server_description.js';
import { runProfile } from '../../command_layer/profile_settings.js';
import { logLevelOf, setParameter } from '../../command_layer/log_level.js';
import { slowOperationSettingsOf } from '../../metrics/slow_operations.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { routerHelloAuthentication } from './cluster_auth.js';

// A mongos hello: `msg: "isdbgrid"` is what makes drivers and mongosh treat us as a router.
export const clusterHelloCommand: RouterCommand = {
  names: ['hello', 'isMaster', 'ismaster'],
  run: (ctx, cmd) => {
    const reply = { ...helloReply(ctx.conn, cmd, ctx.router.wallClock.now()), msg: 'isdbgrid', ok: 1 };
    if (cmd.saslSupportedMechs === undefined && cmd.speculativeAuthenticate === undefined) return reply;
    return routerHelloAuthentication(ctx, cmd).then((auth) => ({ ...reply, ...auth }));
  },
};

export const clusterPingCommand: RouterCommand = { names: ['ping'], run: () => ({ ok: 1 }) };
export const clusterHostInfoCommand: RouterCommand = { names: ['hostInfo'], run: (ctx) => hostInfoReply(ctx.router.wallClock.now()) };
export const clusterGetCmdLineOptsCommand: RouterCommand = {
  names: ['getCmdLineOpts'],
  adminOnly: true,
  run: (ctx) => ({
    argv: commandLine(),
    parsed: {
      net: { bindIp: ctx.router.options.bindIp, port: ctx.router.options.port, ...(ctx.router.options.tls === undefined ? {} : { tls: { mode: ctx.router.options.tls.server.mode } }) }, sharding: { configDB: ctx.router.options.configHost }, setParameter: { ...ctx.router.options.parameters },
      ...(ctx.router.options.auth ? { security: { authorization: 'enabled', ...(ctx.router.options.keyFile === undefined ? {} : { keyFile: ctx.router.options.keyFile.path }) } } : {}),
    },
    ok: 1,
  }),
};
// The old way to ask "is this a mongos?", which tools still send.
export const isDbGridCommand: RouterCommand = { names: ['isdbgrid'], run: () => ({ isdbgrid: 1, hostname: os.hostname(), ok: 1 }) };
export const clusterBuildInfoCommand: RouterCommand = { names: ['buildInfo', 'buildinfo'], run: () => buildInfoReply() };
export const clusterWhatsMyUriCommand: RouterCommand = { names: ['whatsmyuri'], run: (ctx) => ({ you: ctx.conn.remote, ok: 1 }) };
export const clusterGetParameterCommand: RouterCommand = {
  names: ['getParameter'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.featureCompatibilityVersion !== undefined) return { featureCompatibilityVersion: { version: '7.0' }, ok: 1 };
    if (cmd.routerFastPaths !== undefined) return { routerFastPaths: ctx.router.options.parameters.routerFastPaths, ok: 1 };
    if (cmd.logLevel !== undefined) return { logLevel: logLevelOf(ctx.router.logger), ok: 1 };
    throw new MongoError(ErrorCodes.InvalidOptions, 'no option found to get');
  },
};

export const clusterSetParameterCommand: RouterCommand = {
  names: ['setParameter'],
  adminOnly: true,
  run: (ctx, cmd) => setParameter(ctx.router.logger, cmd, (name) => name === 'featureCompatibilityVersion' || name in ctx.router.options.parameters),
};

export const clusterGetLogCommand: RouterCommand = {
  names: ['getLog'],
  adminOnly: true,
  run(ctx, cmd) {
    if (cmd.getLog === '*') return { names: ['global', 'startupWarnings'], ok: 1 };
    if (cmd.getLog === 'global') return { totalLinesWritten: ctx.router.recentLog.length, log: [...ctx.router.recentLog], ok: 1 };
    return { totalLinesWritten: 0, log: [], ok: 1 };
  },
};

export const clusterProfileCommand: RouterCommand = {
  names: ['profile'],
  run: (ctx, cmd) => runProfile(slowOperationSettingsOf(ctx.router), cmd, 'router', (from, to) => {
    ctx.router.logger.info({ c: 'COMMAND', id: 48742, from, to }, 'Profiler settings changed');
  }),
};

export const clusterServerStatusCommand: RouterCommand = {
  names: ['serverStatus'],
  run(ctx) {
    const now = ctx.router.wallClock.now();
    const uptimeMs = now - ctx.router.startedAt.getTime();
    return {
      host: `${os.hostname()}:${ctx.router.options.port}`, version: SERVER_VERSION, process: 'mongos', pid: process.pid,
      uptime: Math.floor(uptimeMs / 1000), uptimeMillis: uptimeMs, localTime: new Date(now),
      connections: { current: ctx.router.connections.current, available: ctx.router.options.maxConns - ctx.router.connections.current, totalCreated: ctx.router.connections.total },
      security: { authentication: ctx.router.authentication.serverStatus() },
      opcounters: { ...ctx.router.opcounters },
      metrics: { cursor: { open: { total: ctx.router.cursors.openCount } } },
      queryAnalyzers: ctx.router.queryAnalysis.serverStatus(),
      docshard: { fastPaths: { ...ctx.router.fastPaths } },
      ok: 1,
    };
  },
};

// The router's view of the replica sets behind it, in connPoolStats's `replicaSets` shape; its
// connection pools' counters are not kept, so the reply has only what is.
export const clusterConnPoolStatsCommand: RouterCommand = {
  names: ['connPoolStats'],
  run: (ctx) => ({ replicaSets: ctx.router.replicaSets?.() ?? {}, ok: 1 }),
};

export const clusterListCommandsCommand: RouterCommand = {
  names: ['listCommands'],
  run(ctx) {
    const commands: Record<string, unknown> = {};
    for (const name of ctx.router.commands.keys()) commands[name] = { help: '', adminOnly: ctx.router.commands.get(name)!.adminOnly === true };
    return { commands, ok: 1 };
  },
};
