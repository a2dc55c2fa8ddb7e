import type { Effects } from './effects.js';
import type { MemberPosition, ReplSetUpdatePosition } from './messages.js';
import { compareOpTime, maxOpTime } from './op_time.js';
import { lastAppliedOpTime, type TopologyState } from './topology_state.js';

// replSetUpdatePosition as a member sends it upstream: its own position and those it holds of the
// members that sync from it, so that chained members' positions reach the primary.
export function updatePositionMessage(s: TopologyState): ReplSetUpdatePosition {
  const optimes: MemberPosition[] = [];
  s.config.members.forEach((c, i) => {
    if (c.arbiterOnly) return;
    if (i === s.selfIndex) {
      const applied = lastAppliedOpTime(s);
      optimes.push({ memberIndex: i, appliedOpTime: applied, durableOpTime: applied });
    } else if (s.members[i]!.appliedOpTime.t >= 0) {
      optimes.push({ memberIndex: i, appliedOpTime: s.members[i]!.appliedOpTime, durableOpTime: s.members[i]!.durableOpTime });
    }
  });
  return { kind: 'replSetUpdatePosition', term: s.term, configVersion: s.config.version, optimes };
}

export function reportPositionUpstream(s: TopologyState, fx: Effects): void {
  if (s.role === 'leader' || s.fetch.syncSourceIndex === null) return;
  fx.send(s.fetch.syncSourceIndex, updatePositionMessage(s));
}

// Takes what a replSetUpdatePosition says of each member, keeping only advances; the sender itself
// counts as heard from. Returns the new state and whether any position moved.
export function applyPositions(s: TopologyState, from: number, msg: ReplSetUpdatePosition): { state: TopologyState; advanced: boolean } {
  let advanced = false;
  const members = s.members.map((m, i) => {
    const heard = i === from ? { ...m, lastUpdateMs: s.nowMs } : m;
    const p = msg.optimes.find((o) => o.memberIndex === i);
    if (i === s.selfIndex || p === undefined) return heard;
    const applied = maxOpTime(heard.appliedOpTime, p.appliedOpTime);
    const durable = maxOpTime(heard.durableOpTime, p.durableOpTime);
    if (compareOpTime(applied, heard.appliedOpTime) === 0 && compareOpTime(durable, heard.durableOpTime) === 0) return heard;
    advanced = true;
    return { ...heard, appliedOpTime: applied, durableOpTime: durable };
  });
  return { state: { ...s, members }, advanced };
}
