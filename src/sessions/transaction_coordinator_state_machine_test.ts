import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import type { CoordinatorDocument } from './transaction_coordinator.js';
import { coordinatorInitialState, coordinatorOutcome, coordinatorStep, type CoordinatorEvent, type CoordinatorState } from './transaction_coordinator_state_machine.js';
import { checkTwoPhaseCommit, exploreTwoPhaseCommit, type CoordinatorStepFunction } from './transaction_coordinator_test_util.js';

const ts = (t: number, i = 1) => new Timestamp({ t, i });
const doc: CoordinatorDocument = { lsid: { id: 'x' }, txnNumber: 3, participants: ['shard0', 'shard1'] };

function run(events: CoordinatorEvent[], from: CoordinatorState = coordinatorInitialState()) {
  let state = from;
  const effects = [];
  for (const e of events) {
    const next = coordinatorStep(state, e);
    state = next.state;
    effects.push(...next.effects);
  }
  return { state, effects };
}

test('a live coordinator persists its participants, collects votes, persists the decision, delivers it, then deletes its document', () => {
  const commit = { decision: 'commit' as const, commitTimestamp: ts(6) };
  const steps: [CoordinatorEvent, string[]][] = [
    [{ type: 'start', doc }, ['writeParticipantList']],
    [{ type: 'participantListPersisted' }, ['sendPrepare']],
    [{ type: 'voteReceived', vote: { shardId: 'shard1', prepareTimestamp: ts(6) } }, []],
    [{ type: 'voteReceived', vote: { shardId: 'shard0', prepareTimestamp: ts(4) } }, ['writeDecision']],
    [{ type: 'decisionPersisted' }, ['sendDecision']],
    [{ type: 'decisionAcknowledged', shardId: 'shard0' }, []],
    [{ type: 'decisionAcknowledged', shardId: 'shard1' }, ['deleteCoordinatorDoc']],
    [{ type: 'coordinatorDocDeleted' }, []],
  ];
  let state = coordinatorInitialState();
  for (const [event, expected] of steps) {
    const next = coordinatorStep(state, event);
    assert.deepEqual(next.effects.map((e) => e.type), expected, `after ${event.type}`);
    assert.equal(coordinatorOutcome(next.state), event.type === 'coordinatorDocDeleted' ? next.state.doc?.decision : undefined);
    state = next.state;
  }
  assert.deepEqual(coordinatorOutcome(state), commit);
  assert.deepEqual(run(steps.slice(0, 4).map(([e]) => e)).effects[2], { type: 'writeDecision', doc: { ...doc, decision: commit } });
});

test('the decision waits for every vote and names the first refusal in the participants\' order', () => {
  const { state, effects } = run([
    { type: 'start', doc }, { type: 'participantListPersisted' },
    { type: 'voteReceived', vote: { shardId: 'shard1', code: 112, errmsg: 'Write conflict' } },
  ]);
  assert.equal(state.phase, 'kWaitingForVotes');
  const decided = coordinatorStep(state, { type: 'voteReceived', vote: { shardId: 'shard0', code: 251, errmsg: 'gone' } });
  assert.equal(effects.length + decided.effects.length, 3);
  const decision = decided.state.doc?.decision;
  assert.ok(decision?.decision === 'abort' && /shard0.*251/.test(decision.abortStatus.errmsg));
});

test('a recovered coordinator without a decision aborts, and one with a decision delivers it again', () => {
  const undecided = coordinatorStep(coordinatorInitialState(), { type: 'crashRecovered', doc });
  assert.equal(undecided.effects[0]?.type, 'writeDecision');
  assert.equal(undecided.state.doc?.decision?.decision, 'abort');
  const decided = { ...doc, decision: { decision: 'commit' as const, commitTimestamp: ts(9) } };
  assert.deepEqual(coordinatorStep(coordinatorInitialState(), { type: 'crashRecovered', doc: decided }).effects, [{ type: 'sendDecision', participants: doc.participants, decision: decided.decision }]);
});

test('late, repeated and unknown answers change nothing', () => {
  const waiting = run([{ type: 'start', doc }, { type: 'participantListPersisted' }, { type: 'voteReceived', vote: { shardId: 'shard0', prepareTimestamp: ts(4) } }]).state;
  for (const e of [
    { type: 'voteReceived', vote: { shardId: 'shard0', code: 251, errmsg: 'again' } },
    { type: 'voteReceived', vote: { shardId: 'shard9', prepareTimestamp: ts(4) } },
    { type: 'decisionAcknowledged', shardId: 'shard0' },
    { type: 'coordinatorDocDeleted' },
  ] as CoordinatorEvent[]) {
    assert.deepEqual(coordinatorStep(waiting, e), { state: waiting, effects: [] });
  }
});

test('a shard named twice is asked twice and both answers count', () => {
  const twice = { ...doc, participants: ['shard0', 'shard0'] };
  const vote = { type: 'voteReceived', vote: { shardId: 'shard0', prepareTimestamp: ts(4) } } as const;
  assert.equal(run([{ type: 'start', doc: twice }, { type: 'participantListPersisted' }, vote]).effects.length, 2);
  assert.equal(run([{ type: 'start', doc: twice }, { type: 'participantListPersisted' }, vote, vote]).effects[2]?.type, 'writeDecision');
});

