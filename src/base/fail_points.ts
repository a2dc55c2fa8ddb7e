import type { Clock } from './clock.js';

// MongoDB's fail points: named places in protocol code that a test can make fire (modes alwaysOn,
// off, {times: n}: the next n entries, {skip: n}: every entry after the next n; with data). The
// configureFailPoint command, only reachable with --enableTestCommands, parses the mode; code at a
// step asks `shouldFire(name)` or pauses with hangIfFailPointEnabled. Kept here, below every layer
// that has such steps.
export type FailPointMode = 'off' | 'alwaysOn' | { readonly times: number } | { readonly skip: number };

export type FailPointData = Readonly<Record<string, unknown>>;

interface FailPointState {
  mode: 'off' | 'alwaysOn' | 'times' | 'skip';
  // times: entries left that fire; skip: entries left that do not.
  remaining: number;
  data: FailPointData;
  timesEntered: number;
}

export class FailPoints {
  private readonly points = new Map<string, FailPointState>();

  // Returns how many times the fail point had been entered before.
  configure(name: string, mode: FailPointMode, data: FailPointData = {}): { count: number } {
    const previous = this.points.get(name)?.timesEntered ?? 0;
    if (mode === 'off' || mode === 'alwaysOn') this.points.set(name, { mode, remaining: 0, data, timesEntered: previous });
    else if ('times' in mode) this.points.set(name, { mode: 'times', remaining: mode.times, data, timesEntered: previous });
    else this.points.set(name, { mode: 'skip', remaining: mode.skip, data, timesEntered: previous });
    return { count: previous };
  }

  // Returns the fail point's data when it fires, undefined otherwise. `applies` (MongoDB's
  // executeIf condition) is asked first, with the data: an entry it turns away is no entry, so it
  // uses up none of the mode's times or skips and is not counted.
  shouldFire(name: string, applies?: (data: FailPointData) => boolean): FailPointData | undefined {
    const p = this.points.get(name);
    if (!p || p.mode === 'off') return undefined;
    if (applies !== undefined && !applies(p.data)) return undefined;
    if (p.mode === 'times') {
      if (p.remaining <= 0) return undefined;
      p.remaining -= 1;
      if (p.remaining === 0) p.mode = 'off';
    } else if (p.mode === 'skip' && p.remaining > 0) {
      p.remaining -= 1;
      return undefined;
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
// serving) until a test turns the fail point off; `clock` is the caller's, virtual under a simulator.
export async function hangIfFailPointEnabled(node: { failPoints: FailPoints }, name: string, clock: Clock): Promise<void> {
  if (node.failPoints.shouldFire(name) === undefined) return;
  while (node.failPoints.isEnabled(name)) await clock.sleep(HANG_POLL_MS);
}

// waitForFailPoint: resolves once `name` has been entered `timesEntered` times in all, or false at
// `deadline` (on `clock`).
export async function waitForTimesEntered(failPoints: FailPoints, name: string, timesEntered: number, deadline: number, clock: Clock): Promise<boolean> {
  while (failPoints.timesEntered(name) < timesEntered) {
    if (clock.now() >= deadline) return false;
    await clock.sleep(HANG_POLL_MS);
  }
  return true;
}
