import type { Clock } from './clock.js';
import { MongoError } from './errors.js';
import { ErrorCodes } from './error_codes.js';

// The clock of the command running now, for $$NOW where a caller gave the query layer no time (a
// find's projection or $expr, a `let`). Ambient, like the deadline (operation_deadline.ts): a
// command's query work runs synchronously inside withOperationClock, and the expressions that
// need the time are compiled deep below the commands that know the clock.
let active: Clock | undefined;

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
// the router after the shards answered). Outside a command nothing may ask: the query layer reads
// no clock of its own.
export function operationClock(): Clock | undefined {
  return active;
}

export function noOperationClock(): MongoError {
  return new MongoError(ErrorCodes.InternalError, 'the current time was asked for outside a command');
}
