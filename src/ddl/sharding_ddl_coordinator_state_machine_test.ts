import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import { nextStep, retryDelayMs, UNSET_PHASE, type CoordinatorEvent, type CoordinatorProgress, type CoordinatorStep, type PhasePlan } from './sharding_ddl_coordinator_state_machine.js';

const PLAN: PhasePlan = { phases: ['kCheckPreconditions', 'kFreezeMigrations', 'kBlockCrudAndRename', 'kRenameMetadata', 'kUnblockCrud'], preconditionPhase: 'kCheckPreconditions' };

// A coordinator's life as its driver lives it: `disk` is the persisted phase (undefined: no state
// document), `ran` every phase whose work started. `crashAt` stops it after that many steps and
// starts it again from the disk alone, as a node restarted after kill -9 does.
function drive(plan: PhasePlan, crashAt: number[], failures: Map<string, number[]> = new Map()): { ran: string[]; disk: string | undefined; outcome: CoordinatorStep['kind']; steps: number } {
  let disk: string | undefined;
  const ran: string[] = [];
  const failuresLeft = new Map([...failures].map(([p, codes]) => [p, [...codes]]));
  let progress: CoordinatorProgress = { phase: UNSET_PHASE, attempt: 0 };
  let event: CoordinatorEvent = { type: 'start' };
  let steps = 0;
  for (let guard = 0; guard < 1000; guard++) {
    if (crashAt.includes(steps)) {
      crashAt = crashAt.filter((s) => s !== steps);
      if (disk === undefined) return { ran, disk, outcome: 'abort', steps }; // nothing persisted: the request is simply lost
      progress = { phase: disk, attempt: 0 };
      event = { type: 'recovered' };
    }
    const next = nextStep(plan, progress, event);
    progress = next.progress;
    const { step } = next;
    steps += 1;
    switch (step.kind) {
      case 'checkpoint':
        disk = step.phase;
        ran.push(step.phase);
        break;
      case 'run':
      case 'retry':
        assert.equal(disk, step.phase, 'a phase runs only once persisted');
        ran.push(step.phase);
        break;
      case 'complete':
      case 'abort':
        disk = undefined;
        return { ran, disk, outcome: step.kind, steps };
    }
    const code = failuresLeft.get(step.phase)?.shift();
    event = code === undefined ? { type: 'phaseDone' } : { type: 'phaseFailed', error: { code: code === 0 ? undefined : code, message: 'failed' } };
  }
  throw new Error('the coordinator never ended');
}

// Phases in order, each once or more in a row, none skipped.
function assertInOrder(ran: string[], phases: readonly string[]): void {
  const distinct = ran.filter((p, i) => i === 0 || ran[i - 1] !== p);
  assert.deepEqual(distinct, phases, `phases ran as ${ran.join(', ')}`);
}

test('without faults every phase is checkpointed, then run, once and in order, and the coordinator completes', () => {
  const end = drive(PLAN, []);
  assert.deepEqual(end.ran, PLAN.phases);
  assert.equal(end.outcome, 'complete');
  assert.equal(end.disk, undefined);
});

test('a crash after any step resumes at the persisted phase, never before it, and completes', () => {
  const clean = drive(PLAN, []);
  for (let crash = 1; crash < clean.steps; crash++) {
    const end = drive(PLAN, [crash]);
    assert.equal(end.outcome, 'complete', `crash after step ${crash}`);
    assertInOrder(end.ran, PLAN.phases);
    // The phase that was persisted when it crashed runs again; every other once.
    assert.equal(end.ran.length, PLAN.phases.length + 1, `crash after step ${crash}: ${end.ran.join(', ')}`);
  }
});

test('two crashes, at every pair of steps, still complete with the phases in order', () => {
  const clean = drive(PLAN, []);
  for (let a = 1; a < clean.steps + 2; a++) {
    for (let b = a + 1; b < clean.steps + 4; b++) {
      const end = drive(PLAN, [a, b]);
      assert.equal(end.outcome, 'complete', `crashes after steps ${a} and ${b}`);
      assertInOrder(end.ran, PLAN.phases);
    }
  }
});

