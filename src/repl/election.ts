import { rescheduleElectionTimeout } from './election_timer.js';
import type { Effects } from './effects.js';
import { isUp } from './member_data.js';
import type { ReplSetRequestVotes, ReplSetRequestVotesResponse } from './messages.js';
import { becomeLeader } from './primary.js';
import { isVoter, majorityVoteCount, replSetSettings } from './repl_set_config.js';
import { updateTerm } from './step_down.js';
import { lastAppliedOpTime, primaryIndex, selfConfig, type ElectionRound, type StartElectionReason, type TopologyState } from './topology_state.js';
import { decideVote } from './vote_decision.js';

// TopologyCoordinator::getMyUnelectableReason, for the reasons this core models; null: may stand.
export function getMyUnelectableReason(s: TopologyState): string | null {
  const me = selfConfig(s);
  if (me.arbiterOnly) return 'arbiters never stand';
  if (me.priority <= 0) return 'members with priority 0 never stand';
  if (me.votes <= 0) return 'non-voting members never stand';
  if (s.role !== 'follower') return `already ${s.role}`;
  if (s.memberState !== 'SECONDARY') return `not SECONDARY but ${s.memberState}`;
  if (s.nowMs < s.frozenUntilMs) return 'frozen (replSetFreeze or replSetStepDown)';
  const timeoutMs = replSetSettings(s.config).electionTimeoutMillis;
  const up = s.config.members.filter((c, i) => isVoter(c) && (i === s.selfIndex || isUp(s.members[i]!, s.nowMs, timeoutMs))).length;
  if (up < majorityVoteCount(s.config)) return 'cannot see a majority of voting members';
  return null;
}

function voters(s: TopologyState): number[] {
  return s.config.members.map((_, i) => i).filter((i) => i !== s.selfIndex && isVoter(s.config.members[i]!));
}

function requestVotes(s: TopologyState, fx: Effects, round: ElectionRound): void {
  const request: ReplSetRequestVotes = {
    kind: 'replSetRequestVotes',
    setName: s.config._id,
    dryRun: round.dryRun,
    term: round.term,
    candidateIndex: s.selfIndex,
    configVersion: s.config.version,
    lastAppliedOpTime: lastAppliedOpTime(s),
  };
  for (const to of voters(s)) fx.send(to, request);
}

function newRound(s: TopologyState, reason: StartElectionReason, dryRun: boolean, term: number): ElectionRound {
  const requiredVoter = dryRun && reason === 'catchupTakeover' ? primaryIndex(s) : null;
  return { reason, dryRun, term, granted: [s.selfIndex], responded: [s.selfIndex], deadlineMs: s.nowMs + replSetSettings(s.config).electionTimeoutMillis, requiredVoter };
}

// Stands for election: first a dry run in the current term, which moves no one's term, so a member
// cut off from the majority cannot disturb it by raising terms it cannot win; a voter already in a
// newer term refuses it and the candidate learns that term from the answer.
export function startElection(s: TopologyState, fx: Effects, reason: StartElectionReason): TopologyState {
  const round = newRound(s, reason, true, s.term);
  const next: TopologyState = { ...s, role: 'candidate', election: round, electionTimeoutAtMs: null, priorityTakeoverAtMs: null, catchupTakeoverAtMs: null };
  requestVotes(next, fx, round);
  return checkRound(next, fx);
}

// The dry run would win: move to the next term and vote for itself, durably, before asking anyone.
function startRealElection(s: TopologyState, fx: Effects): TopologyState {
  const term = s.term + 1;
  const lastVote = { term, candidateIndex: s.selfIndex };
  fx.add({ type: 'persistLastVote', lastVote });
  const round = newRound(s, s.election!.reason, false, term);
  const next: TopologyState = { ...s, term, lastVote, election: round };
  requestVotes(next, fx, round);
  return checkRound(next, fx);
}

export function loseElection(s: TopologyState): TopologyState {
  return rescheduleElectionTimeout({ ...s, role: 'follower', election: null });
}

function checkRound(s: TopologyState, fx: Effects): TopologyState {
  const round = s.election!;
  const required = round.requiredVoter;
  if (required !== null && round.responded.includes(required) && !round.granted.includes(required)) return loseElection(s);
  const requiredYes = required === null || round.granted.includes(required);
  if (requiredYes && round.granted.length >= majorityVoteCount(s.config)) return round.dryRun ? startRealElection(s, fx) : becomeLeader(s, fx);
  if (voters(s).every((i) => round.responded.includes(i))) return loseElection(s);
  return s;
}

export function onRequestVotesResponse(s: TopologyState, fx: Effects, from: number, r: ReplSetRequestVotesResponse): TopologyState {
  const next = updateTerm(s, fx, r.term);
  const round = next.election;
  if (next.role !== 'candidate' || round === null || round.dryRun !== r.dryRun || round.term !== r.requestTerm) return next;
  if (round.responded.includes(from)) return next;
  const granted = r.voteGranted && isVoter(next.config.members[from]!) ? [...round.granted, from] : round.granted;
  return checkRound({ ...next, election: { ...round, granted, responded: [...round.responded, from] } }, fx);
}

// The voter's side: a real request of a newer term moves the voter to it first (a primary or
// candidate of an older term stands down); a granted vote is written before it is answered.
export function onRequestVotes(s: TopologyState, fx: Effects, from: number, args: ReplSetRequestVotes): TopologyState {
  let next = args.dryRun ? s : updateTerm(s, fx, args.term);
  const decision = decideVote(
    { setName: next.config._id, configVersion: next.config.version, term: next.term, lastVote: next.lastVote, lastAppliedOpTime: lastAppliedOpTime(next) },
    args,
    next.knobs,
  );
  if (decision.lastVote !== null) {
    fx.add({ type: 'persistLastVote', lastVote: decision.lastVote });
    next = { ...next, lastVote: decision.lastVote };
    if (next.role === 'follower') next = rescheduleElectionTimeout(next);
  }
  fx.send(from, { kind: 'replSetRequestVotesResponse', term: next.term, voteGranted: decision.voteGranted, reason: decision.reason, dryRun: args.dryRun, requestTerm: args.term });
  return next;
}
