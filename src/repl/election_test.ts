import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replEffectClass, type ReplEffect } from './effects.js';
import type { ReplSetRequestVotes } from './messages.js';
import { topologyStep } from './topology_coordinator.js';
import { configOf, deliver, electedPrimary, entry, hearFromAll, memberConfig, readyToStand, sent, started, THREE, tick } from './topology_test_util.js';

function request(over: Partial<ReplSetRequestVotes> = {}): ReplSetRequestVotes {
  return { kind: 'replSetRequestVotes', setName: 'rs0', dryRun: false, term: 1, candidateIndex: 2, configVersion: 1, lastAppliedOpTime: { ts: 1, t: 0 }, ...over };
}

function granted(effects: readonly ReplEffect[]): boolean {
  const answer = sent(effects, 'replSetRequestVotesResponse')[0]!.message;
  return answer.kind === 'replSetRequestVotesResponse' && answer.voteGranted;
}

test('the election timeout is 10 s plus a seeded offset of up to 15%, the same for the same seed', () => {
  const at = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) => started(THREE, 1, { seed, nowMs: 1000 }).electionTimeoutAtMs!);
  for (const t of at) assert.ok(t >= 11_000 && t < 12_500, `${t}`);
  assert.ok(new Set(at).size > 1);
  assert.equal(started(THREE, 1, { seed: 3, nowMs: 1000 }).electionTimeoutAtMs, at[2]);
});

test('a member that times out runs a dry run first, in its current term: nothing persisted, no term moved', () => {
  const s = readyToStand(THREE, 0);
  const step = tick(s, s.electionTimeoutAtMs!);
  assert.equal(step.state.role, 'candidate');
  assert.equal(step.state.term, 0);
  assert.equal(step.effects.filter((e) => replEffectClass(e) === 'persist').length, 0);
  const asks = sent(step.effects, 'replSetRequestVotes');
  assert.deepEqual(asks.map((e) => e.to), [1, 2]);
  assert.deepEqual(asks.map((e) => [(e.message as ReplSetRequestVotes).dryRun, (e.message as ReplSetRequestVotes).term]), [[true, 0], [true, 0]]);
});

test('after a winning dry run the candidate persists its vote for itself in the new term before it asks anyone', () => {
  let s = readyToStand(THREE, 0);
  s = tick(s, s.electionTimeoutAtMs!).state;
  const step = deliver(s, 2, { kind: 'replSetRequestVotesResponse', term: 0, voteGranted: true, reason: '', dryRun: true, requestTerm: 0 });
  assert.deepEqual(step.effects[0], { type: 'persistLastVote', lastVote: { term: 1, candidateIndex: 0 } });
  assert.ok(step.effects.slice(1).every((e) => e.type === 'send'));
  assert.equal(step.state.term, 1);
  assert.deepEqual(sent(step.effects, 'replSetRequestVotes').map((e) => (e.message as ReplSetRequestVotes).dryRun), [false, false]);
});

test('a won election makes a PRIMARY that accepts writes only after writing the "new primary" no-op in its term', () => {
  const s = electedPrimary();
  assert.equal(s.memberState, 'PRIMARY');
  assert.equal(s.term, 1);
  assert.deepEqual(s.oplog.at(-1), { ts: s.oplog.at(-1)!.ts, t: 1, op: 'n', o: { msg: 'new primary' } });
  assert.equal(s.leader!.writable, true);
  assert.deepEqual(s.leader!.firstOpTimeOfMyTerm, { ts: s.oplog.at(-1)!.ts, t: 1 });
});

test('a lost election leaves the candidate following, its timer armed again', () => {
  let s = readyToStand(THREE, 0);
  s = tick(s, s.electionTimeoutAtMs!).state;
  const no = { kind: 'replSetRequestVotesResponse', term: 0, voteGranted: false, reason: 'stale', dryRun: true, requestTerm: 0 } as const;
  s = deliver(deliver(s, 1, no).state, 2, no).state;
  assert.equal(s.role, 'follower');
  assert.ok(s.electionTimeoutAtMs! > s.nowMs);
});

