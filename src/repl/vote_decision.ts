import type { LastVote } from './last_vote.js';
import type { ReplSetRequestVotes } from './messages.js';
import { compareOpTime, formatOpTime, type OpTime } from './op_time.js';
import type { ReplTestingKnobs } from './repl_testing_knobs.js';

export interface VoterView {
  readonly setName: string;
  readonly configVersion: number;
  // The voter's term after it has moved to a real request's higher term.
  readonly term: number;
  readonly lastVote: LastVote;
  readonly lastAppliedOpTime: OpTime;
}

export interface VoteDecision {
  readonly voteGranted: boolean;
  readonly reason: string;
  // Set when a real vote is granted: the voter writes it durably before it answers.
  readonly lastVote: LastVote | null;
}

// TopologyCoordinator::processReplSetRequestVotes: a voter grants a candidate whose term is not
// behind its own, whose config is the voter's, and whose last applied optime is at least as new as
// its own, and, in a real election, only if it has not voted in that term. A dry run changes
// nothing.
export function decideVote(voter: VoterView, args: ReplSetRequestVotes, knobs: ReplTestingKnobs = {}): VoteDecision {
  const refuse = (reason: string): VoteDecision => ({ voteGranted: false, reason, lastVote: null });
  if (args.setName !== voter.setName) return refuse(`candidate's set name (${args.setName}) differs from mine (${voter.setName})`);
  if (args.term < voter.term) return refuse(`candidate's term (${args.term}) is lower than mine (${voter.term})`);
  if (args.configVersion !== voter.configVersion) {
    return refuse(`candidate's config version (${args.configVersion}) differs from mine (${voter.configVersion})`);
  }
  if (compareOpTime(args.lastAppliedOpTime, voter.lastAppliedOpTime) < 0) {
    return refuse(`candidate's data is staler than mine: candidate's last applied OpTime ${formatOpTime(args.lastAppliedOpTime)}, mine ${formatOpTime(voter.lastAppliedOpTime)}`);
  }
  if (!args.dryRun && voter.lastVote.term >= args.term && !knobs.plantBugGrantTwoVotesPerTerm) {
    return refuse(`already voted for another candidate (index ${voter.lastVote.candidateIndex}) this term (${voter.lastVote.term})`);
  }
  return { voteGranted: true, reason: '', lastVote: args.dryRun ? null : { term: args.term, candidateIndex: args.candidateIndex } };
}
