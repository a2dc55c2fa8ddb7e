import { MongoError } from '../base/errors.js';

// The codes after which a driver may open a change stream again from its last token (MongoDB's
// isResumableChangeStreamError: network, not-primary, shutdown, retriable, stale routing errors,
// RetryChangeStream, FailedToSatisfyReadPreference). A change stream's error with one of them
// carries the label ResumableChangeStreamError, which drivers of MongoDB 4.4 and later go by.
const RESUMABLE = new Set([
  6, 7, 89, 9001, 202, // network: HostUnreachable, HostNotFound, NetworkTimeout, SocketException, NetworkInterfaceExceededTimeLimit
  10107, 13435, 13436, 11602, 189, // not primary: NotWritablePrimary, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, InterruptedDueToReplStateChange, PrimarySteppedDown
  91, 11600, // shutdown: ShutdownInProgress, InterruptedAtShutdown
  262, // ExceededTimeLimit
  63, 150, 13388, 249, // stale routing: StaleShardVersion, StaleEpoch, StaleConfig, StaleDbVersion
  234, // RetryChangeStream
  133, // FailedToSatisfyReadPreference
]);

export const RESUMABLE_LABEL = 'ResumableChangeStreamError';

// `err` with the label when a driver may resume after it.
export function withResumableLabel(err: unknown): unknown {
  if (!(err instanceof MongoError) || !RESUMABLE.has(err.code) || err.errorLabels.includes(RESUMABLE_LABEL)) return err;
  const labelled = new MongoError(err.code, err.message, err.extra, [...err.errorLabels, RESUMABLE_LABEL]);
  labelled.stack = err.stack;
  return labelled;
}
