import { isPlainObject } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition } from '../command.js';

export const configureFailPointCommand: CommandDefinition = {
  names: ['configureFailPoint'],
  adminOnly: true,
  testOnly: true,
  run(ctx, cmd) {
    const name = cmd.configureFailPoint;
    if (typeof name !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'configureFailPoint takes a fail point name');
    const data = isPlainObject(cmd.data) ? cmd.data : {};
    const { count } = ctx.node.failPoints.configure(name, cmd.mode, data);
    return { count, ok: 1 };
  },
};
