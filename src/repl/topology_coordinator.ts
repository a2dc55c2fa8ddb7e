import { rescheduleElectionTimeout } from './election_timer.js';
import { getMyUnelectableReason, loseElection, onRequestVotes, onRequestVotesResponse, startElection } from './election.js';
import { Effects, type ReplEffect } from './effects.js';
import { answerHeartbeat, onHeartbeatResponse } from './heartbeat.js';
import { sendHeartbeats } from './heartbeat_sender.js';
import { NO_VOTE, type LastVote } from './last_vote.js';
import { UNKNOWN_MEMBER } from './member_data.js';
import type { ReplMessage } from './messages.js';
import { answerOplogFetch, fetcherWakeMs, onOplogFetchResponse, requestSyncSource, runFetcher } from './oplog_fetcher.js';
import { answerRollbackFetch, onRollbackFetchResponse } from './rollback.js';
import type { OplogEntry } from './oplog_entry.js';
import { NULL_OP_TIME, OPTIME_TS_PER_SECOND } from './op_time.js';
import { advanceCommitPoint } from './commit_point_update.js';
import { applyPositions, reportPositionUpstream } from './positions.js';
import { checkCatchUp, checkMajorityLiveness, clientWrite } from './primary.js';
import type { ReplSetConfig } from './repl_set_config.js';
import type { ReplTestingKnobs } from './repl_testing_knobs.js';
import { installConfig } from './reconfig.js';
import { stepDownToFollower, updateTerm } from './step_down.js';
import { initialSyncDone, localWritesCommitted, trimOplog } from './local_oplog.js';
import { catchupTakeoverConditionHolds, priorityTakeoverConditionHolds } from './takeover.js';
import type { TopologyState } from './topology_state.js';

// MongoDB's replication protocol version 1 for one member, as a step function in the style of
// etcd's raft: `topologyStep(state, event)` returns the next state and the effects the driver runs,
// persist effects first (effects.ts). No clock, network, disk or randomness inside: time comes in
// with every event, randomness from the seed the member started with.
// Every event carries the time and, from a driver, `nextTs`: the timestamp its logical clock would
// issue next (without it, the time itself at OPTIME_TS_PER_SECOND per second). An entry the core
// writes takes it; the driver moves its clock past what the appendOplog effect holds.
export type ReplEvent = { readonly nowMs: number; readonly nextTs?: number } & (
  // Time passes; the driver delivers one at nextWakeMs(state) at the latest.
  | { readonly type: 'tick' }
  | { readonly type: 'receive'; readonly from: number; readonly message: ReplMessage }
  | { readonly type: 'clientWrite'; readonly o: Readonly<Record<string, unknown>> }
  // The driver's storage committed these entries on a writable primary (their oplog entries in the
  // same commit): the core's view takes them, with no persist effect.
  | { readonly type: 'localWritesCommitted'; readonly entries: readonly OplogEntry[] }
  // The real oplog is on disk: the core's view keeps the entries from the commit point on (the
  // last entry always), all a rollback or a fetcher's query of it needs.
  | { readonly type: 'trimOplog' }
  // Initial sync copied the data and the oplog up to `lastEntry`: a STARTUP2 member becomes SECONDARY.
  | { readonly type: 'initialSyncDone'; readonly lastEntry: OplogEntry }
  // replSetStepDown (the driver checked a secondary is caught up) and replSetFreeze.
  | { readonly type: 'stepDown'; readonly frozenUntilMs: number }
  | { readonly type: 'freeze'; readonly frozenUntilMs: number }
  // replSetStepUp: stand for election now, if this member may, rather than when the timer fires.
  | { readonly type: 'stepUp' }
  // A newer config the driver stored (replSetReconfig, or one a heartbeat brought); selfIndex null
  // when this member is not in it.
  | { readonly type: 'installConfig'; readonly config: ReplSetConfig; readonly selfIndex: number | null }
  // replSetSyncFrom (the driver checked the member may be synced from): the current source is left
  // and the member is the next one chosen.
  | { readonly type: 'syncFrom'; readonly memberIndex: number }
);

export interface ReplStep {
  readonly state: TopologyState;
  readonly effects: readonly ReplEffect[];
}

// What survives a restart: local.replset.election and local.oplog.rs.
export interface StartUpArgs {
  readonly config: ReplSetConfig;
  readonly selfIndex: number;
  // null: no local.replset.election document yet.
  readonly lastVote: LastVote | null;
  readonly oplog: readonly OplogEntry[];
  readonly nowMs: number;
  readonly nextTs?: number;
  readonly seed: number;
  readonly knobs?: ReplTestingKnobs;
}

function clockTs(nowMs: number, nextTs: number | undefined): number {
  return nextTs ?? nowMs * (OPTIME_TS_PER_SECOND / 1000);
}