test('the precondition phase answers a non-retriable error and leaves no state document', () => {
  const end = drive(PLAN, [], new Map([['kCheckPreconditions', [ErrorCodes.IllegalOperation]]]));
  assert.equal(end.outcome, 'abort');
  assert.deepEqual(end.ran, ['kCheckPreconditions']);
  assert.equal(end.disk, undefined);
});

test('the precondition phase retries a retriable error or a broken connection', () => {
  const end = drive(PLAN, [], new Map([['kCheckPreconditions', [ErrorCodes.LockBusy, 0]]]));
  assert.equal(end.outcome, 'complete');
  assert.deepEqual(end.ran.slice(0, 3), ['kCheckPreconditions', 'kCheckPreconditions', 'kCheckPreconditions']);
});

test('after the precondition phase every error is retried until the phase succeeds', () => {
  const end = drive(PLAN, [], new Map([['kRenameMetadata', [ErrorCodes.IllegalOperation, ErrorCodes.NamespaceNotFound, ErrorCodes.BadValue]]]));
  assert.equal(end.outcome, 'complete');
  assert.equal(end.ran.filter((p) => p === 'kRenameMetadata').length, 4);
  assertInOrder(end.ran, PLAN.phases);
});

test('a plan with a last abortable phase answers a non-retriable error up to it, also after a recovery, and retries after it', () => {
  const plan: PhasePlan = { phases: ['kCheckPreconditions', 'kEnterCriticalSection', 'kCommit', 'kExitCriticalSection'], preconditionPhase: 'kCheckPreconditions', lastAbortablePhase: 'kCommit' };
  const refused = drive(plan, [], new Map([['kCommit', [ErrorCodes.InvalidOptions]]]));
  assert.equal(refused.outcome, 'abort');
  assert.deepEqual(refused.ran, ['kCheckPreconditions', 'kEnterCriticalSection', 'kCommit']);
  const crashed = drive(plan, [3], new Map([['kCommit', [ErrorCodes.LockBusy, ErrorCodes.InvalidOptions]]]));
  assert.equal(crashed.outcome, 'abort', 'the recovered commit is refused too');
  const late = drive(plan, [], new Map([['kExitCriticalSection', [ErrorCodes.InvalidOptions]]]));
  assert.equal(late.outcome, 'complete');
  assert.deepEqual(late.ran.slice(-2), ['kExitCriticalSection', 'kExitCriticalSection']);
});

test('retries back off exponentially up to 5 s, from 0 again after each phase', () => {
  assert.deepEqual([0, 1, 2, 3, 5, 6, 10].map(retryDelayMs), [100, 200, 400, 800, 3200, 5000, 5000]);
  let progress: CoordinatorProgress = { phase: 'kRenameMetadata', attempt: 0 };
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    const next = nextStep(PLAN, progress, { type: 'phaseFailed', error: { code: ErrorCodes.BadValue, message: '' } });
    progress = next.progress;
    if (next.step.kind === 'retry') delays.push(next.step.delayMs);
  }
  assert.deepEqual(delays, [100, 200, 400]);
  assert.equal(nextStep(PLAN, progress, { type: 'phaseDone' }).progress.attempt, 0);
});

test('without a precondition phase even the first phase retries what it cannot do', () => {
  const end = drive({ phases: ['kDrop'] }, [], new Map([['kDrop', [ErrorCodes.IllegalOperation]]]));
  assert.equal(end.outcome, 'complete');
  assert.deepEqual(end.ran, ['kDrop', 'kDrop']);
});

test('a persisted phase the coordinator does not know is refused rather than guessed at', () => {
  assert.throws(() => nextStep(PLAN, { phase: 'kDropCollection', attempt: 0 }, { type: 'recovered' }), /unknown persisted phase/);
});
