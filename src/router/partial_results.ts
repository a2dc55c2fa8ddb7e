import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// A find with allowPartialResults leaves out the shards it cannot reach, at its start or during a
// getMore, instead of failing; from then on every batch of its cursor says so
// (cursor.partialResultsReturned), as mongos says it. Only a shard that could not be reached
// counts: any other error, a stale shard's included, still fails or retries the find.
export class PartialResults {
  returned = false;

  // True when `err` is left out (and noted); false when it must be thrown.
  tolerate(err: unknown): boolean {
    if (!isUnreachable(err)) return false;
    this.returned = true;
    return true;
  }
}

const UNREACHABLE: readonly number[] = [ErrorCodes.HostUnreachable, ErrorCodes.NetworkTimeout, ErrorCodes.SocketException, ErrorCodes.ShutdownInProgress];

function isUnreachable(err: unknown): boolean {
  return err instanceof MongoError && UNREACHABLE.includes(err.code);
}
