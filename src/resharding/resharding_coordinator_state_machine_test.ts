import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import {
  coordinatorStep, mayAbort, RESHARDING_STATES, USER_ABORT,
  type CoordinatorEffect, type CoordinatorEvent, type CoordinatorProgress, type ReshardingState,
} from './resharding_coordinator_state_machine.js';

const at = (state: ReshardingState, extra: Partial<CoordinatorProgress> = {}): CoordinatorProgress => ({ state, commitRequested: false, ...extra });

// A resharding as its driver lives it: `disk` is the persisted state, `ran` every state whose work
// started. Each run is checked against the disk: nothing runs that is not persisted first.
function drive(events: (ran: ReshardingState[]) => CoordinatorEvent | undefined): { ran: ReshardingState[]; disk: ReshardingState | undefined; answers: CoordinatorEffect[] } {
  let progress = at('initializing');
  let disk: ReshardingState | undefined = 'initializing';
  const ran: ReshardingState[] = [];
  const answers: CoordinatorEffect[] = [];
  const queue: CoordinatorEvent[] = [{ type: 'started' }];
  for (let guard = 0; guard < 100 && queue.length > 0; guard++) {
    const step = coordinatorStep(progress, queue.shift()!);
    progress = step.progress;
    for (const effect of step.effects) {
      switch (effect.type) {
        case 'persist': disk = effect.state; break;
        case 'run':
          assert.equal(disk, effect.state, `${effect.state} runs only once persisted`);
          ran.push(effect.state);
          queue.push(events(ran) ?? { type: 'phaseDone', state: effect.state });
          break;
        case 'removeDocument': disk = undefined; break;
        case 'retry': assert.fail('no retry without a transient failure');
        default: answers.push(effect);
      }
    }
  }
  return { ran, disk, answers };
}

test('a resharding without faults goes through every state once, in order, each persisted before it runs, and answers ok', () => {
  const end = drive(() => undefined);
  assert.deepEqual(end.ran, ['initializing', 'preparing-to-donate', 'cloning', 'applying', 'blocking-writes', 'committing']);
  assert.equal(end.disk, undefined);
  assert.deepEqual(end.answers, [{ type: 'answer' }]);
});

test('each state is followed by its next one, with what it noted persisted in the same write', () => {
  const next: Record<string, ReshardingState> = {
    'initializing': 'preparing-to-donate', 'preparing-to-donate': 'cloning', 'cloning': 'applying', 'applying': 'blocking-writes',
    'blocking-writes': 'committing', 'committing': 'done', 'aborting': 'done',
  };
  for (const [state, expected] of Object.entries(next)) {
    const step = coordinatorStep(at(state as ReshardingState), { type: 'phaseDone', state: state as ReshardingState, noted: { cloneTimestamp: 1 } });
    assert.equal(step.progress.state, expected);
    assert.deepEqual(step.effects[0], { type: 'persist', state: expected, noted: { cloneTimestamp: 1 } }, `${state}: the persist comes first`);
    if (expected === 'done') assert.deepEqual(step.effects.slice(1).map((e) => e.type), ['removeDocument', 'answer']);
    else assert.deepEqual(step.effects[1], { type: 'run', state: expected });
  }
});

test('a late phaseDone or phaseFailed of a state no longer current changes nothing', () => {
  for (const event of [{ type: 'phaseDone', state: 'cloning' }, { type: 'phaseFailed', state: 'cloning', error: USER_ABORT }] as const) {
    const step = coordinatorStep(at('aborting', { abortReason: USER_ABORT }), event);
    assert.equal(step.progress.state, 'aborting');
    assert.deepEqual(step.effects, []);
  }
});

test('an abort before the commit decision interrupts the running state, persists aborting with its reason, then runs it', () => {
  for (const state of RESHARDING_STATES.filter((s) => mayAbort(s))) {
    const step = coordinatorStep(at(state), { type: 'abortRequested' });
    assert.equal(step.progress.state, 'aborting', state);
    assert.deepEqual(step.effects, [
      { type: 'interrupt' },
      { type: 'persist', state: 'aborting', noted: {}, abortReason: USER_ABORT },
      { type: 'run', state: 'aborting' },
    ]);
  }
  assert.deepEqual(RESHARDING_STATES.filter((s) => mayAbort(s)), ['initializing', 'preparing-to-donate', 'cloning', 'applying', 'blocking-writes']);
});