test('a voter persists its vote before it answers, moves to the term, and refuses a second candidate of that term, even after a restart', () => {
  const voter = started(THREE, 1, { oplog: [entry(1, 0, 'n')] });
  const first = deliver(voter, 2, request());
  assert.deepEqual(first.effects.map((e) => e.type), ['persistLastVote', 'send']);
  assert.equal(first.state.term, 1);
  assert.equal(granted(deliver(first.state, 0, request({ candidateIndex: 0 })).effects), false);
  const restarted = started(THREE, 1, { lastVote: first.state.lastVote });
  assert.equal(restarted.term, 1);
  assert.equal(granted(deliver(restarted, 0, request({ candidateIndex: 0 })).effects), false);
});

test('priority 0, non-voting members and arbiters never stand; nor does a member that cannot see a majority', () => {
  const cfg = configOf([memberConfig(0, { priority: 0 }), memberConfig(1, { votes: 0, priority: 0 }), memberConfig(2, { arbiterOnly: true }), memberConfig(3), memberConfig(4)]);
  for (const i of [0, 1, 2]) {
    const s = readyToStand(cfg, i);
    assert.equal(s.electionTimeoutAtMs, null);
    assert.equal(sent(tick(s, 1_000_000).effects, 'replSetRequestVotes').length, 0);
  }
  const alone = started(THREE, 0);
  const step = tick(alone, alone.electionTimeoutAtMs!);
  assert.equal(step.state.role, 'follower');
  assert.equal(sent(step.effects, 'replSetRequestVotes').length, 0);
});

test('replSetStepUp: a member that may stand runs its dry run at once, long before its timer; one that may not stays as it is', () => {
  // Just started, and heard from the others: its timer fires 10 s or more from now.
  const s = hearFromAll(started(THREE, 0), { ts: 1, t: 0 });
  assert.ok(s.electionTimeoutAtMs! >= s.nowMs + 10_000);
  const step = topologyStep(s, { type: 'stepUp', nowMs: s.nowMs });
  assert.equal(step.state.role, 'candidate');
  assert.equal(step.state.election!.reason, 'stepUpRequest');
  assert.deepEqual(sent(step.effects, 'replSetRequestVotes').map((e) => [e.to, (e.message as ReplSetRequestVotes).dryRun]), [[1, true], [2, true]]);
  const won = deliver(deliver(step.state, 1, { kind: 'replSetRequestVotesResponse', term: 0, voteGranted: true, reason: '', dryRun: true, requestTerm: 0 }).state,
    1, { kind: 'replSetRequestVotesResponse', term: 1, voteGranted: true, reason: '', dryRun: false, requestTerm: 1 });
  assert.equal(won.state.role, 'leader');

  const frozen = topologyStep(s, { type: 'freeze', frozenUntilMs: s.nowMs + 60_000, nowMs: s.nowMs }).state;
  const alone = started(THREE, 0);
  const priorityZero = readyToStand(configOf([memberConfig(0, { priority: 0 }), memberConfig(1), memberConfig(2)]), 0);
  for (const [why, cannot] of [['frozen', frozen], ['sees no majority', alone], ['priority 0', priorityZero], ['primary', electedPrimary()]] as const) {
    const after = topologyStep(cannot, { type: 'stepUp', nowMs: cannot.nowMs });
    assert.equal(after.state.role, cannot.role, why);
    assert.equal(sent(after.effects, 'replSetRequestVotes').length, 0, why);
  }
});

test('a primary or candidate that sees a newer term in a real vote request stands down before answering', () => {
  const p = electedPrimary();
  const step = deliver(p, 2, request({ term: 5, lastAppliedOpTime: { ts: 100_000_000, t: 1 } }));
  assert.equal(step.state.memberState, 'SECONDARY');
  assert.equal(step.state.term, 5);
  assert.deepEqual(step.effects.map((e) => e.type), ['persistLastVote', 'memberStateChanged', 'send']);
});
