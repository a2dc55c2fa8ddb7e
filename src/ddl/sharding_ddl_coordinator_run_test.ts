import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import { ddlRunStart, ddlRunStep, type DDLRunEvent, type DDLRunState } from './sharding_ddl_coordinator_run.js';
import { UNSET_PHASE, type PhasePlan } from './sharding_ddl_coordinator_state_machine.js';

const PLAN: PhasePlan = { phases: ['kCheckPreconditions', 'kCommit', 'kRelease'], preconditionPhase: 'kCheckPreconditions' };

function describe(e: { type: string; phase?: string; insert?: boolean; ms?: number }): string {
  if (e.type === 'checkpoint') return `checkpoint ${e.phase}${e.insert === true ? ' (insert)' : ''}`;
  if (e.type === 'runPhase') return `run ${e.phase}`;
  if (e.type === 'wait') return `wait ${e.ms}`;
  return e.type;
}

function run(start: ReturnType<typeof ddlRunStart>, events: DDLRunEvent[]): { state: DDLRunState; effects: string[] } {
  let { state } = start;
  const effects = start.effects.map(describe);
  for (const e of events) {
    const next = ddlRunStep(state, e);
    state = next.state;
    effects.push(...next.effects.map(describe));
  }
  return { state, effects };
}

const fresh = (checkDatabaseVersion: boolean) => ddlRunStart(PLAN, { recovered: false, persistedPhase: UNSET_PHASE, checkDatabaseVersion });

test('a new coordinator takes its locks, checks the database version, then checkpoints (inserting first) and runs each phase, and deletes its document before answering', () => {
  const { state, effects } = run(fresh(true), [
    { type: 'locksAcquired' }, { type: 'databaseVersionChecked' }, { type: 'phaseDone' }, { type: 'phaseDone' }, { type: 'phaseDone' },
  ]);
  assert.deepEqual(effects, [
    'acquireLocks', 'checkDatabaseVersion', 'checkpoint kCheckPreconditions (insert)', 'run kCheckPreconditions',
    'checkpoint kCommit', 'run kCommit', 'checkpoint kRelease', 'run kRelease', 'deleteDocument', 'answerResult',
  ]);
  assert.equal(state.stage, 'done');
  assert.deepEqual(run(fresh(false), [{ type: 'locksAcquired' }]).effects.slice(1, 2), ['checkpoint kCheckPreconditions (insert)']);
});

test('a recovered coordinator fences its participants, never checks a database version, and runs its persisted phase again without a checkpoint', () => {
  const recovered = ddlRunStart(PLAN, { recovered: true, persistedPhase: 'kCommit', checkDatabaseVersion: true });
  assert.deepEqual(run(recovered, [{ type: 'locksAcquired' }, { type: 'participantsFenced' }, { type: 'phaseDone' }]).effects, [
    'acquireLocks', 'fenceParticipants', 'run kCommit', 'checkpoint kRelease', 'run kRelease',
  ]);
});

test('a failed phase after the precondition is retried after a backoff; a precondition that fails for good is cleaned up, its document deleted, its error answered', () => {
  const started = run(fresh(false), [{ type: 'locksAcquired' }, { type: 'phaseDone' }]).state;
  const retried = run({ state: started, effects: [] }, [{ type: 'phaseFailed', error: { code: ErrorCodes.IllegalOperation, message: 'no' } }]);
  assert.deepEqual(retried.effects, ['wait 100', 'run kCommit']);
  const refused = { code: ErrorCodes.InvalidOptions, message: 'bad request' };
  const aborted = ddlRunStep(run(fresh(false), [{ type: 'locksAcquired' }]).state, { type: 'phaseFailed', error: refused });
  assert.deepEqual(aborted.effects, [{ type: 'cleanUp' }]);
  assert.deepEqual(ddlRunStep(aborted.state, { type: 'cleanedUp' }).effects, [{ type: 'deleteDocument' }, { type: 'answerError', error: refused }]);
});

test('answers a stage does not wait for change nothing', () => {
  const locking = fresh(true).state;
  for (const e of [{ type: 'databaseVersionChecked' }, { type: 'participantsFenced' }, { type: 'phaseDone' }, { type: 'cleanedUp' }] as DDLRunEvent[]) {
    assert.deepEqual(ddlRunStep(locking, e), { state: locking, effects: [] });
  }
});
