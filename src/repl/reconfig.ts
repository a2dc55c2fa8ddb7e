import { advanceCommitPoint } from './commit_point_update.js';
import { rescheduleElectionTimeout } from './election_timer.js';
import type { Effects } from './effects.js';
import { UNKNOWN_MEMBER, type MemberData } from './member_data.js';
import type { MemberState } from './member_state.js';
import { isElectable, isVoter, majorityVoteCount, type ReplSetConfig } from './repl_set_config.js';
import { stepDownToFollower } from './step_down.js';
import type { TopologyState } from './topology_state.js';

// Replica set reconfiguration (MongoDB's safe reconfig, 4.4 and later): which config may follow
// which, when the current one is committed so that another may be installed, and what a member
// does when a config reaches it (from replSetReconfig on the primary, or a heartbeat elsewhere).

export interface ReconfigRefusal {
  readonly code: 93 | 103;
  readonly codeName: 'InvalidReplicaSetConfig' | 'NewReplicaSetConfigurationIncompatible';
  readonly message: string;
}

const incompatible = (message: string): ReconfigRefusal => ({ code: 103, codeName: 'NewReplicaSetConfigurationIncompatible', message });

// Whether `next` may replace `current`: a newer version, the same set, a host keeps its _id and
// its arbiter flag; without force, the voters of the two differ by at most one member, so every
// majority of the new config overlaps every majority of the old one.
export function reconfigRefusal(current: ReplSetConfig, next: ReplSetConfig, force: boolean): ReconfigRefusal | null {
  if (next.version <= current.version) {
    return incompatible(`New replica set configuration version and term must be greater than old, but {version: ${next.version}} is not greater than {version: ${current.version}} for replica set ${next._id}`);
  }
  if (next._id !== current._id) {
    return incompatible(`New and old configurations differ in replica set name; old was ${current._id}, and new is ${next._id}`);
  }
  for (const m of next.members) {
    const old = current.members.find((o) => o.host === m.host || o._id === m._id);
    if (old === undefined) continue;
    if (old.host === m.host && old._id !== m._id) {
      return incompatible(`New and old configurations both have members with host of ${m.host} but in the new configuration the _id field is ${m._id} and in the old configuration it is ${old._id} for replica set ${next._id}`);
    }
    if (old.host === m.host && old.arbiterOnly !== m.arbiterOnly) {
      return incompatible(`New and old configurations differ in the setting of the arbiterOnly field for member ${m.host}; to make this change, remove then re-add the member`);
    }
  }
  if (!force) {
    const before = new Set(current.members.filter(isVoter).map((m) => m._id));
    const after = new Set(next.members.filter(isVoter).map((m) => m._id));
    const changed = [...before].filter((id) => !after.has(id)).length + [...after].filter((id) => !before.has(id)).length;
    if (changed > 1) return { code: 93, codeName: 'InvalidReplicaSetConfig', message: 'Non force replica set reconfig can only add or remove at most 1 voting member.' };
  }
  return null;
}

// The member's config has reached a majority of its voters (they say so in their heartbeats).
export function configPropagated(s: TopologyState): boolean {
  const holding = s.config.members.filter((m, i) => isVoter(m) && (i === s.selfIndex || s.members[i]!.configVersion === s.config.version)).length;
  return holding >= majorityVoteCount(s.config);
}

// MongoDB's awaitConfigCommitment on a primary: the config has reached a majority of its voters and
// the commit point is of this primary's term, so everything committed under the previous config is
// committed under this one too. Only then may another config follow.
export function configCommitted(s: TopologyState): boolean {
  return s.role === 'leader' && configPropagated(s) && s.lastCommittedOpTime.t === s.term;
}

// A config this member installs; `selfIndex` null when it is not in it (the member is REMOVED and
// keeps the config it had, whose members it goes on hearing from: one of them may add it again).
// What it knew of a member carries over by host; a sync source or an election under the old
// indexes is dropped; a primary that cannot be elected under the new config steps down.
export function installConfig(s: TopologyState, fx: Effects, config: ReplSetConfig, selfIndex: number | null): TopologyState {
  if (selfIndex === null) return becomeRemoved(s, fx);
  const members: MemberData[] = config.members.map((m) => {
    const i = s.config.members.findIndex((o) => o.host === m.host);
    return i < 0 ? UNKNOWN_MEMBER : s.members[i]!;
  });
  let next: TopologyState = {
    ...s,
    config,
    selfIndex,
    members,
    election: null,
    role: s.role === 'candidate' ? 'follower' : s.role,
    priorityTakeoverAtMs: null,
    catchupTakeoverAtMs: null,
    nextHeartbeatAtMs: s.nowMs,
    fetch: { syncSourceIndex: null, inFlight: null, nextFetchAtMs: s.nowMs, denylist: {}, requestedSourceIndex: null },
    leader: s.leader === null ? null : { ...s.leader, catchUp: null },
  };
  if (next.role === 'leader' && !isElectable(config.members[selfIndex]!)) next = stepDownToFollower(next, fx);
  if (s.memberState === 'REMOVED') next = setState(next, fx, next.oplog.length === 0 ? 'STARTUP2' : 'SECONDARY');
  if (next.role === 'leader') return advanceCommitPoint(next, fx);
  return rescheduleElectionTimeout(next);
}

function becomeRemoved(s: TopologyState, fx: Effects): TopologyState {
  const next = stepDownToFollower(s, fx);
  return setState({ ...next, electionTimeoutAtMs: null, priorityTakeoverAtMs: null, catchupTakeoverAtMs: null, fetch: { ...next.fetch, syncSourceIndex: null, inFlight: null } }, fx, 'REMOVED');
}

function setState(s: TopologyState, fx: Effects, state: MemberState): TopologyState {
  if (s.memberState === state) return s;
  fx.add({ type: 'memberStateChanged', state, term: s.term, writable: false });
  return { ...s, memberState: state };
}
