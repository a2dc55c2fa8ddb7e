import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// MongoDB's default for maxAcceptableLogicalClockDriftSecs: one year.
export const DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS = 365 * 24 * 60 * 60;

// A hybrid logical clock of cluster times (MongoDB's VectorClock, its clusterTime component):
// seconds of the wall clock and a counter, never going back on this process. Every write unit that
// changes a document takes a tick (its commit's time, in commit order); a time gossiped from
// another process (`advance`) moves the clock past it, so causally later events get later times.
// The wall clock is read through `nowMs` (the process's Clock's now), so the clock is pure for its
// tests and virtual under a simulator.
export class LogicalClock {
  private seconds = 0;
  private increment = 0;
  // now()'s answer while the clock stands still: replies ask for it on every command.
  private current: Timestamp | undefined;

  constructor(
    private readonly nowMs: () => number,
    private readonly maxAcceptableDriftSecs = DEFAULT_MAX_ACCEPTABLE_LOGICAL_CLOCK_DRIFT_SECS,
  ) {}

  // A cluster time later than every one this clock has issued or seen.
  tick(): Timestamp {
    this.catchUpWithWallClock();
    this.increment += 1;
    this.current = new Timestamp({ t: this.seconds, i: this.increment });
    return this.current;
  }

  // The cluster time: the latest issued or seen, or the wall clock's second with counter 0 when
  // that is later. Every time up to it is settled: a later tick is later still. Reading the wall
  // clock here keeps a node that has not written for a while answering a current time, and starts
  // a restarted one past the times it issued before (in an earlier second).
  now(): Timestamp {
    if (this.catchUpWithWallClock() || this.current === undefined) this.current = new Timestamp({ t: this.seconds, i: this.increment });
    return this.current;
  }

  // Moves the clock past a time another process gossiped (a command's or a reply's $clusterTime).
  // As MongoDB's rate limiter: a time more than maxAcceptableLogicalClockDriftSecs ahead of this
  // process's wall clock is refused (ClusterTimeFailsRateLimiter), and the clock stays.
  advance(seen: Timestamp): void {
    if (!isLater(seen.t, seen.i, this.seconds, this.increment)) return;
    const wall = this.wallSeconds();
    if (seen.t > wall && seen.t - wall > this.maxAcceptableDriftSecs) {
      throw new MongoError(ErrorCodes.ClusterTimeFailsRateLimiter, `New $clusterTime, ${seen.t}, is too far from this node's wall clock time, ${wall}.`);
    }
    this.seconds = seen.t;
    this.increment = seen.i;
    this.current = undefined;
  }

  // The wall clock the cluster time follows (storage keeps its history window on it).
  wallMs(): number {
    return this.nowMs();
  }

  // True when the wall clock's second passed the clock's, which then moves to it (counter 0).
  private catchUpWithWallClock(): boolean {
    const wall = this.wallSeconds();
    if (wall <= this.seconds) return false;
    this.seconds = wall;
    this.increment = 0;
    this.current = undefined;
    return true;
  }

  private wallSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }
}

// Whether (t, i) is later than (t0, i0), as Timestamps order.
export function isLater(t: number, i: number, t0: number, i0: number): boolean {
  return t > t0 || (t === t0 && i > i0);
}
