import { isUp } from '../repl/member_data.js';
import { replSetSettings } from '../repl/repl_set_config.js';
import { lastAppliedOpTime, primaryIndex, type TopologyState } from '../repl/topology_state.js';

// The optime's seconds (ts = seconds * 1_000_000 + increment).
const OPTIME_UNITS_PER_SECOND = 1_000_000;

export interface MemberView {
  host: string;
  // replSetGetStatus's stateStr, DOWN for a member not heard from within the election timeout.
  state: string;
  // How far its last applied entry is behind the primary's, in seconds (rs.printSecondaryReplicationInfo's
  // measure); undefined while no primary is known.
  lagSeconds: number | undefined;
}

// Every member as this one last heard of it, for the metrics and the console.
export function memberViews(s: TopologyState): MemberView[] {
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  const applied = (i: number) => (i === s.selfIndex ? lastAppliedOpTime(s) : s.members[i]!.appliedOpTime);
  const primary = primaryIndex(s);
  const primaryTs = primary === null ? undefined : applied(primary).ts;
  const seconds = (ts: number): number => Math.floor(ts / OPTIME_UNITS_PER_SECOND);
  return s.config.members.map((c, i) => {
    const m = s.members[i]!;
    const state = i === s.selfIndex ? s.memberState : isUp(m, s.nowMs, timeoutMs) && m.state !== null ? m.state : 'DOWN';
    const lagSeconds = primaryTs === undefined ? undefined : Math.max(0, seconds(primaryTs) - seconds(applied(i).ts));
    return { host: c.host, state, lagSeconds };
  });
}
