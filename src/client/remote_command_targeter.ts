import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ReadPreference } from './read_preference.js';
import type { ReplicaSetMonitor } from './replica_set_monitor.js';

// How long a request waits for a member that serves its read preference (MongoDB's targeter
// waits as long for a primary to be found or elected).
export const FIND_HOST_TIMEOUT_MS = 15_000;

// Replies that say the member is not (or no longer) the primary, or is going away: MongoDB's
// NotPrimaryError and ShutdownError categories.
const NOT_PRIMARY_CODES: ReadonlySet<number> = new Set([
  ErrorCodes.NotWritablePrimary, ErrorCodes.NotPrimaryNoSecondaryOk, ErrorCodes.InterruptedDueToReplStateChange,
  ErrorCodes.PrimarySteppedDown, ErrorCodes.ShutdownInProgress, ErrorCodes.InterruptedAtShutdown, ErrorCodes.NotPrimaryOrSecondary,
]);

const NETWORK_CODES: ReadonlySet<number> = new Set([ErrorCodes.HostUnreachable, ErrorCodes.NetworkTimeout, ErrorCodes.SocketException]);

// What another member may answer instead: a reply saying this one is not the primary, or a
// request that got no reply (MongoDB's kIdempotent retry policy retries exactly these).
export function isNotPrimaryReply(code: number | undefined): boolean {
  return code !== undefined && NOT_PRIMARY_CODES.has(code);
}

export function isNetworkFailure(err: unknown): boolean {
  return err instanceof MongoError && NETWORK_CODES.has(err.code);
}

// MongoDB's RemoteCommandTargeterRS: a set's hosts for a request, by read preference, and what a
// request's outcome tells the set's monitor.
export class RemoteCommandTargeter {
  constructor(readonly monitor: ReplicaSetMonitor) {}

  findHost(rp: ReadPreference, timeoutMs = FIND_HOST_TIMEOUT_MS): Promise<string> {
    return this.monitor.findHost(rp, Math.min(timeoutMs, FIND_HOST_TIMEOUT_MS));
  }

  // A reply from `host` with error `code` (undefined: none).
  onReply(host: string, code: number | undefined, topologyVersion: unknown): void {
    if (isNotPrimaryReply(code)) this.monitor.markHostNotPrimary(host, topologyVersion);
  }

  // A request to `host` that got no reply.
  onError(host: string, err: unknown): void {
    if (isNetworkFailure(err)) this.monitor.markHostUnreachable(host, (err as Error).message);
  }
}
