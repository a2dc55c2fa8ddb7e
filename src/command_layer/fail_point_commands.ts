import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { waitForTimesEntered, type FailPointMode, type FailPoints } from '../base/fail_points.js';
import type { Clock } from '../base/clock.js';

// The fail point commands, as mongod and mongos answer them, over a process's fail points: a
// node's in mongod_commands/diagnostic/configure_fail_point.ts, a router's in
// router/commands/cluster_fail_points.ts.
export function configureFailPoint(failPoints: FailPoints, cmd: Doc): Doc {
  const name = cmd.configureFailPoint;
  if (typeof name !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'configureFailPoint takes a fail point name');
  const data = isPlainObject(cmd.data) ? cmd.data : {};
  const { count } = failPoints.configure(name, parseMode(cmd.mode), data);
  return { count, ok: 1 };
}

function parseMode(mode: unknown): FailPointMode {
  if (mode === 'off' || mode === 'alwaysOn') return mode;
  if (isPlainObject(mode) && isNumber(mode.times) && toDouble(mode.times) >= 0) return { times: toDouble(mode.times) };
  if (isPlainObject(mode) && isNumber(mode.skip) && toDouble(mode.skip) >= 0) return { skip: toDouble(mode.skip) };
  throw new MongoError(ErrorCodes.BadValue, "'mode' must be 'alwaysOn', 'off', {times: n} or {skip: n}");
}

// As mongod's: waits until the fail point has been entered `timesEntered` times in all (tests take
// the count configureFailPoint returned and add one); maxTimeMS is required, since nothing else
// would end the wait.
export async function waitForFailPoint(failPoints: FailPoints, cmd: Doc, clock: Clock): Promise<Doc> {
  const name = cmd.waitForFailPoint;
  if (typeof name !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, 'waitForFailPoint takes a fail point name');
  if (!isNumber(cmd.timesEntered)) throw new MongoError(ErrorCodes.TypeMismatch, "'timesEntered' must be a number");
  if (!isNumber(cmd.maxTimeMS)) throw new MongoError(ErrorCodes.BadValue, 'waitForFailPoint requires maxTimeMS');
  const deadline = clock.now() + toDouble(cmd.maxTimeMS);
  if (!(await waitForTimesEntered(failPoints, name, toDouble(cmd.timesEntered), deadline, clock))) {
    throw new MongoError(ErrorCodes.MaxTimeMSExpired, `Fail point ${name} was not entered ${toDouble(cmd.timesEntered)} times within ${toDouble(cmd.maxTimeMS)}ms`);
  }
  return { ok: 1 };
}