// A member starts following: ARBITER if it is one, STARTUP2 with an empty oplog (it syncs all of it
// first), SECONDARY otherwise; its term is the newest it can prove from disk.
export function startUp(args: StartUpArgs): ReplStep {
  const fx = new Effects();
  const last = args.oplog[args.oplog.length - 1];
  const me = args.config.members[args.selfIndex]!;
  const lastVote = args.lastVote ?? NO_VOTE;
  const memberState = me.arbiterOnly ? 'ARBITER' : args.oplog.length === 0 ? 'STARTUP2' : 'SECONDARY';
  const state: TopologyState = {
    config: args.config,
    selfIndex: args.selfIndex,
    knobs: args.knobs ?? {},
    nowMs: args.nowMs,
    clockTs: clockTs(args.nowMs, args.nextTs),
    role: 'follower',
    memberState,
    term: Math.max(0, lastVote.term, last?.t ?? 0),
    lastVote,
    oplog: args.oplog,
    lastCommittedOpTime: NULL_OP_TIME,
    members: args.config.members.map(() => UNKNOWN_MEMBER),
    nextHeartbeatAtMs: args.nowMs,
    electionTimeoutAtMs: null,
    priorityTakeoverAtMs: null,
    catchupTakeoverAtMs: null,
    election: null,
    frozenUntilMs: 0,
    leader: null,
    fetch: { syncSourceIndex: null, inFlight: null, nextFetchAtMs: args.nowMs, denylist: {}, requestedSourceIndex: null },
    rngState: args.seed >>> 0,
  };
  fx.add({ type: 'memberStateChanged', state: memberState, term: state.term, writable: false });
  return { state: memberState === 'SECONDARY' ? rescheduleElectionTimeout(state) : state, effects: fx.list() };
}

export function topologyStep(s: TopologyState, event: ReplEvent): ReplStep {
  const fx = new Effects();
  let next: TopologyState = { ...s, nowMs: Math.max(s.nowMs, event.nowMs), clockTs: clockTs(event.nowMs, event.nextTs) };
  switch (event.type) {
    case 'tick': next = onTick(next, fx); break;
    case 'clientWrite': next = clientWrite(next, fx, event.o); break;
    case 'receive': next = onMessage(next, fx, event.from, event.message); break;
    case 'localWritesCommitted': next = localWritesCommitted(next, fx, event.entries); break;
    case 'trimOplog': next = trimOplog(next); break;
    case 'initialSyncDone': next = initialSyncDone(next, fx, event.lastEntry); break;
    case 'stepDown': next = { ...stepDownToFollower(next, fx), frozenUntilMs: event.frozenUntilMs }; break;
    case 'freeze': next = next.role === 'follower' ? { ...next, frozenUntilMs: event.frozenUntilMs } : next; break;
    case 'stepUp': next = getMyUnelectableReason(next) === null ? startElection(next, fx, 'stepUpRequest') : next; break;
    case 'installConfig': next = installConfig(next, fx, event.config, event.selfIndex); break;
    case 'syncFrom': next = requestSyncSource(next, event.memberIndex); break;
  }
  next = runFetcher(next, fx);
  return { state: next, effects: fx.list() };
}

// The earliest time at which the member has something to do without hearing from anyone.
export function nextWakeMs(s: TopologyState): number {
  const times = [s.nextHeartbeatAtMs, s.electionTimeoutAtMs, s.priorityTakeoverAtMs, s.catchupTakeoverAtMs, s.election?.deadlineMs, s.leader?.catchUp?.deadlineMs, fetcherWakeMs(s)];
  return Math.min(...times.filter((t): t is number => typeof t === 'number'));
}

function due(at: number | null, s: TopologyState): boolean {
  return at !== null && s.nowMs >= at;
}

function onTick(s: TopologyState, fx: Effects): TopologyState {
  let next = s;
  if (due(next.nextHeartbeatAtMs, next)) next = checkMajorityLiveness(sendHeartbeats(next, fx), fx);
  if (next.role === 'leader') return checkCatchUp(next, fx);
  if (next.role === 'candidate') return due(next.election!.deadlineMs, next) ? loseElection(next) : next;
  if (due(next.priorityTakeoverAtMs, next)) {
    const stand = priorityTakeoverConditionHolds(next) && getMyUnelectableReason(next) === null;
    next = { ...next, priorityTakeoverAtMs: null };
    if (stand) return startElection(next, fx, 'priorityTakeover');
  }
  if (due(next.catchupTakeoverAtMs, next)) {
    const stand = catchupTakeoverConditionHolds(next) && getMyUnelectableReason(next) === null;
    next = { ...next, catchupTakeoverAtMs: null };
    if (stand) return startElection(next, fx, 'catchupTakeover');
  }
  if (due(next.electionTimeoutAtMs, next)) {
    return getMyUnelectableReason(next) === null ? startElection(next, fx, 'electionTimeout') : rescheduleElectionTimeout(next);
  }
  return next;
}

function onMessage(s: TopologyState, fx: Effects, from: number, m: ReplMessage): TopologyState {
  switch (m.kind) {
    case 'replSetHeartbeat':
      answerHeartbeat(s, fx, from, m);
      return s;
    case 'replSetHeartbeatResponse':
      return onHeartbeatResponse(s, fx, from, m);
    case 'replSetRequestVotes':
      return onRequestVotes(s, fx, from, m);
    case 'replSetRequestVotesResponse':
      return onRequestVotesResponse(s, fx, from, m);
    case 'replSetUpdatePosition':
      return onUpdatePosition(s, fx, from, m);
    case 'oplogFetch':
      answerOplogFetch(s, fx, from, m);
      return s;
    case 'oplogFetchResponse':
      return onOplogFetchResponse(s, fx, from, m);
    case 'rollbackFetch':
      answerRollbackFetch(s, fx, from, m);
      return s;
    case 'rollbackFetchResponse':
      return onRollbackFetchResponse(s, fx, from, m);
  }
}

// A primary recomputes its commit point; anyone else passes the news upstream.
function onUpdatePosition(s: TopologyState, fx: Effects, from: number, m: Extract<ReplMessage, { kind: 'replSetUpdatePosition' }>): TopologyState {
  if (m.configVersion !== s.config.version) return s;
  const { state, advanced } = applyPositions(updateTerm(s, fx, m.term), from, m);
  if (state.role === 'leader') return advanceCommitPoint(state, fx);
  if (advanced) reportPositionUpstream(state, fx);
  return state;
}

