import { rescheduleElectionTimeout } from './election_timer.js';
import { advanceCommitPoint, learnCommitPoint } from './commit_point_update.js';
import type { Effects } from './effects.js';
import { replaceMember } from './member_data.js';
import type { ReplSetHeartbeat, ReplSetHeartbeatResponse } from './messages.js';
import { noteCatchUpResponse } from './primary.js';
import { updateTerm } from './step_down.js';
import { scheduleTakeovers } from './takeover.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// TopologyCoordinator::prepareHeartbeatResponseV1: the member's state, term, positions and commit
// point. A request from another set is answered with nothing the sender would use.
export function answerHeartbeat(s: TopologyState, fx: Effects, from: number, req: ReplSetHeartbeat): void {
  if (req.setName !== s.config._id) return;
  const applied = lastAppliedOpTime(s);
  const response: ReplSetHeartbeatResponse = {
    kind: 'replSetHeartbeatResponse',
    setName: s.config._id,
    term: s.term,
    state: s.memberState,
    appliedOpTime: applied,
    durableOpTime: applied,
    configVersion: s.config.version,
    syncSourceIndex: s.fetch.syncSourceIndex,
    lastOpCommitted: s.lastCommittedOpTime,
    sentAtMs: req.sentAtMs,
  };
  fx.send(from, response);
}

// What a heartbeat answer teaches: a newer term (a primary or candidate of an older one stands
// down), the member's state and positions, its ping, the commit point. A follower that hears from
// the primary of its term puts off its election and considers a takeover.
export function onHeartbeatResponse(s: TopologyState, fx: Effects, from: number, r: ReplSetHeartbeatResponse): TopologyState {
  if (r.setName !== s.config._id) return s;
  let next = updateTerm(s, fx, r.term);
  next = {
    ...next,
    members: replaceMember(next.members, from, {
      state: r.state,
      term: r.term,
      appliedOpTime: r.appliedOpTime,
      durableOpTime: r.durableOpTime,
      syncSourceIndex: r.syncSourceIndex,
      lastHeartbeatOkMs: next.nowMs,
      lastUpdateMs: next.nowMs,
      pingMs: Math.max(0, next.nowMs - r.sentAtMs),
      configVersion: r.configVersion,
    }),
  };
  if (next.role === 'leader') return advanceCommitPoint(noteCatchUpResponse(next, fx, from), fx);
  next = learnCommitPoint(next, fx, r.lastOpCommitted);
  if (next.role === 'follower' && r.state === 'PRIMARY' && r.term === next.term) {
    next = scheduleTakeovers(rescheduleElectionTimeout(next));
  }
  return next;
}
