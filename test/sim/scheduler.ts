import type { Clock, Timer } from '../../src/base/clock.js';

// One life of a simulated process, from start to crash. Everything a process has in flight (its
// messages, timers and disk work) belongs to an incarnation and is dropped with it.
export class Incarnation {
  alive = true;

  constructor(readonly name: string) {}
}

interface Step {
  readonly owner: Incarnation | undefined;
  readonly label: string;
  readonly run: () => void | Promise<void>;
  // Steps of one queue run in the order posted, whatever the seed (a node's disk).
  readonly queue?: Incarnation;
}

interface PendingTimer {
  readonly at: number;
  readonly seq: number;
  readonly owner: Incarnation;
  readonly fn: () => void;
  cancelled: boolean;
}

// A seeded deterministic scheduler (tigerbeetle's VOPR, FoundationDB's sim2) for code that runs
// real storage in one process. One step runs at a time: a message delivery, a piece of disk work
// (an asynchronous commit or a flush, started only then and awaited), a timer, a restart. After
// each step the code runs until it waits on something, and only then is the next step picked:
// the oldest ready one (FIFO), or with a seed any ready one (a node's disk work still in the order
// it was asked for); only when none is ready does the virtual clock move, to the earliest timer;
// only when there is no timer either do the steps held back for that moment run. So the order of
// everything the code does depends on the seed only: a failing seed replays exactly, and `trace`
// is what happened, step by step.
export class Scheduler {
  nowMs = 0;
  readonly trace: string[] = [];
  private ready: Step[] = [];
  private timers: PendingTimer[] = [];
  private readonly idle: Step[] = [];
  private seq = 0;
  private readonly random: (() => number) | undefined;
  private readonly slowDisk: boolean;

  // Without a seed, ready steps run in the order they were posted. With a slow disk, disk work
  // waits until no other step is ready: every message overtakes it.
  constructor(options: { readonly seed?: number; readonly slowDisk?: boolean } = {}) {
    this.random = options.seed === undefined ? undefined : mulberry32(options.seed);
    this.slowDisk = options.slowDisk ?? false;
  }

  // What a crashed incarnation posts or arms is dropped, like what it had posted before.
  post(owner: Incarnation | undefined, label: string, run: () => void | Promise<void>, queue?: Incarnation): void {
    if (owner === undefined || owner.alive) this.ready.push({ owner, label, run, queue });
  }

  // Before every step already posted (a crashed process restarts at once).
  postFirst(owner: Incarnation | undefined, label: string, run: () => void | Promise<void>): void {
    if (owner === undefined || owner.alive) this.ready.unshift({ owner, label, run });
  }

  // Runs only when nothing else can: no step ready and no timer left.
  whenIdle(label: string, run: () => void): void {
    this.idle.push({ owner: undefined, label, run });
  }

  setTimer(owner: Incarnation, ms: number, fn: () => void): Timer {
    const timer: PendingTimer = { at: this.nowMs + ms, seq: this.seq++, owner, fn, cancelled: !owner.alive };
    if (owner.alive) this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  // The virtual clock reads as `epochMs` plus the virtual time elapsed, so dates and idle times
  // come out the same on every run of a seed. `unref` means nothing here: a run ends when no step
  // is left, timers included.
  clockOf(owner: Incarnation, epochMs = 0): Clock {
    const repeat = (ms: number, fn: () => void, state: { current: Timer }): void => {
      state.current = this.setTimer(owner, ms, () => {
        repeat(ms, fn, state);
        fn();
      });
    };
    return {
      now: () => epochMs + this.nowMs,
      sleep: (ms) => new Promise((resolve) => { this.setTimer(owner, ms, resolve); }),
      setTimer: (ms, fn) => this.setTimer(owner, ms, fn),
      setRepeatingTimer: (ms, fn) => {
        const state = { current: { cancel: () => undefined } as Timer };
        repeat(ms, fn, state);
        return { cancel: () => state.current.cancel() };
      },
    };
  }

  // Real asynchronous disk work of `owner` (a commit by lmdb's write thread, a flush): started in
  // a step of its own, after the disk work asked for before it; work a crash overtakes never
  // starts, as a commit lmdb's thread had not taken yet is lost with the process.
  disk<T>(owner: Incarnation, label: string, start: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.post(owner, `${owner.name} ${label}`, () => start().then(resolve, reject), owner);
    });
  }

  // A crash: the incarnation's steps (its disk work with them) and timers go.
  kill(owner: Incarnation): void {
    owner.alive = false;
    this.ready = this.ready.filter((s) => s.owner !== owner);
    this.timers = this.timers.filter((t) => t.owner !== owner);
  }

  // Runs until nothing is left to do.
  async run(maxSteps: number): Promise<void> {
    for (let n = 0; ; n++) {
      if (n >= maxSteps && this.hasWork()) throw new Error(`no end after ${maxSteps} steps; the last ones:\n${this.trace.slice(-30).join('\n')}`);
      if (!(await this.runOne())) return;
    }
  }

  // Runs the next step, once everything the last one started has settled; false when none is left.
  async runOne(): Promise<boolean> {
    await this.settle();
    const step = this.next();
    if (step === undefined) return false;
    this.trace.push(`${this.nowMs} ${step.label}`);
    await step.run();
    return true;
  }

  private hasWork(): boolean {
    return this.ready.length > 0 || this.timers.some((t) => !t.cancelled) || this.idle.length > 0;
  }

  // Every promise continuation runs before an immediate does.
  private settle(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  private next(): Step | undefined {
    if (this.ready.length > 0) {
      const fast = this.slowDisk ? this.ready.filter((s) => s.queue === undefined) : this.ready;
      const candidates = fast.length > 0 ? fast : this.ready;
      const eligible = this.random === undefined ? [candidates[0]!] : candidates.filter((s) => s.queue === undefined || this.ready.find((t) => t.queue === s.queue) === s);
      const step = eligible[Math.floor((this.random?.() ?? 0) * eligible.length)]!;
      this.ready.splice(this.ready.indexOf(step), 1);
      return step;
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    if (this.timers.length > 0) {
      const first = this.timers.reduce((a, b) => (b.at < a.at || (b.at === a.at && b.seq < a.seq) ? b : a));
      this.timers.splice(this.timers.indexOf(first), 1);
      this.nowMs = first.at;
      return { owner: first.owner, label: `${first.owner.name} timer`, run: first.fn };
    }
    return this.idle.shift();
  }
}

// A small seeded generator (mulberry32): the same seed, the same interleaving.
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
