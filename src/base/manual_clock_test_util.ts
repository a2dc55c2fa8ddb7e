import type { Clock, Timer } from './clock.js';

// A Clock for unit tests: time moves only when the test advances it, running the timers that fall
// due on the way, in order.
export class ManualClock implements Clock {
  private nowMs = 1_700_000_000_000;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.nowMs;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  setTimer(ms: number, fn: () => void): Timer {
    const timer = { at: this.nowMs + ms, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  setRepeatingTimer(): never {
    throw new Error('no repeating timers under this clock');
  }

  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.nowMs = Math.max(this.nowMs, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.nowMs = end;
  }
}
