import { isPlainObject } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import { logLevelOf, setParameter } from '../../command_layer/log_level.js';

const PARAMETERS: Record<string, unknown> = {
  featureCompatibilityVersion: { version: '7.0' },
  quiet: false,
  maxBSONDepth: 200,
  internalQueryMaxBlockingSortMemoryUsageBytes: 100 * 1024 * 1024,
  enableTestCommands: false,
};

function nodeParameters(ctx: CommandContext): Record<string, unknown> {
  return { ...PARAMETERS, logLevel: logLevelOf(ctx.node.logger), enableTestCommands: ctx.node.options.enableTestCommands, ...ctx.node.options.parameters };
}

export const setParameterCommand: CommandDefinition = {
  names: ['setParameter'],
  adminOnly: true,
  run: (ctx, cmd) => setParameter(ctx.node.logger, cmd, (name) => name in nodeParameters(ctx)),
};

export const getParameterCommand: CommandDefinition = {
  names: ['getParameter'],
  adminOnly: true,
  run(ctx, cmd) {
    const params = nodeParameters(ctx);
    const which = cmd.getParameter;
    if (which === '*' || (isPlainObject(which) && which.allParameters === true)) return { ...params, ok: 1 };
    const reply: Record<string, unknown> = {};
    for (const key of Object.keys(cmd)) {
      if (key === 'getParameter' || key.startsWith('$') || key === 'lsid' || key === 'comment') continue;
      if (key in params) reply[key] = params[key];
    }
    if (Object.keys(reply).length === 0) throw new MongoError(ErrorCodes.InvalidOptions, 'no option found to get');
    return { ...reply, ok: 1 };
  },
};
