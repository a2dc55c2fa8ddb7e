import { Timestamp } from 'bson';

// A hybrid logical clock of cluster times (MongoDB's VectorClock, its clusterTime component):
// seconds of the wall clock and a counter, strictly increasing on this process. Every write that
// must be ordered (a retryable statement's history) takes a tick; a time seen from another process
// (`advance`) moves the clock past it, so causally later events get later times.
export class LogicalClock {
  private seconds = 0;
  private increment = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  // A cluster time later than every one this clock has issued or seen.
  tick(): Timestamp {
    const wall = Math.floor(this.nowMs() / 1000);
    if (wall > this.seconds) {
      this.seconds = wall;
      this.increment = 1;
    } else {
      this.increment += 1;
    }
    return new Timestamp({ t: this.seconds, i: this.increment });
  }

  // The latest cluster time issued or seen, without issuing one.
  now(): Timestamp {
    return new Timestamp({ t: this.seconds, i: this.increment });
  }

  advance(seen: Timestamp): void {
    if (seen.t > this.seconds || (seen.t === this.seconds && seen.i > this.increment)) {
      this.seconds = seen.t;
      this.increment = seen.i;
    }
  }
}
