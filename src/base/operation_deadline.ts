import { MongoError } from './errors.js';
import { ErrorCodes } from './error_codes.js';
import type { Clock, Timer } from './clock.js';

// An operation's deadline (maxTimeMS, on performance.now()'s clock). Ambient, like the collation:
// a command's query work runs synchronously inside withDeadline, and the loops that read documents
// (plan execution, aggregation stages) call checkForInterrupt, as MongoDB's operations do at their
// yield points, without every layer in between passing it on.
let active: number | undefined;
let polls = 0;

// How many calls of checkForInterrupt share one look at the clock.
const POLL_EVERY = 64;

export function withDeadline<T>(deadline: number | undefined, fn: () => T): T {
  if (deadline === undefined && active === undefined) return fn();
  const previous = active;
  active = deadline;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

export function currentDeadline(): number | undefined {
  return active;
}

export function maxTimeExpired(): MongoError {
  return new MongoError(ErrorCodes.MaxTimeMSExpired, 'operation exceeded time limit');
}

export function checkForInterrupt(): void {
  if (active === undefined) return;
  polls += 1;
  if (polls % POLL_EVERY !== 0) return;
  if (performance.now() >= active) throw maxTimeExpired();
}

// The same, looking at the clock now: before an operation starts, after it waited.
export function checkDeadlineNow(deadline: number | undefined): void {
  if (deadline !== undefined && performance.now() >= deadline) throw maxTimeExpired();
}

// `work` (a wait that has changed nothing yet: a critical section, a version check), or
// MaxTimeMSExpired if the deadline comes first, by a timer of `clock`.
export function beforeDeadline<T>(work: Promise<T>, deadline: number | undefined, clock: Clock): Promise<T> {
  if (deadline === undefined) return work;
  let timer: Timer | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.setTimer(Math.max(0, deadline - performance.now()), () => reject(maxTimeExpired()));
  });
  return Promise.race([work, expired]).finally(() => timer?.cancel());
}
