import type { Timestamp } from 'bson';
import { tickAfter } from './change_stream_spec.js';

// What a member knows, at one instant, of the commits still to come on it.
export interface CommitOutlook {
  // The majority commit point: a stream reads the entries at or before it.
  committed: Timestamp;
  // The oplog's first entry after the commit point, if any.
  uncommitted: Timestamp | undefined;
  // Whether what this member will not commit binds its whole set: a writable primary whose set
  // has no other voter, so that no other member can be elected and commit at an earlier time.
  speaksForSet: boolean;
  // The member's cluster time: every unit still to take a time takes a later one.
  clock: Timestamp;
  // The earliest time a unit took whose commit has not landed yet (an asynchronous commit).
  oldestUncommitted: Timestamp | undefined;
  // The earliest prepareTimestamp of a transaction prepared here and not yet decided: its
  // commitTimestamp, at or after it, may still be before the clock.
  oldestPrepared: Timestamp | undefined;
}

// The time whose high-water mark the member may promise: no event before it is still to come.
// The commit point while an entry after it waits for a majority (a stream reads only what cannot
// roll back) or the member does not answer for its set; otherwise the earliest time a commit may
// still have: the tick after its clock (which the router's getMores move to the router's time),
// or a pending commit's or prepared transaction's time if earlier. An idle member's promise thus
// follows its clock with no write.
export function promiseTime(o: CommitOutlook): Timestamp {
  if (!o.speaksForSet || o.uncommitted !== undefined) return o.committed;
  let earliest = tickAfter(o.clock);
  for (const pending of [o.oldestUncommitted, o.oldestPrepared]) {
    if (pending !== undefined && pending.lessThan(earliest)) earliest = pending;
  }
  return earliest.greaterThan(o.committed) ? earliest : o.committed;
}
