import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition } from '../command.js';
import { commandLine, hostInfoReply } from '../../command_layer/server_description.js';

export const pingCommand: CommandDefinition = { names: ['ping'], run: () => ({ ok: 1 }) };

export const whatsMyUriCommand: CommandDefinition = {
  names: ['whatsmyuri'],
  run: (ctx) => ({ you: ctx.conn.remote, ok: 1 }),
};

export const hostInfoCommand: CommandDefinition = { names: ['hostInfo'], run: (ctx) => hostInfoReply(ctx.node.wallClock.now()) };

// The command line the process was started with, and what it set, under mongod's option names.
export const getCmdLineOptsCommand: CommandDefinition = {
  names: ['getCmdLineOpts'],
  adminOnly: true,
  run(ctx) {
    const { options } = ctx.node;
    return {
      argv: commandLine(),
      parsed: {
        net: { bindIp: options.bindIp, port: options.port, ...(options.tls === undefined ? {} : { tls: { mode: options.tls.server.mode } }) },
        storage: { dbPath: options.dbpath },
        sharding: { clusterRole: options.role === 'config' ? 'configsvr' : 'shardsvr' },
        // mongod's name for --auth.
        ...(options.auth === true ? { security: { authorization: 'enabled', ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile.path }) } } : {}),
        setParameter: { ...options.parameters },
      },
      ok: 1,
    };
  },
};

export const getLogCommand: CommandDefinition = {
  names: ['getLog'],
  adminOnly: true,
  run(ctx, cmd) {
    const which = cmd.getLog;
    if (which === '*') return { names: ['global', 'startupWarnings'], ok: 1 };
    if (which === 'startupWarnings') return { totalLinesWritten: 0, log: [], ok: 1 };
    if (which === 'global') return { totalLinesWritten: ctx.node.recentLog.length, log: [...ctx.node.recentLog], ok: 1 };
    throw new MongoError(ErrorCodes.NoSuchKey, `No log named '${String(which)}'`);
  },
};

export const listCommandsCommand: CommandDefinition = {
  names: ['listCommands'],
  run(ctx) {
    const commands: Record<string, unknown> = {};
    const seen = new Set<CommandDefinition<never>>();
    for (const def of ctx.node.commands.values()) {
      if (seen.has(def) || (def.testOnly && !ctx.node.options.enableTestCommands)) continue;
      seen.add(def);
      for (const name of def.names) commands[name] = { help: def.help ?? '', adminOnly: def.adminOnly === true };
    }
    return { commands, ok: 1 };
  },
};
