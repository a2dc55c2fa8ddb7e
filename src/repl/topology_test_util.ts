import type { ReplEffect } from './effects.js';
import type { LastVote } from './last_vote.js';
import type { MemberState } from './member_state.js';
import type { ReplMessage, ReplSetHeartbeatResponse } from './messages.js';
import { NULL_OP_TIME, type OpTime } from './op_time.js';
import type { OplogEntry } from './oplog_entry.js';
import type { MemberConfig, ReplSetConfig } from './repl_set_config.js';
import { startUp, topologyStep, type ReplStep } from './topology_coordinator.js';
import type { TopologyState } from './topology_state.js';

// Building blocks for the core's unit tests: configs, a started member, messages delivered to it.
export function memberConfig(i: number, over: Partial<MemberConfig> = {}): MemberConfig {
  return { _id: i, host: `m${i}:27017`, priority: 1, votes: 1, arbiterOnly: false, hidden: false, ...over };
}

export function configOf(members: readonly MemberConfig[]): ReplSetConfig {
  return { _id: 'rs0', version: 1, members };
}

export const THREE: ReplSetConfig = configOf([memberConfig(0), memberConfig(1), memberConfig(2)]);

export function entry(ts: number, t: number, op: OplogEntry['op'] = 'i'): OplogEntry {
  return { ts, t, op, o: { at: `${t}:${ts}` } };
}

export function started(config: ReplSetConfig, selfIndex: number, over: { oplog?: OplogEntry[]; lastVote?: LastVote; nowMs?: number; seed?: number } = {}): TopologyState {
  return startUp({ config, selfIndex, lastVote: over.lastVote ?? null, oplog: over.oplog ?? [entry(1, 0, 'n')], nowMs: over.nowMs ?? 0, seed: over.seed ?? 42 }).state;
}

export function deliver(s: TopologyState, from: number, message: ReplMessage, nowMs = s.nowMs): ReplStep {
  return topologyStep(s, { type: 'receive', nowMs, from, message });
}

export function tick(s: TopologyState, nowMs: number): ReplStep {
  return topologyStep(s, { type: 'tick', nowMs });
}

export function heartbeatResponse(s: TopologyState, over: { state?: MemberState; term?: number; applied?: OpTime; committed?: OpTime } = {}): ReplSetHeartbeatResponse {
  const applied = over.applied ?? NULL_OP_TIME;
  return {
    kind: 'replSetHeartbeatResponse',
    setName: s.config._id,
    term: over.term ?? s.term,
    state: over.state ?? 'SECONDARY',
    appliedOpTime: applied,
    durableOpTime: applied,
    configVersion: s.config.version,
    syncSourceIndex: null,
    lastOpCommitted: over.committed ?? NULL_OP_TIME,
    sentAtMs: s.nowMs,
  };
}

// Heartbeat answers from every other member, as SECONDARY at `applied` unless said otherwise.
export function hearFromAll(s: TopologyState, applied: OpTime, state: MemberState = 'SECONDARY', nowMs = s.nowMs): TopologyState {
  return s.config.members.reduce((acc, _, i) => (i === s.selfIndex ? acc : deliver(acc, i, heartbeatResponse(acc, { applied, state }), nowMs).state), s);
}

// A started member that has just heard from every other member as SECONDARY at the set's first
// entry, a second before its election timer fires.
export function readyToStand(config: ReplSetConfig, selfIndex: number): TopologyState {
  const s = started(config, selfIndex);
  return s.electionTimeoutAtMs === null ? hearFromAll(s, { ts: 1, t: 0 }) : hearFromAll(s, { ts: 1, t: 0 }, 'SECONDARY', s.electionTimeoutAtMs - 1000);
}

export function sent(effects: readonly ReplEffect[], kind: ReplMessage['kind']): Extract<ReplEffect, { type: 'send' }>[] {
  return effects.filter((e): e is Extract<ReplEffect, { type: 'send' }> => e.type === 'send' && e.message.kind === kind);
}

// Member 0 of THREE (or `config`) elected and writable: heard from all, dry run and real votes from
// member 1, a majority of catch-up answers.
export function electedPrimary(config: ReplSetConfig = THREE): TopologyState {
  let s = readyToStand(config, 0);
  s = tick(s, s.electionTimeoutAtMs!).state;
  const vote = (dryRun: boolean): ReplMessage => ({ kind: 'replSetRequestVotesResponse', term: s.term, voteGranted: true, reason: '', dryRun, requestTerm: s.election!.term });
  s = deliver(s, 1, vote(true)).state;
  s = deliver(s, 1, vote(false)).state;
  return deliver(s, 1, heartbeatResponse(s, { applied: { ts: 1, t: 0 } })).state;
}
