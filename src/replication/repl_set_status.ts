import { Long } from 'bson';
import type { Doc } from '../bson/values.js';
import { isUp } from '../repl/member_data.js';
import { MEMBER_STATE_CODES } from '../repl/member_state.js';
import { majorityVoteCount, replSetSettings, voterCount, writeMajorityCount } from '../repl/repl_set_config.js';
import { lastAppliedOpTime, type TopologyState } from '../repl/topology_state.js';
import { opTimeDate, opTimeDocument } from './op_time_bson.js';

export interface StatusContext {
  readonly nowMs: number;
  readonly startedAtMs: number;
  // When each member was first seen up in this run of the process (by member index).
  readonly upSinceMs: ReadonlyMap<number, number>;
  readonly electionTime: unknown;
}

// replSetGetStatus as MongoDB shapes it: the set, this member's state and term, and one entry per
// member with its health, state and optime as this member last heard them.
export function replSetStatus(s: TopologyState, ctx: StatusContext): Doc {
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  const applied = lastAppliedOpTime(s);
  const source = s.fetch.syncSourceIndex;
  const sourceFields = (index: number | null): Doc => ({
    syncSourceHost: index === null ? '' : s.config.members[index]!.host,
    syncSourceId: index === null ? -1 : s.config.members[index]!._id,
  });
  const members = s.config.members.map((c, i): Doc => {
    if (i === s.selfIndex) {
      return {
        _id: c._id, name: c.host, health: 1, state: MEMBER_STATE_CODES[s.memberState], stateStr: s.memberState,
        uptime: Math.floor((ctx.nowMs - ctx.startedAtMs) / 1000), optime: opTimeDocument(applied), optimeDate: opTimeDate(applied),
        ...sourceFields(source), infoMessage: '',
        ...(s.role === 'leader' && ctx.electionTime !== undefined ? { electionTime: ctx.electionTime, electionDate: opTimeDate(s.leader!.firstOpTimeOfMyTerm ?? applied) } : {}),
        configVersion: s.config.version, configTerm: s.term, self: true, lastHeartbeatMessage: '',
      };
    }
    const m = s.members[i]!;
    const up = isUp(m, ctx.nowMs, timeoutMs);
    const state = up && m.state !== null ? m.state : 'DOWN';
    return {
      _id: c._id, name: c.host, health: up ? 1 : 0, state: MEMBER_STATE_CODES[state], stateStr: up ? state : '(not reachable/healthy)',
      uptime: up ? Math.floor((ctx.nowMs - (ctx.upSinceMs.get(i) ?? ctx.nowMs)) / 1000) : 0,
      optime: opTimeDocument(m.appliedOpTime), optimeDurable: opTimeDocument(m.durableOpTime),
      optimeDate: opTimeDate(m.appliedOpTime), optimeDurableDate: opTimeDate(m.durableOpTime),
      lastHeartbeat: new Date(m.lastHeartbeatOkMs ?? 0), lastHeartbeatRecv: new Date(m.lastUpdateMs ?? 0), pingMs: Long.fromNumber(m.pingMs ?? 0),
      lastHeartbeatMessage: '', ...sourceFields(m.syncSourceIndex), infoMessage: '', configVersion: s.config.version, configTerm: m.term,
    };
  });
  const writableVoters = s.config.members.filter((m) => m.votes > 0 && !m.arbiterOnly).length;
  return {
    set: s.config._id,
    date: new Date(ctx.nowMs),
    myState: MEMBER_STATE_CODES[s.memberState],
    term: Long.fromNumber(s.term),
    ...sourceFields(source),
    heartbeatIntervalMillis: Long.fromNumber(replSetSettings(s.config).heartbeatIntervalMillis),
    majorityVoteCount: majorityVoteCount(s.config),
    writeMajorityCount: writeMajorityCount(s.config),
    votingMembersCount: voterCount(s.config),
    writableVotingMembersCount: writableVoters,
    optimes: {
      lastCommittedOpTime: opTimeDocument(s.lastCommittedOpTime),
      lastCommittedWallTime: opTimeDate(s.lastCommittedOpTime),
      appliedOpTime: opTimeDocument(applied),
      durableOpTime: opTimeDocument(applied),
      lastAppliedWallTime: opTimeDate(applied),
      lastDurableWallTime: opTimeDate(applied),
    },
    members,
    ok: 1,
  };
}
