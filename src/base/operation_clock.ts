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

// Milliseconds on the running command's clock. Outside a command nothing may ask: the query layer
// reads no clock of its own.
export function operationNow(): number {
  if (active === undefined) throw new MongoError(ErrorCodes.InternalError, 'the current time was asked for outside a command');
  return active.now();
}
