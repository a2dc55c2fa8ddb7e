import { rescheduleElectionTimeout } from './election_timer.js';
import type { Effects } from './effects.js';
import type { TopologyState } from './topology_state.js';

// A leader or candidate goes back to following: a primary becomes SECONDARY, an election in
// progress is dropped, and the election timer is armed again.
export function stepDownToFollower(s: TopologyState, fx: Effects): TopologyState {
  if (s.role === 'follower') return s;
  const wasPrimary = s.role === 'leader';
  let next: TopologyState = {
    ...s,
    role: 'follower',
    memberState: wasPrimary ? 'SECONDARY' : s.memberState,
    election: null,
    leader: null,
    fetch: { ...s.fetch, syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs },
  };
  if (wasPrimary) fx.add({ type: 'memberStateChanged', state: next.memberState, term: next.term, writable: false });
  next = rescheduleElectionTimeout(next);
  return next;
}

// TopologyCoordinator::updateTerm: a newer term seen in any message is adopted at once, and a
// primary or candidate of an older term stands down. The term is not written: after a restart it is
// the larger of the last vote's and the last oplog entry's, which is all that voting needs.
export function updateTerm(s: TopologyState, fx: Effects, term: number): TopologyState {
  if (term <= s.term) return s;
  return stepDownToFollower({ ...s, term }, fx);
}