test('an abort after the commit decision is refused with ReshardCollectionCommitted and changes nothing', () => {
  for (const state of ['committing', 'done'] as const) {
    const step = coordinatorStep(at(state), { type: 'abortRequested' });
    assert.equal(step.progress.state, state);
    assert.equal(step.effects.length, 1);
    const [refusal] = step.effects;
    assert.ok(refusal?.type === 'refuse' && refusal.code === ErrorCodes.ReshardCollectionCommitted);
  }
});

test('a failure before the decision aborts with its reason; one after it runs the state again, never aborting', () => {
  const error = { code: ErrorCodes.ReshardingCriticalSectionTimeout, errmsg: 'timed out' };
  const before = coordinatorStep(at('blocking-writes'), { type: 'phaseFailed', state: 'blocking-writes', error });
  assert.equal(before.progress.state, 'aborting');
  assert.deepEqual(before.progress.abortReason, error);
  assert.deepEqual(before.effects.map((e) => e.type), ['persist', 'run']);
  for (const state of ['committing', 'aborting'] as const) {
    const after = coordinatorStep(at(state), { type: 'phaseFailed', state, error });
    assert.equal(after.progress.state, state);
    assert.deepEqual(after.effects, [{ type: 'retry', state }]);
  }
});

test('a transient failure (a shard unreachable, electing) runs the state again, before the decision too', () => {
  // FailedToSatisfyReadPreference: a shard's monitor found no primary for a while (a primary whose
  // event loop was held long enough, in npm run bench -- reshard-1m).
  for (const code of [ErrorCodes.HostUnreachable, ErrorCodes.NotWritablePrimary, ErrorCodes.InterruptedDueToReplStateChange, ErrorCodes.FailedToSatisfyReadPreference]) {
    for (const state of ['cloning', 'blocking-writes', 'committing'] as const) {
      const step = coordinatorStep(at(state), { type: 'phaseFailed', state, error: { code, errmsg: 'for the moment' } });
      assert.equal(step.progress.state, state);
      assert.deepEqual(step.effects, [{ type: 'retry', state }]);
    }
  }
});

test('an aborted resharding runs the abort persisted, removes its document and answers the reason', () => {
  const end = drive((ran) => ran.at(-1) === 'cloning' ? { type: 'phaseFailed', state: 'cloning', error: { code: ErrorCodes.NamespaceNotFound, errmsg: 'dropped' } } : undefined);
  assert.deepEqual(end.ran, ['initializing', 'preparing-to-donate', 'cloning', 'aborting']);
  assert.equal(end.disk, undefined);
  assert.deepEqual(end.answers, [{ type: 'answer', error: { code: ErrorCodes.NamespaceNotFound, errmsg: 'dropped' } }]);
});

test('a second abort while aborting joins it', () => {
  assert.deepEqual(coordinatorStep(at('aborting', { abortReason: USER_ABORT }), { type: 'abortRequested' }).effects, []);
});

test('a recovered coordinator runs its persisted state again, never one before it', () => {
  for (const state of RESHARDING_STATES.filter((s) => s !== 'done')) {
    assert.deepEqual(coordinatorStep(at(state), { type: 'started' }).effects, [{ type: 'run', state }]);
  }
  assert.deepEqual(coordinatorStep(at('done'), { type: 'started' }).effects.map((e) => e.type), ['removeDocument', 'answer']);
});

test('commitReshardCollection wakes the applying state before the critical section, is a no-op from it on, and is refused while aborting', () => {
  for (const state of ['initializing', 'preparing-to-donate', 'cloning', 'applying'] as const) {
    const step = coordinatorStep(at(state), { type: 'commitRequested' });
    assert.equal(step.progress.commitRequested, true);
    assert.deepEqual(step.effects, [{ type: 'wakeApplying' }]);
  }
  for (const state of ['blocking-writes', 'committing', 'done'] as const) assert.deepEqual(coordinatorStep(at(state), { type: 'commitRequested' }).effects, []);
  const [refusal] = coordinatorStep(at('aborting', { abortReason: USER_ABORT }), { type: 'commitRequested' }).effects;
  assert.ok(refusal?.type === 'refuse' && refusal.code === ErrorCodes.ReshardCollectionAborted);
});