test('without participants the coordinator still passes every fail point and aborts', () => {
  const { state, effects } = run([{ type: 'start', doc: { ...doc, participants: [] } }, { type: 'participantListPersisted' }, { type: 'decisionPersisted' }, { type: 'coordinatorDocDeleted' }]);
  assert.deepEqual(effects.map((e) => e.type), ['writeParticipantList', 'sendPrepare', 'writeDecision', 'sendDecision', 'deleteCoordinatorDoc']);
  assert.equal(coordinatorOutcome(state)?.decision, 'abort');
});

const explored = { participants: ['shard0', 'shard1', 'shard2'], prepareTimes: [ts(12), ts(15), ts(11)] };

test('every interleaving of votes (either way, any order), answers and up to two coordinator crashes keeps the two-phase commit safe and ends it', () => {
  const { states, violation } = exploreTwoPhaseCommit(coordinatorStep, { ...explored, maxCrashes: 2 });
  assert.equal(violation, undefined, violation && `${violation.violations.join('\n')}\n${violation.trace.join('\n')}`);
  assert.ok(states > 1000, `${states} states`);
});

// The checker must catch the bugs it is there for, each planted in a step function that otherwise
// is the real one.
test('a coordinator that commits after one participant voted abort is caught', () => {
  const ignoresRefusals: CoordinatorStepFunction = (state, event) =>
    coordinatorStep(state, event.type === 'voteReceived' && !('prepareTimestamp' in event.vote) ? { ...event, vote: { shardId: event.vote.shardId, prepareTimestamp: ts(1) } } : event);
  const { violation } = exploreTwoPhaseCommit(ignoresRefusals, { ...explored, maxCrashes: 0 });
  assert.ok(violation !== undefined);
  assert.match(violation.violations[0]!, /commit although shard\d refused to prepare/);
});

test('a coordinator that sends its decision before persisting it, or forgets it before every answer, is caught', () => {
  const sendsFirst: CoordinatorStepFunction = (state, event) => {
    const next = coordinatorStep(state, event);
    const decided = next.effects.find((e) => e.type === 'writeDecision')?.doc;
    if (decided?.decision === undefined) return next;
    return { state: next.state, effects: [{ type: 'sendDecision', participants: decided.participants, decision: decided.decision }, ...next.effects] };
  };
  const early = exploreTwoPhaseCommit(sendsFirst, { ...explored, maxCrashes: 0 });
  assert.match(early.violation?.violations[0] ?? '', /before it was persisted/);

  const forgetsEarly: CoordinatorStepFunction = (state, event) => {
    const next = coordinatorStep(state, event);
    return next.effects.some((e) => e.type === 'sendDecision') ? { state: { ...next.state, phase: 'kDeletingCoordinatorDoc' }, effects: [...next.effects, { type: 'deleteCoordinatorDoc' }] } : next;
  };
  assert.match(exploreTwoPhaseCommit(forgetsEarly, { ...explored, maxCrashes: 0 }).violation?.violations[0] ?? '', /deleted before/);
});

test('a coordinator that recovers without a decision by committing is caught', () => {
  // It cannot know the votes it lost; the explorer finds the interleaving where one was a refusal.
  const commitsOnRecovery: CoordinatorStepFunction = (state, event) => {
    const next = coordinatorStep(state, event);
    if (event.type !== 'crashRecovered' || event.doc.decision !== undefined) return next;
    const doc = { ...event.doc, decision: { decision: 'commit' as const, commitTimestamp: ts(20) } };
    return { state: { ...next.state, doc }, effects: [{ type: 'writeDecision', doc }] };
  };
  const { violation } = exploreTwoPhaseCommit(commitsOnRecovery, { ...explored, maxCrashes: 1 });
  assert.match(violation?.violations[0] ?? '', /commit although shard\d (refused to prepare|did not vote)/);
});

test('the checker sees a decision that changes and participants that disagree', () => {
  const participants = ['a', 'b'];
  const base = { lsid: {}, txnNumber: 1, participants };
  const abort = { decision: 'abort' as const, abortStatus: { code: 251, errmsg: '' } };
  assert.match(checkTwoPhaseCommit([
    { type: 'persisted', doc: base },
    { type: 'voted', vote: { shardId: 'a', prepareTimestamp: ts(1) } }, { type: 'voted', vote: { shardId: 'b', prepareTimestamp: ts(2) } },
    { type: 'persisted', doc: { ...base, decision: abort } },
    { type: 'persisted', doc: { ...base, decision: { decision: 'commit', commitTimestamp: ts(2) } } },
  ])[0]!, /decision changed/);
  assert.match(checkTwoPhaseCommit([
    { type: 'voted', vote: { shardId: 'a', prepareTimestamp: ts(1) } },
    { type: 'applied', shardId: 'a', decision: 'commit' }, { type: 'applied', shardId: 'b', decision: 'abort' },
  ])[0]!, /b applied abort while a applied commit/);
  assert.match(checkTwoPhaseCommit([
    { type: 'persisted', doc: base },
    { type: 'voted', vote: { shardId: 'a', prepareTimestamp: ts(5) } }, { type: 'voted', vote: { shardId: 'b', prepareTimestamp: ts(2) } },
    { type: 'persisted', doc: { ...base, decision: { decision: 'commit', commitTimestamp: ts(2) } } },
  ])[0]!, /before a's prepare/);
});
