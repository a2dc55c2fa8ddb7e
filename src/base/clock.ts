// Time, as the components that read it or wait see it: the wall clock's milliseconds, a pause, a
// call after a delay or at every interval. Injected rather than taken from the process so that a
// deterministic simulator can run the same code on a virtual clock, which moves only when nothing
// else can happen (and can jump, as a real one does).
export interface Timer {
  cancel(): void;
}

export interface TimerOptions {
  // The timer alone does not keep the process running (a deadline for work that is pending
  // anyway, a background job's next round).
  readonly unref?: boolean;
}

export interface Clock {
  // Milliseconds since the epoch: what replies' localTime, changelog times, lastWriteDate and
  // $$NOW are made of, and what idle times and durations are measured on.
  now(): number;
  // Resolves after `ms`.
  sleep(ms: number, options?: TimerOptions): Promise<void>;
  // Calls `fn` after `ms` unless cancelled first.
  setTimer(ms: number, fn: () => void, options?: TimerOptions): Timer;
  // Calls `fn` every `ms` until cancelled (a reaper, a poller).
  setRepeatingTimer(ms: number, fn: () => void, options?: TimerOptions): Timer;
}

// The process's own clock and timers; only the composition roots (src/process) hand it out.
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, options) => new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (options?.unref === true) t.unref();
  }),
  setTimer(ms, fn, options) {
    const t = setTimeout(fn, ms);
    if (options?.unref === true) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  setRepeatingTimer(ms, fn, options) {
    const t = setInterval(fn, ms);
    if (options?.unref === true) t.unref();
    return { cancel: () => clearInterval(t) };
  },
};
