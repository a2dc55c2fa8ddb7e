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

  // Whether the fail point would fire, without counting an entry.
  isEnabled(name: string): boolean {
    const p = this.points.get(name);
    return p !== undefined && p.mode !== 'off';
  }
}

// How often a paused operation looks whether its fail point was turned off.
const HANG_POLL_MS = 10;

// MongoDB's pauseWhileSet: counts one entry, then waits (timers, not a busy loop, so the node keeps
// serving) until a test turns the fail point off.
export async function hangIfFailPointEnabled(node: { failPoints: FailPoints }, name: string): Promise<void> {
  if (node.failPoints.shouldFire(name) === undefined) return;
  while (node.failPoints.isEnabled(name)) await sleep(HANG_POLL_MS);
}

// waitForFailPoint: resolves once `name` has been entered `timesEntered` times in all.
export async function waitForTimesEntered(failPoints: FailPoints, name: string, timesEntered: number, deadline: number): Promise<boolean> {
  while (failPoints.timesEntered(name) < timesEntered) {
    if (Date.now() >= deadline) return false;
    await sleep(HANG_POLL_MS);
  }
  return true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
