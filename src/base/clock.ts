// Waiting, as the components that wait see it: a pause, or a call after a delay. Injected rather
// than taken from the process's timers so that a deterministic simulator can run the same code on
// a virtual clock, which moves only when nothing else can happen.
export interface Timer {
  cancel(): void;
}

export interface Clock {
  // Milliseconds since the epoch (on a simulated clock, since its own start): for deadlines,
  // durations and the time of day.
  now(): number;
  // Resolves after `ms`.
  sleep(ms: number): Promise<void>;
  // Calls `fn` after `ms` unless cancelled first. `unref`: the timer alone does not keep the
  // process running (a deadline for work that is pending anyway).
  setTimer(ms: number, fn: () => void, options?: { readonly unref?: boolean }): Timer;
}

// The process's own timers.
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  setTimer(ms, fn, options) {
    const t = setTimeout(fn, ms);
    if (options?.unref === true) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};
