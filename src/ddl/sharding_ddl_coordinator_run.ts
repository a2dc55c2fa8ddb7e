import { nextStep, UNSET_PHASE, type CoordinatorProgress, type PhaseError, type PhasePlan } from './sharding_ddl_coordinator_state_machine.js';

// One coordinator's whole run as a pure state machine, around the phase machine
// (sharding_ddl_coordinator_state_machine.ts): `ddlRunStep(state, event)` returns the next state
// and the effects the service (sharding_ddl_coordinator_service.ts) runs, one after another.
//
//   locking ─locks─▶ (new, with a database version: checkingVersion | recovered: fencing) ─▶ phases
//   phases: checkpoint, run, retry … ─▶ complete: delete the document, answer the result
//                                    └▶ abort: cleaningUp ─▶ delete the document, answer the error
//
// A new coordinator checks, once it holds its locks, that this shard is still the database's
// primary at the version the router attached; a recovered one first fences the participants with
// its new session. The phases themselves are the phase machine's.
export type DDLRunStage = 'locking' | 'checkingVersion' | 'fencing' | 'phases' | 'cleaningUp' | 'done';

export interface DDLRunState {
  readonly stage: DDLRunStage;
  readonly plan: PhasePlan;
  readonly recovered: boolean;
  readonly checkDatabaseVersion: boolean;
  readonly progress: CoordinatorProgress;
  // Why the operation ends with an error, once a phase that may abort failed for good.
  readonly error: PhaseError | undefined;
}

export type DDLRunEvent =
  | { readonly type: 'locksAcquired' }
  | { readonly type: 'databaseVersionChecked' }
  | { readonly type: 'participantsFenced' }
  | { readonly type: 'phaseDone' }
  | { readonly type: 'phaseFailed'; readonly error: PhaseError }
  | { readonly type: 'cleanedUp' };

export type DDLRunEffect =
  | { readonly type: 'acquireLocks' }
  // StaleDbVersion (an error the request answers) unless this shard is the primary at the
  // request's database version.
  | { readonly type: 'checkDatabaseVersion' }
  // Retried until done.
  | { readonly type: 'fenceParticipants' }
  // Persist the phase: insert the state document for the first, else update it and move the
  // session to its next txnNumber.
  | { readonly type: 'checkpoint'; readonly phase: string; readonly insert: boolean }
  | { readonly type: 'wait'; readonly ms: number }
  // The phase's own work (after the shutdown check and the fail point): answered by phaseDone
  // or phaseFailed.
  | { readonly type: 'runPhase'; readonly phase: string }
  // The coordinator's cleanupOnAbort, retried until done: answered by cleanedUp.
  | { readonly type: 'cleanUp' }
  | { readonly type: 'deleteDocument' }
  | { readonly type: 'answerResult' }
  | { readonly type: 'answerError'; readonly error: PhaseError };

export interface DDLRunStep {
  readonly state: DDLRunState;
  readonly effects: DDLRunEffect[];
}

// `persistedPhase`: the phase a recovered coordinator's document holds (UNSET_PHASE for a new one).
export function ddlRunStart(plan: PhasePlan, options: { readonly recovered: boolean; readonly persistedPhase: string; readonly checkDatabaseVersion: boolean }): DDLRunStep {
  const state: DDLRunState = {
    stage: 'locking', plan, recovered: options.recovered, checkDatabaseVersion: options.checkDatabaseVersion && !options.recovered,
    progress: { phase: options.persistedPhase, attempt: 0 }, error: undefined,
  };
  return { state, effects: [{ type: 'acquireLocks' }] };
}

export function ddlRunStep(state: DDLRunState, event: DDLRunEvent): DDLRunStep {
  switch (event.type) {
    case 'locksAcquired':
      if (state.stage !== 'locking') return to(state, []);
      if (state.recovered) return to({ ...state, stage: 'fencing' }, [{ type: 'fenceParticipants' }]);
      if (state.checkDatabaseVersion) return to({ ...state, stage: 'checkingVersion' }, [{ type: 'checkDatabaseVersion' }]);
      return phases(state, { type: 'start' });
    case 'databaseVersionChecked':
      return state.stage === 'checkingVersion' ? phases(state, { type: 'start' }) : to(state, []);
    case 'participantsFenced':
      return state.stage === 'fencing' ? phases(state, { type: 'recovered' }) : to(state, []);
    case 'phaseDone':
    case 'phaseFailed':
      return state.stage === 'phases' ? phases(state, event) : to(state, []);
    case 'cleanedUp': {
      if (state.stage !== 'cleaningUp' || state.error === undefined) return to(state, []);
      const effects: DDLRunEffect[] = state.progress.phase === UNSET_PHASE ? [] : [{ type: 'deleteDocument' }];
      return to({ ...state, stage: 'done' }, [...effects, { type: 'answerError', error: state.error }]);
    }
  }
}

function phases(state: DDLRunState, event: Parameters<typeof nextStep>[2]): DDLRunStep {
  const next = nextStep(state.plan, state.progress, event);
  const { step } = next;
  const moved = { ...state, stage: 'phases' as const, progress: next.progress };
  switch (step.kind) {
    case 'checkpoint':
      return to(moved, [{ type: 'checkpoint', phase: step.phase, insert: state.progress.phase === UNSET_PHASE }, { type: 'runPhase', phase: step.phase }]);
    case 'run':
      return to(moved, [{ type: 'runPhase', phase: step.phase }]);
    case 'retry':
      return to(moved, [{ type: 'wait', ms: step.delayMs }, { type: 'runPhase', phase: step.phase }]);
    case 'complete':
      return to({ ...moved, stage: 'done' }, [{ type: 'deleteDocument' }, { type: 'answerResult' }]);
    case 'abort':
      // The operation answers its error only once undone.
      return to({ ...moved, stage: 'cleaningUp', error: step.error }, [{ type: 'cleanUp' }]);
  }
}

function to(state: DDLRunState, effects: DDLRunEffect[]): DDLRunStep {
  return { state, effects };
}
