import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplSetRequestVotes } from './messages.js';
import { decideVote, type VoterView } from './vote_decision.js';

const voter: VoterView = { setName: 'rs0', configVersion: 1, term: 3, lastVote: { term: 2, candidateIndex: 1 }, lastAppliedOpTime: { ts: 100, t: 2 } };

function request(over: Partial<ReplSetRequestVotes> = {}): ReplSetRequestVotes {
  return { kind: 'replSetRequestVotes', setName: 'rs0', dryRun: false, term: 3, candidateIndex: 2, configVersion: 1, lastAppliedOpTime: { ts: 100, t: 2 }, ...over };
}

test('a real vote goes to a candidate as fresh as the voter, and is recorded for the voter to write first', () => {
  assert.deepEqual(decideVote(voter, request()), { voteGranted: true, reason: '', lastVote: { term: 3, candidateIndex: 2 } });
});

test('one vote per term: a second candidate of the same term is refused', () => {
  const after = { ...voter, lastVote: { term: 3, candidateIndex: 2 } };
  const d = decideVote(after, request({ candidateIndex: 0 }));
  assert.equal(d.voteGranted, false);
  assert.match(d.reason, /already voted for another candidate \(index 2\) this term \(3\)/);
});

test('the planted bug knob grants that second vote', () => {
  const after = { ...voter, lastVote: { term: 3, candidateIndex: 2 } };
  assert.equal(decideVote(after, request({ candidateIndex: 0 }), { plantBugGrantTwoVotesPerTerm: true }).voteGranted, true);
});

test('a dry run is answered as the real vote would be, but records nothing and ignores the last vote', () => {
  const after = { ...voter, lastVote: { term: 3, candidateIndex: 2 } };
  assert.deepEqual(decideVote(after, request({ dryRun: true, candidateIndex: 0 })), { voteGranted: true, reason: '', lastVote: null });
});

test('a candidate whose last applied optime is older is refused, the term compared before the timestamp', () => {
  assert.match(decideVote(voter, request({ lastAppliedOpTime: { ts: 99, t: 2 } })).reason, /candidate's data is staler than mine/);
  assert.equal(decideVote(voter, request({ lastAppliedOpTime: { ts: 500, t: 1 } })).voteGranted, false);
  assert.equal(decideVote(voter, request({ lastAppliedOpTime: { ts: 5, t: 3 } })).voteGranted, true);
});

test('a lower term, another config version or another set is refused', () => {
  assert.match(decideVote(voter, request({ term: 2 })).reason, /candidate's term \(2\) is lower than mine \(3\)/);
  assert.match(decideVote(voter, request({ configVersion: 2 })).reason, /config version/);
  assert.match(decideVote(voter, request({ setName: 'rs1' })).reason, /set name/);
});
