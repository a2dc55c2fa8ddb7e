import { ErrorCodes } from '../base/error_codes.js';

// The phase machine every DDL coordinator runs (MongoDB's ShardingDDLCoordinator and its
// _buildPhaseHandler, README_ddl_operations.md): pure, so that a test can stop it at any step,
// keep only what was persisted, and drive the recovery.
//
//   start ──▶ checkpoint(p0) ──▶ run(p0) ──done──▶ checkpoint(p1) ──▶ run(p1) ── ... ──▶ complete
//                                   │                                  │
//                                   └─failed─▶ abort (the precondition     └─failed─▶ retry(p1, backoff) ──▶ run(p1)
//                                              phase only, when the error
//                                              is not retriable)
//   recovered(phase p) ──▶ run(p)
//
// A checkpoint persists the phase before its work starts (the first one inserts the state
// document), so after a crash the work of the persisted phase runs again and the phases before it
// never do: every phase's work is idempotent. Only the phase that checks the preconditions may end
// the operation with an error (or, for an operation that can undo its steps up to its commit, a
// phase up to lastAbortablePhase); every other retries until done, since the metadata may already
// be half changed.

export const UNSET_PHASE = 'kUnset';

export interface PhasePlan {
  readonly phases: readonly string[];
  // The phase that checks the preconditions, if the operation has one: the only one that may end
  // it with an error.
  readonly preconditionPhase?: string;
  // A later phase up to which an error that is not retriable still ends the operation, after the
  // coordinator's cleanupOnAbort has undone what the phases since the precondition did (MongoDB's
  // CreateCollectionCoordinator releases its critical section when its commit is refused).
  readonly lastAbortablePhase?: string;
}

export interface CoordinatorProgress {
  // UNSET_PHASE until the first checkpoint; then the phase persisted last.
  readonly phase: string;
  // Failed attempts of this phase since it was entered (memory only: a restart starts at 0).
  readonly attempt: number;
}

export interface PhaseError {
  readonly code: number | undefined;
  readonly message: string;
}

export type CoordinatorEvent =
  | { readonly type: 'start' }
  | { readonly type: 'recovered' }
  | { readonly type: 'phaseDone' }
  | { readonly type: 'phaseFailed'; readonly error: PhaseError };

export type CoordinatorStep =
  // Persist `phase` (insert the document when it is the first), then run it.
  | { readonly kind: 'checkpoint'; readonly phase: string }
  // The phase is persisted already (a recovered coordinator): run its work again.
  | { readonly kind: 'run'; readonly phase: string }
  | { readonly kind: 'retry'; readonly phase: string; readonly delayMs: number }
  // Delete the state document, release the locks, answer the result.
  | { readonly kind: 'complete' }
  // Delete the state document (if persisted), release the locks, answer the error.
  | { readonly kind: 'abort'; readonly error: PhaseError };

const RETRY_DELAY_MS_MIN = 100;
const RETRY_DELAY_MS_MAX = 5_000;

// Errors that say nothing about the request, only about the moment: a precondition phase that
// meets one retries instead of answering it.
const RETRIABLE_CODES: ReadonlySet<number> = new Set([
  ErrorCodes.HostUnreachable, ErrorCodes.HostNotFound, ErrorCodes.NetworkTimeout, ErrorCodes.ShutdownInProgress,
  ErrorCodes.InterruptedAtShutdown, ErrorCodes.PrimarySteppedDown, ErrorCodes.InterruptedDueToReplStateChange, ErrorCodes.NotWritablePrimary, ErrorCodes.LockBusy,
  ErrorCodes.ExceededTimeLimit, ErrorCodes.StaleConfig, ErrorCodes.StaleDbVersion, ErrorCodes.StaleEpoch, ErrorCodes.WriteConflict,
]);

export function isRetriableDDLError(error: PhaseError): boolean {
  // No code: the connection failed before any reply.
  return error.code === undefined || RETRIABLE_CODES.has(error.code);
}

export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_DELAY_MS_MIN * 2 ** attempt, RETRY_DELAY_MS_MAX);
}

export function nextStep(plan: PhasePlan, progress: CoordinatorProgress, event: CoordinatorEvent): { progress: CoordinatorProgress; step: CoordinatorStep } {
  const { phases } = plan;
  switch (event.type) {
    case 'start':
      if (progress.phase !== UNSET_PHASE) throw new Error(`a coordinator at ${progress.phase} cannot start again`);
      return { progress: { phase: phases[0]!, attempt: 0 }, step: { kind: 'checkpoint', phase: phases[0]! } };
    case 'recovered':
      if (!phases.includes(progress.phase)) throw new Error(`unknown persisted phase ${progress.phase}`);
      return { progress: { phase: progress.phase, attempt: 0 }, step: { kind: 'run', phase: progress.phase } };
    case 'phaseDone': {
      const next = phases[phases.indexOf(progress.phase) + 1];
      if (next === undefined) return { progress, step: { kind: 'complete' } };
      return { progress: { phase: next, attempt: 0 }, step: { kind: 'checkpoint', phase: next } };
    }
    case 'phaseFailed':
      if (mayAbort(plan, progress.phase) && !isRetriableDDLError(event.error)) return { progress, step: { kind: 'abort', error: event.error } };
      return { progress: { ...progress, attempt: progress.attempt + 1 }, step: { kind: 'retry', phase: progress.phase, delayMs: retryDelayMs(progress.attempt) } };
  }
}

function mayAbort(plan: PhasePlan, phase: string): boolean {
  const last = plan.lastAbortablePhase ?? plan.preconditionPhase;
  if (last === undefined) return false;
  const first = plan.preconditionPhase === undefined ? 0 : plan.phases.indexOf(plan.preconditionPhase);
  const at = plan.phases.indexOf(phase);
  return at >= first && at <= plan.phases.indexOf(last);
}
