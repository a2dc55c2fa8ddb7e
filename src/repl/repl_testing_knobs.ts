// Deliberate protocol bugs, for the explorer's own test only: it plants one to show that its
// checks catch what the bug breaks. A process never sets any.
export interface ReplTestingKnobs {
  // The voter answers a second candidate in a term it already voted in (MongoDB refuses:
  // "already voted for another candidate this term").
  readonly plantBugGrantTwoVotesPerTerm?: boolean;
}
