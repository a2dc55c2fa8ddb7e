import { assert, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { donorRangeDeletionTask, type DonorEffect, type DonorTaskDetails } from './donor_effects.js';
import type { MigrationCoordinatorDocument } from './migration_coordinator_document.js';
import { decisionEffects, decisionFromConfigOwner, resolveDecisionEffects, resolveMigration } from './migration_decision.js';
import type { RecvChunkStatus } from './recipient_effects.js';
import type { Doc } from '../bson/values.js';
import { checkOk, checkWriteConcern } from '../wire/remote_cursor.js';

// The donor side of a chunk migration (MongoDB's MigrationSourceManager) as a pure state
// machine: `donorStep(state, event)` returns the next state and the effects to run (see
// donor_effects.ts for how a driver runs them). Phases, in MongoDB's names:
//
//   kCreated ─start─▶ kCloning ─recipient steady─▶ kCloneCaughtUp ─writes blocked─▶ kCriticalSection
//   ─recipient committed─▶ kCloneCompleted ─reads blocked─▶ kCommittingOnConfig ─ok─▶ kCommitted
//
// Until the commit is sent to the config server the donor may abort (kAborted) on a timeout, an
// abort request or a recipient failure. Once it is sent, only the config server can decide: an
// error or a lost reply leads to kRecovering, which fences the config server and reads who owns
// the range. A restarted donor begins in kCreated and gets `crashRecovered` with its document.
export type DonorPhase =
  | 'kCreated'
  | 'kCloning'
  | 'kCloneCaughtUp'
  | 'kCriticalSection'
  | 'kCloneCompleted'
  | 'kCommittingOnConfig'
  | 'kRecovering'
  | 'kCommitted'
  | 'kAborted';

// What the recipient last reported, for currentOp and serverStatus.
export interface CloneProgress {
  readonly recipientState: RecvChunkStatus['state'] | undefined;
  readonly clonedDocs: number;
  readonly clonedBytes: number;
  readonly transferModsPending: number;
}

export interface DonorState {
  readonly phase: DonorPhase;
  // Set from `start` or `crashRecovered` on; absent only in kCreated.
  readonly doc: MigrationCoordinatorDocument | undefined;
  readonly waitForDelete: boolean;
  readonly recipientStarted: boolean;
  // What this process asked of the critical section; whatever was asked is released at the end.
  readonly criticalSection: 'none' | 'writes' | 'reads';
  readonly progress: CloneProgress;
  // Why the migration did not commit: the moveChunk reply.
  readonly error: MongoError | undefined;
}

export type CommitReply =
  | { readonly outcome: 'ok' }
  // The config server answered with an error, or the answer was lost (network error, timeout).
  // Neither proves the commit did not happen, so both are resolved by reading the owner.
  | { readonly outcome: 'error' | 'unknown'; readonly error: MongoError };

// The config server's answer to _configsvrCommitChunkMigration as the donor takes it. An ok with a
// writeConcernError (a config primary deposed before the commit replicated) is no answer either:
// the commit may yet be rolled back, and a donor that took it for done deleted a range the config
// server then gave back to it.
export function commitReplyOf(reply: Doc): CommitReply {
  try {
    checkOk(reply);
  } catch (err) {
    return { outcome: 'error', error: asMongoError(err) };
  }
  try {
    checkWriteConcern(reply);
    return { outcome: 'ok' };
  } catch (err) {
    return { outcome: 'unknown', error: asMongoError(err) };
  }
}

// An error a driver caught as the MongoError its events carry.
export function asMongoError(err: unknown): MongoError {
  return err instanceof MongoError ? err : new MongoError(ErrorCodes.InternalError, String(err));
}

export type DonorEvent =
  | { readonly type: 'start'; readonly doc: MigrationCoordinatorDocument; readonly waitForDelete: boolean; readonly task?: DonorTaskDetails }
  | { readonly type: 'recipientAcknowledgedStart' }
  | { readonly type: 'recipientStatus'; readonly status: RecvChunkStatus; readonly transferModsPending: number }
  // _recvChunkStart, _recvChunkStatus or _recvChunkCommit failed (error reply or no reply).
  | { readonly type: 'recipientError'; readonly error: MongoError }
  | { readonly type: 'criticalSectionEntered' }
  | { readonly type: 'recipientCommitted' }
  | { readonly type: 'configCommitReplied'; readonly reply: CommitReply }
  | { readonly type: 'configChunkOwnerRead'; readonly shardId: string | null }
  // A timer the driver armed on entering `phase`; one that fires after the phase changed is stale.
  | { readonly type: 'timeout'; readonly phase: DonorPhase }
  | { readonly type: 'abortRequested'; readonly error: MongoError }
  | { readonly type: 'crashRecovered'; readonly doc: MigrationCoordinatorDocument };

export interface DonorStep {
  readonly state: DonorState;
  readonly effects: DonorEffect[];
}

export function donorInitialState(): DonorState {
  return {
    phase: 'kCreated',
    doc: undefined,
    waitForDelete: false,
    recipientStarted: false,
    criticalSection: 'none',
    progress: { recipientState: undefined, clonedDocs: 0, clonedBytes: 0, transferModsPending: 0 },
    error: undefined,
  };
}

export function isDonorDone(state: DonorState): boolean {
  return state.phase === 'kCommitted' || state.phase === 'kAborted';
}

// One step function per phase, as raft swaps stepLeader/stepFollower. An event a phase does not
// expect changes nothing: late replies and stale timers are normal after an abort.
type PhaseStep = (state: DonorState, event: DonorEvent) => DonorStep;

const STEPS: Record<DonorPhase, PhaseStep> = {
  kCreated: stepCreated,
  kCloning: stepCloning,
  kCloneCaughtUp: stepCloneCaughtUp,
  kCriticalSection: stepCriticalSection,
  kCloneCompleted: stepCloneCompleted,
  kCommittingOnConfig: stepCommittingOnConfig,
  kRecovering: stepRecovering,
  kCommitted: unchanged,
  kAborted: unchanged,
};

export function donorStep(state: DonorState, event: DonorEvent): DonorStep {
  if (event.type === 'timeout' && event.phase !== state.phase) return unchanged(state);
  return STEPS[state.phase](state, event);
}

function stepCreated(state: DonorState, event: DonorEvent): DonorStep {
  switch (event.type) {
    case 'start': {
      assert(event.doc.decision === undefined, 'a migration starts without a decision');
      const task = donorRangeDeletionTask(event.doc, event.waitForDelete, event.task);
      return to({ ...state, phase: 'kCloning', doc: event.doc, waitForDelete: event.waitForDelete }, [
        { type: 'persistCoordinatorDoc', doc: event.doc },
        { type: 'persistRangeDeletionTask', task },
        { type: 'sendRecvChunkStart', doc: event.doc },
      ]);
    }
    case 'crashRecovered': {
      const resolution = resolveMigration(event.doc);
      const next = { ...state, doc: event.doc };
      if (resolution.decision === undefined) return to({ ...next, phase: 'kRecovering' }, resolution.effects);
      return to({ ...next, phase: resolution.decision === 'committed' ? 'kCommitted' : 'kAborted' }, resolution.effects);
    }
    // Nothing is on disk yet, so there is nothing to undo.
    case 'abortRequested':
      return to({ ...state, phase: 'kAborted', error: event.error }, []);
    default:
      return unchanged(state);
  }
}

function stepCloning(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  switch (event.type) {
    case 'recipientAcknowledgedStart':
      return to({ ...state, recipientStarted: true }, [poll(doc)]);
    case 'recipientStatus': {
      if (!state.recipientStarted) return unchanged(state);
      const { status } = event;
      const next = { ...state, progress: { recipientState: status.state, clonedDocs: status.counts.cloned, clonedBytes: status.counts.clonedBytes, transferModsPending: event.transferModsPending } };
      if (status.state === 'steady') return to({ ...next, phase: 'kCloneCaughtUp', criticalSection: 'writes' }, [{ type: 'enterCriticalSection', nss: doc.nss }]);
      if (status.state === 'fail' || status.state === 'abort') {
        return abort(next, new MongoError(ErrorCodes.OperationFailed, `Data transfer error: ${status.errmsg ?? `recipient state is ${status.state}`}`));
      }
      return to(next, [poll(doc)]);
    }
    default:
      return abortOn(state, event);
  }
}

function stepCloneCaughtUp(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  if (event.type !== 'criticalSectionEntered') return abortOn(state, event);
  return to({ ...state, phase: 'kCriticalSection' }, [{ type: 'sendRecvChunkCommit', recipientShardId: doc.recipientShardId, migrationId: doc._id }]);
}

// Reads are blocked from here on, just before the commit is sent, so that no read on the donor
// can see the range after the config server has given it away.
function stepCriticalSection(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  if (event.type !== 'recipientCommitted') return abortOn(state, event);
  return to({ ...state, phase: 'kCloneCompleted', criticalSection: 'reads' }, [{ type: 'enterCriticalSectionForReads', nss: doc.nss }]);
}

function stepCloneCompleted(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  if (event.type !== 'criticalSectionEntered') return abortOn(state, event);
  return to({ ...state, phase: 'kCommittingOnConfig' }, [{ type: 'sendCommitToConfig', doc }]);
}

// Past the point of no return: aborts and timeouts are ignored, only the config server decides.
function stepCommittingOnConfig(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  if (event.type !== 'configCommitReplied') return unchanged(state);
  if (event.reply.outcome === 'ok') return decide(state, 'committed', undefined);
  return to({ ...state, phase: 'kRecovering', error: event.reply.error }, resolveDecisionEffects(doc));
}

function stepRecovering(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  if (event.type !== 'configChunkOwnerRead') return unchanged(state);
  const decision = decisionFromConfigOwner(doc, event.shardId);
  const error = state.error ?? new MongoError(ErrorCodes.OperationFailed, `Migration ${doc._id.toHexString()} was aborted before its commit reached the config server`);
  return decide(state, decision, decision === 'aborted' ? error : undefined);
}

// The events that end a migration before its commit is sent.
function abortOn(state: DonorState, event: DonorEvent): DonorStep {
  const doc = docOf(state);
  switch (event.type) {
    case 'abortRequested':
    case 'recipientError':
      return abort(state, event.error);
    case 'timeout':
      return abort(state, new MongoError(ErrorCodes.ExceededTimeLimit, `Migration of ${doc.nss} timed out in ${state.phase}`));
    default:
      return unchanged(state);
  }
}

function abort(state: DonorState, error: MongoError): DonorStep {
  const doc = docOf(state);
  const effects = decisionEffects(doc, 'aborted', { persist: true, refresh: false, criticalSectionHeld: state.criticalSection !== 'none', waitForDelete: false });
  return to({ ...state, phase: 'kAborted', error }, effects);
}

function decide(state: DonorState, decision: 'committed' | 'aborted', error: MongoError | undefined): DonorStep {
  const doc = docOf(state);
  const effects = decisionEffects(doc, decision, { persist: true, refresh: true, criticalSectionHeld: state.criticalSection !== 'none', waitForDelete: state.waitForDelete });
  return to({ ...state, phase: decision === 'committed' ? 'kCommitted' : 'kAborted', error }, effects);
}

function poll(doc: MigrationCoordinatorDocument): DonorEffect {
  return { type: 'pollRecvChunkStatus', recipientShardId: doc.recipientShardId, migrationId: doc._id };
}

function docOf(state: DonorState): MigrationCoordinatorDocument {
  assert(state.doc !== undefined, `the donor has a coordinator document in ${state.phase}`);
  return state.doc;
}

function to(state: DonorState, effects: DonorEffect[]): DonorStep {
  return { state, effects };
}

function unchanged(state: DonorState): DonorStep {
  return { state, effects: [] };
}
