import { advanceCommitPoint } from './commit_point_update.js';
import type { Effects } from './effects.js';
import { rescheduleElectionTimeout } from './election_timer.js';
import { setMemberState } from './fetch_state.js';
import { entryOpTime, type OplogEntry } from './oplog_entry.js';
import { compareOpTime } from './op_time.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// What the driver tells the core of the oplog it keeps on disk: the core's `oplog` is then a view
// of its tail, not the whole of it.

// Entries a writable primary's storage committed: appended to the view, already durable, so no
// persist effect. Anything else (not primary, not after the last entry) is a driver's bug.
export function localWritesCommitted(s: TopologyState, fx: Effects, entries: readonly OplogEntry[]): TopologyState {
  if (s.role !== 'leader' || s.leader?.writable !== true) throw new Error('a local write was committed on a member that is not a writable primary');
  let prev = lastAppliedOpTime(s);
  for (const e of entries) {
    if (e.t !== s.term || compareOpTime(entryOpTime(e), prev) <= 0) throw new Error(`oplog entry {ts: ${e.ts}, t: ${e.t}} does not follow {ts: ${prev.ts}, t: ${prev.t}} in term ${s.term}`);
    prev = entryOpTime(e);
  }
  return advanceCommitPoint({ ...s, oplog: [...s.oplog, ...entries] }, fx);
}

// Keeps the entries from the commit point on, and always the last one: a rollback never goes
// below the commit point, and the last entry is the member's applied optime.
export function trimOplog(s: TopologyState): TopologyState {
  const keepFrom = s.oplog.findIndex((e) => compareOpTime(entryOpTime(e), s.lastCommittedOpTime) >= 0);
  const from = keepFrom < 0 ? s.oplog.length - 1 : keepFrom;
  return from <= 0 ? s : { ...s, oplog: s.oplog.slice(from) };
}

// Initial sync ends: the member holds the source's data as of `lastEntry`, its first oplog entry.
export function initialSyncDone(s: TopologyState, fx: Effects, lastEntry: OplogEntry): TopologyState {
  if (s.memberState !== 'STARTUP2' || s.oplog.length > 0) return s;
  return rescheduleElectionTimeout(setMemberState({ ...s, oplog: [lastEntry] }, fx, 'SECONDARY'));
}
