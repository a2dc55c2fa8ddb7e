import { drawRandom, randomizedElectionOffsetMs } from './election_timer.js';
import { compareOpTime } from './op_time.js';
import { isElectable, PRIORITY_TAKEOVER_FRESHNESS_WINDOW_TS, priorityTakeoverDelayMs, replSetSettings } from './repl_set_config.js';
import { lastAppliedOpTime, primaryIndex, selfConfig, type TopologyState } from './topology_state.js';

// Priority takeover: the primary has a lower priority than this member, and this member's last
// applied entry is within the freshness window of the primary's.
export function priorityTakeoverConditionHolds(s: TopologyState): boolean {
  const p = primaryIndex(s);
  if (p === null || p === s.selfIndex || s.role !== 'follower' || !isElectable(selfConfig(s))) return false;
  if (s.config.members[p]!.priority >= selfConfig(s).priority) return false;
  return lastAppliedOpTime(s).ts >= s.members[p]!.appliedOpTime.ts - PRIORITY_TAKEOVER_FRESHNESS_WINDOW_TS;
}

// Catch-up takeover: the primary has written nothing in its term yet (it is still catching up), and
// this member is ahead of it and of everyone it knows.
export function catchupTakeoverConditionHolds(s: TopologyState): boolean {
  const p = primaryIndex(s);
  if (p === null || p === s.selfIndex || s.role !== 'follower' || !isElectable(selfConfig(s))) return false;
  const mine = lastAppliedOpTime(s);
  const primary = s.members[p]!;
  if (primary.appliedOpTime.t >= primary.term || compareOpTime(mine, primary.appliedOpTime) <= 0) return false;
  return s.members.every((m, i) => i === s.selfIndex || compareOpTime(mine, m.appliedOpTime) >= 0);
}

// After each heartbeat from the primary: arm the takeover timers whose condition now holds (each is
// checked again when it fires).
export function scheduleTakeovers(s: TopologyState): TopologyState {
  let next = s;
  if (next.priorityTakeoverAtMs === null && priorityTakeoverConditionHolds(next)) {
    const r = drawRandom(next);
    const timeoutMs = replSetSettings(next.config).electionTimeoutMillis;
    next = { ...r.state, priorityTakeoverAtMs: next.nowMs + priorityTakeoverDelayMs(next.config, next.selfIndex) + randomizedElectionOffsetMs(timeoutMs, r.value) };
  }
  if (next.catchupTakeoverAtMs === null && catchupTakeoverConditionHolds(next)) {
    next = { ...next, catchupTakeoverAtMs: next.nowMs + replSetSettings(next.config).catchUpTakeoverDelayMillis };
  }
  return next;
}
