// The document of local.replset.election: the term of the last vote this member gave and to whom
// (the candidate's index in the config). It is written durably before the vote is answered, so a
// member that crashes and restarts cannot vote twice in one term. A member's term after a restart
// is the larger of this term and its last oplog entry's.
export interface LastVote {
  readonly term: number;
  readonly candidateIndex: number;
}

export const NO_VOTE: LastVote = { term: -1, candidateIndex: -1 };
