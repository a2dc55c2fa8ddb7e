import type { Clock } from './clock.js';
import { MongoError } from './errors.js';
import { ErrorCodes } from './error_codes.js';

// The clock of the command running now, for $$NOW where a caller gave the query layer no time (a
// find's projection or $expr, a `let`). Ambient, like the deadline (operation_deadline.ts): a
// command's query work runs synchronously inside withOperationClock, and the expressions that
// need the time are compiled deep below the commands that know the clock.
let active: Clock | undefined;
// The process's own clock, for an expression compiled after a command's synchronous run has
// returned (after an await): without it that $$NOW would fail where it must read the time.
let processClock: Clock | undefined;

// Set by a composition root as it starts.
export function setProcessOperationClock(clock: Clock): void {
  processClock = clock;
}

export function withOperationClock<T>(clock: Clock, fn: () => T): T {
  const previous = active;
  active = clock;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

// The running command's clock, taken where an expression is compiled (in the command's
// synchronous run) and read when it is first evaluated, which may be later (a getMore, a merge on
// the router after the shards answered). Compiled after the command's synchronous run, the
// process's clock its composition root set; with neither (a unit test of the query layer alone)
// there is no time to read.
export function operationClock(): Clock | undefined {
  return active ?? processClock;
}

export function noOperationClock(): MongoError {
  return new MongoError(ErrorCodes.InternalError, 'the current time was asked for outside a command');
}
