import { isNumber, isPlainObject, toDouble } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandDefinition } from '../command.js';
import { waitForTimesEntered, type FailPointMode } from '../../base/fail_points.js';

export const configureFailPointCommand: CommandDefinition = {
  names: ['configureFailPoint'],
  adminOnly: true,
  testOnly: true,
  run(ctx, cmd) {
    const name = cmd.configureFailPoint;
    if (typeof name !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'configureFailPoint takes a fail point name');
    const data = isPlainObject(cmd.data) ? cmd.data : {};
    const { count } = ctx.node.failPoints.configure(name, parseMode(cmd.mode), data);
    return { count, ok: 1 };
  },
};

function parseMode(mode: unknown): FailPointMode {
  if (mode === 'off' || mode === 'alwaysOn') return mode;
  if (isPlainObject(mode) && isNumber(mode.times)) return { times: toDouble(mode.times) };
  throw new MongoError(ErrorCodes.BadValue, "'mode' must be 'alwaysOn', 'off' or {times: n}");
}

// As mongod's: waits until the fail point has been entered `timesEntered` times in all (tests take
// the count configureFailPoint returned and add one); maxTimeMS is required, since nothing else
// would end the wait.
export const waitForFailPointCommand: CommandDefinition = {
  names: ['waitForFailPoint'],
  adminOnly: true,
  testOnly: true,
  async run(ctx, cmd) {
    const name = cmd.waitForFailPoint;
    if (typeof name !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'waitForFailPoint takes a fail point name');
    if (!isNumber(cmd.timesEntered)) throw new MongoError(ErrorCodes.TypeMismatch, "'timesEntered' must be a number");
    if (!isNumber(cmd.maxTimeMS)) throw new MongoError(ErrorCodes.BadValue, 'waitForFailPoint requires maxTimeMS');
    const deadline = Date.now() + toDouble(cmd.maxTimeMS);
    if (!(await waitForTimesEntered(ctx.node.failPoints, name, toDouble(cmd.timesEntered), deadline))) {
      throw new MongoError(ErrorCodes.MaxTimeMSExpired, `Fail point ${name} was not entered ${toDouble(cmd.timesEntered)} times within ${toDouble(cmd.maxTimeMS)}ms`);
    }
    return { ok: 1 };
  },
};
