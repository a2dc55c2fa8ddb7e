import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// configureFailPoint as mongod implements it: modes alwaysOn, off, {times: n}, with `data`.
// Only reachable with --enableTestCommands. Protocol code asks `shouldFire(name)` at its steps.
interface FailPointState {
  mode: 'off' | 'alwaysOn' | 'times';
  remaining: number;
  data: Doc;
  timesEntered: number;
}

export class FailPoints {
  private readonly points = new Map<string, FailPointState>();

  configure(name: string, mode: unknown, data: Doc = {}): { count: number } {
    const previous = this.points.get(name)?.timesEntered ?? 0;
    if (mode === 'off') {
      this.points.set(name, { mode: 'off', remaining: 0, data, timesEntered: previous });
    } else if (mode === 'alwaysOn') {
      this.points.set(name, { mode: 'alwaysOn', remaining: 0, data, timesEntered: previous });
    } else if (isPlainObject(mode) && isNumber(mode.times)) {
      this.points.set(name, { mode: 'times', remaining: toDouble(mode.times), data, timesEntered: previous });
    } else {
      throw new MongoError(ErrorCodes.BadValue, "'mode' must be 'alwaysOn', 'off' or {times: n}");
    }
    return { count: previous };
  }

  // Returns the fail point's data when it fires, undefined otherwise.
  shouldFire(name: string): Doc | undefined {
    const p = this.points.get(name);
    if (!p || p.mode === 'off') return undefined;
    if (p.mode === 'times') {
      if (p.remaining <= 0) return undefined;
      p.remaining -= 1;
      if (p.remaining === 0) p.mode = 'off';
    }
    p.timesEntered += 1;
    return p.data;
  }

  timesEntered(name: string): number {
    return this.points.get(name)?.timesEntered ?? 0;
  }
}
