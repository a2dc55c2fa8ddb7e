import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';

// The ReshardingCoordinator's states (MongoDB's CoordinatorStateEnum, as config.reshardingOperations
// names them), in the order a resharding that commits goes through them. `aborting` may follow any
// state before `committing`; `done` ends both ways.
export const RESHARDING_STATES = [
  'initializing', 'preparing-to-donate', 'cloning', 'applying', 'blocking-writes', 'committing', 'aborting', 'done',
] as const;
export type ReshardingState = typeof RESHARDING_STATES[number];

const NEXT: Readonly<Partial<Record<ReshardingState, ReshardingState>>> = {
  'initializing': 'preparing-to-donate',
  'preparing-to-donate': 'cloning',
  'cloning': 'applying',
  'applying': 'blocking-writes',
  'blocking-writes': 'committing',
  'committing': 'done',
  'aborting': 'done',
};

// Why a resharding aborted, as the state document's abortReason and the reshardCollection's answer.
export interface AbortReason {
  readonly code: number;
  readonly errmsg: string;
}

export interface CoordinatorProgress {
  readonly state: ReshardingState;
  readonly abortReason?: AbortReason;
  // commitReshardCollection asked for the critical section as soon as the recipients can take it.
  readonly commitRequested: boolean;
}

export type CoordinatorEvent =
  // The state document is in place (just inserted in `initializing`, or found at a step-up).
  | { readonly type: 'started' }
  // The work of `state` is done; `noted` is what it decided for the states after it.
  | { readonly type: 'phaseDone'; readonly state: ReshardingState; readonly noted?: Doc }
  | { readonly type: 'phaseFailed'; readonly state: ReshardingState; readonly error: AbortReason }
  | { readonly type: 'abortRequested' }
  | { readonly type: 'commitRequested' };

export type CoordinatorEffect =
  // Written to the state document before anything of `state` runs.
  | { readonly type: 'persist'; readonly state: ReshardingState; readonly noted: Doc; readonly abortReason?: AbortReason }
  | { readonly type: 'run'; readonly state: ReshardingState }
  // The state's work failed for the moment: run it again after a pause.
  | { readonly type: 'retry'; readonly state: ReshardingState }
  // The work of the state that was running stops where it is: an abort overtook it.
  | { readonly type: 'interrupt' }
  // The applying state's wait for the recipients to be close enough ends at once.
  | { readonly type: 'wakeApplying' }
  | { readonly type: 'removeDocument' }
  // The reshardCollection request's answer: ok, or the abort's reason.
  | { readonly type: 'answer'; readonly error?: AbortReason }
  // An abortReshardCollection or commitReshardCollection that cannot be honoured.
  | { readonly type: 'refuse'; readonly code: number; readonly errmsg: string };

export interface CoordinatorStep {
  readonly progress: CoordinatorProgress;
  readonly effects: readonly CoordinatorEffect[];
}

// True while an abort may still undo everything: the decision to commit is the persisting of
// `committing`, and nothing undoes it.
export function mayAbort(state: ReshardingState): boolean {
  return RESHARDING_STATES.indexOf(state) < RESHARDING_STATES.indexOf('committing');
}

export const USER_ABORT: AbortReason = { code: ErrorCodes.ReshardCollectionAborted, errmsg: 'reshardCollection aborted by abortReshardCollection' };

// The coordinator as a pure step: its progress and an event give the next progress and what the
// driver does, in order. A state's work is always persisted first, and runs again in full when
// it fails after the decision (committing, aborting), when it fails for the moment (a transient
// error), or when a recovered coordinator resumes it; any other failure before the decision aborts.
export function coordinatorStep(p: CoordinatorProgress, e: CoordinatorEvent): CoordinatorStep {
  switch (e.type) {
    case 'started':
      if (p.state === 'done') return { progress: p, effects: finish(p) };
      return { progress: p, effects: [{ type: 'run', state: p.state }] };
    case 'phaseDone': {
      if (e.state !== p.state) return { progress: p, effects: [] };
      const next = NEXT[p.state]!;
      const progress = { ...p, state: next };
      const persist: CoordinatorEffect = { type: 'persist', state: next, noted: e.noted ?? {} };
      if (next === 'done') return { progress, effects: [persist, ...finish(progress)] };
      return { progress, effects: [persist, { type: 'run', state: next }] };
    }
    case 'phaseFailed': {
      if (e.state !== p.state) return { progress: p, effects: [] };
      if (!mayAbort(p.state) || isTransient(e.error.code)) return { progress: p, effects: [{ type: 'retry', state: p.state }] };
      return toAborting(p, e.error, false);
    }
    case 'abortRequested':
      if (p.state === 'aborting') return { progress: p, effects: [] };
      if (!mayAbort(p.state)) {
        return { progress: p, effects: [{ type: 'refuse', code: ErrorCodes.ReshardCollectionCommitted, errmsg: 'Can\'t abort resharding operation after the decision to commit was persisted' }] };
      }
      return toAborting(p, USER_ABORT, true);
    case 'commitRequested':
      if (p.state === 'aborting' || (p.state === 'done' && p.abortReason !== undefined)) {
        return { progress: p, effects: [{ type: 'refuse', code: ErrorCodes.ReshardCollectionAborted, errmsg: 'Can\'t commit a resharding operation that is aborting' }] };
      }
      if (RESHARDING_STATES.indexOf(p.state) >= RESHARDING_STATES.indexOf('blocking-writes')) return { progress: p, effects: [] };
      return { progress: { ...p, commitRequested: true }, effects: [{ type: 'wakeApplying' }] };
  }
}

// Errors that say nothing of the resharding, only of the moment (a shard unreachable or without a
// primary its monitor can see, electing a primary, shutting down; MongoDB's RetriableError
// category): the state runs again rather than abort.
const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  ErrorCodes.HostUnreachable, ErrorCodes.HostNotFound, ErrorCodes.NetworkTimeout, ErrorCodes.SocketException, ErrorCodes.ShutdownInProgress, ErrorCodes.FailedToSatisfyReadPreference,
  ErrorCodes.InterruptedAtShutdown, ErrorCodes.PrimarySteppedDown, ErrorCodes.InterruptedDueToReplStateChange, ErrorCodes.NotWritablePrimary,
  ErrorCodes.NotPrimaryNoSecondaryOk, ErrorCodes.NotPrimaryOrSecondary, ErrorCodes.ExceededTimeLimit,
]);

export function isTransient(code: number): boolean {
  return TRANSIENT_CODES.has(code);
}

function toAborting(p: CoordinatorProgress, reason: AbortReason, interrupt: boolean): CoordinatorStep {
  const progress: CoordinatorProgress = { ...p, state: 'aborting', abortReason: reason };
  const effects: CoordinatorEffect[] = interrupt ? [{ type: 'interrupt' }] : [];
  effects.push({ type: 'persist', state: 'aborting', noted: {}, abortReason: reason }, { type: 'run', state: 'aborting' });
  return { progress, effects };
}

function finish(p: CoordinatorProgress): CoordinatorEffect[] {
  return [{ type: 'removeDocument' }, p.abortReason === undefined ? { type: 'answer' } : { type: 'answer', error: p.abortReason }];
}
