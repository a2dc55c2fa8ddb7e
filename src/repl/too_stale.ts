import type { Effects } from './effects.js';
import { denylistSource } from './fetch_state.js';
import { formatOpTime, type OpTime } from './op_time.js';
import { chooseNewSyncSource, type SyncSourceView } from './sync_source.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

export function syncSourceView(s: TopologyState): SyncSourceView {
  return { config: s.config, selfIndex: s.selfIndex, members: s.members, lastAppliedOpTime: lastAppliedOpTime(s), nowMs: s.nowMs, denylist: s.fetch.denylist, requested: s.fetch.requestedSourceIndex };
}

// Whether a source's oplog, beginning at `oldest`, reaches back far enough to show where our
// histories part: to our commit point, below which the common point never lies; or, with no commit
// point known yet (just restarted), to the oldest entry we hold. Unknown (`undefined`) is taken as
// yes, and the rollback's own read checks again.
export function reachesBack(oldest: OpTime | null | undefined, s: TopologyState): boolean {
  if (oldest === undefined) return true;
  if (oldest === null) return false;
  const point = s.lastCommittedOpTime.t >= 0 ? s.lastCommittedOpTime : s.oplog[0];
  return point === undefined || oldest.ts <= point.ts;
}

// MongoDB's TooStaleToSyncFromSource: the source's oplog begins after what we would need from it
// (it was capped, or it is a member's that initial sync just began). Another source may still
// reach back; when none is left, MongoDB leaves the member RECOVERING until someone resyncs it by
// hand, while docshard resyncs it at once: drops its data and runs initial sync, which loses
// nothing, since what it lacks it takes from a member of a newer history.
export function sourceTooStale(s: TopologyState, fx: Effects, from: number, oldest: OpTime | null | undefined): TopologyState {
  const next = denylistSource(s, from);
  if (chooseNewSyncSource(syncSourceView(next)) !== null) return next;
  const begins = oldest === null || oldest === undefined ? 'is empty' : `begins at ${formatOpTime(oldest)}`;
  fx.add({ type: 'resyncNeeded', reason: `no sync source's oplog reaches back to this member's (member ${from}'s ${begins})` });
  return next;
}
