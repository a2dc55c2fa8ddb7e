import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// A write the storage refused because this member is no longer primary (or a wait a step-down
// ended): no lost write to stop the process for. The step-down's interruption of the drivers
// follows, and the next primary takes the migration up from what was replicated.
export function refusedByStepDown(err: unknown): boolean {
  return err instanceof MongoError && (err.code === ErrorCodes.NotWritablePrimary || err.code === ErrorCodes.InterruptedDueToReplStateChange || err.code === ErrorCodes.PrimarySteppedDown);
}
