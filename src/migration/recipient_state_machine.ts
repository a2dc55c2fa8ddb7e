import type { Timestamp, UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import { assert, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatRange } from '../catalog/chunk_range.js';
import {
  recipientRangeDeletionTask,
  type RecipientCommand,
  type RecipientCounts,
  type RecipientEffect,
  type RecipientStateName,
  type RecvChunkStartRequest,
  type RecvChunkStatus,
} from './recipient_effects.js';

// The recipient side of a chunk migration (MongoDB's MigrationDestinationManager) as a pure
// state machine. Phases, in MongoDB's names:
//
//   kReady ─_recvChunkStart─▶ kClone ─empty _migrateClone─▶ kCatchup ─caught up─▶ kSteady
//   ─_recvChunkCommit─▶ kCommitStart ─empty _transferMods asked after the commit, then the
//   sessions' history (_getNextSessionMods) applied─▶ kDone
//
// Caught up: a _transferMods answer that is empty, or that left nothing pending on the donor
// (`pending`, docshard's own field). Under a steady write load an empty answer may never come:
// every round trip brings the writes made meanwhile, and the catch-up would run flat out (on
// both shards, at the donor's users' expense) until one happened to. Steady only lets the donor
// enter its critical section; the drain after the commit still takes everything.
//
// and kFail (a request or a local write failed) or kAbort (_recvChunkAbort) from any active
// phase. The recipient never decides the migration: its range deletion task stays pending until
// the donor's coordinator deletes it (commit) or makes it ready (abort), even across restarts.
export type RecipientPhase = 'kReady' | 'kClone' | 'kCatchup' | 'kSteady' | 'kCommitStart' | 'kDone' | 'kFail' | 'kAbort';

const STATE_NAMES: Record<RecipientPhase, RecipientStateName> = {
  kReady: 'ready',
  kClone: 'clone',
  kCatchup: 'catchup',
  kSteady: 'steady',
  kCommitStart: 'commitStart',
  kDone: 'done',
  kFail: 'fail',
  kAbort: 'abort',
};

export interface RecipientState {
  readonly phase: RecipientPhase;
  readonly request: RecvChunkStartRequest | undefined;
  readonly counts: RecipientCounts;
  // In kCommitStart: whether a _transferMods was asked after the commit arrived. Only an empty
  // answer to such a request proves the donor's queue is drained, since writes made before the
  // donor blocked them may be missing from an answer sent earlier.
  readonly drainRequested: boolean;
  // In kCommitStart: the drain ended and the sessions' history is being fetched.
  readonly sessionsRequested: boolean;
  readonly errmsg: string | undefined;
}

export type RecipientEvent =
  // `overlappingRangeDeletions`: tasks on this shard for the same collection whose range overlaps
  // the incoming one. Cloning over them would let their deletion erase what is copied in.
  | { readonly type: 'recvChunkStart'; readonly request: RecvChunkStartRequest; readonly overlappingRangeDeletions: number; readonly timestamp?: Timestamp }
  | { readonly type: 'cloneBatch'; readonly documents: readonly Uint8Array[] }
  // `pending`: documents the donor still had to send after this batch, when it says.
  | { readonly type: 'transferModsBatch'; readonly deleted: readonly Uint8Array[]; readonly reload: readonly Uint8Array[]; readonly pending?: number }
  // `last`: where the next _getNextSessionMods starts; `done`: nothing more to send.
  | { readonly type: 'sessionModsBatch'; readonly entries: readonly Doc[]; readonly last: unknown; readonly done: boolean }
  // The last batch of the sessions' history is on disk.
  | { readonly type: 'sessionModsApplied' }
  | { readonly type: 'recvChunkStatus'; readonly migrationId: UUID }
  | { readonly type: 'recvChunkCommit'; readonly migrationId: UUID }
  | { readonly type: 'recvChunkAbort'; readonly migrationId: UUID }
  | { readonly type: 'failed'; readonly error: MongoError };

export interface RecipientStep {
  readonly state: RecipientState;
  readonly effects: RecipientEffect[];
}

export function recipientInitialState(): RecipientState {
  return { phase: 'kReady', request: undefined, counts: { cloned: 0, clonedBytes: 0, catchup: 0, steady: 0 }, drainRequested: false, sessionsRequested: false, errmsg: undefined };
}

export function isRecipientDone(state: RecipientState): boolean {
  return state.phase === 'kDone' || state.phase === 'kFail' || state.phase === 'kAbort';
}

export function recipientStatus(state: RecipientState): RecvChunkStatus {
  return { state: STATE_NAMES[state.phase], counts: state.counts, ...(state.errmsg !== undefined ? { errmsg: state.errmsg } : {}) };
}

export function recipientStep(state: RecipientState, event: RecipientEvent): RecipientStep {
  switch (event.type) {
    case 'recvChunkStart': return onStart(state, event);
    case 'cloneBatch': return onCloneBatch(state, event.documents);
    case 'transferModsBatch': return onTransferMods(state, event.deleted, event.reload, event.pending);
    case 'sessionModsBatch': return onSessionMods(state, event.entries, event.last, event.done);
    case 'sessionModsApplied': return state.phase === 'kCommitStart' && state.sessionsRequested ? committed(state) : to(state, []);
    case 'recvChunkStatus': return onCommand(state, '_recvChunkStatus', event.migrationId, () => to(state, [reply('_recvChunkStatus', recipientStatus(state))]));
    case 'recvChunkCommit': return onCommand(state, '_recvChunkCommit', event.migrationId, () => onCommit(state));
    case 'recvChunkAbort': return onCommand(state, '_recvChunkAbort', event.migrationId, () => onAbort(state));
    case 'failed': return onFailed(state, event.error);
  }
}

// Persist, then answer: once the donor hears the recipient started, a task exists that can
// delete whatever this migration copies in.
function onStart(state: RecipientState, event: Extract<RecipientEvent, { type: 'recvChunkStart' }>): RecipientStep {
  const { request } = event;
  if (state.phase !== 'kReady') {
    return to(state, [reply('_recvChunkStart', new MongoError(ErrorCodes.ConflictingOperationInProgress, 'Unable to start new migration because this shard is already receiving a chunk'))]);
  }
  if (event.overlappingRangeDeletions > 0) {
    const errmsg = `Unable to start new migration because the range ${formatRange(request.range)} of ${request.nss} overlaps a range that is scheduled for deletion`;
    return to({ ...state, phase: 'kFail', request, errmsg }, [reply('_recvChunkStart', new MongoError(ErrorCodes.ConflictingOperationInProgress, errmsg))]);
  }
  const next: RecipientState = { ...state, phase: 'kClone', request };
  return to(next, [
    { type: 'persistRangeDeletionTask', task: recipientRangeDeletionTask(request, event.timestamp) },
    reply('_recvChunkStart', recipientStatus(next)),
    { type: 'createCollectionAndIndexes', nss: request.nss, collectionUuid: request.collectionUuid, donorShardId: request.donorShardId },
    { type: 'requestCloneBatch', donorShardId: request.donorShardId, migrationId: request.migrationId },
  ]);
}

function onCloneBatch(state: RecipientState, documents: readonly Uint8Array[]): RecipientStep {
  if (state.phase !== 'kClone') return to(state, []);
  const request = requestOf(state);
  if (documents.length === 0) return to({ ...state, phase: 'kCatchup' }, [{ type: 'syncClonedDocuments' }, askMods(request, false)]);
  const bytes = documents.reduce((n, d) => n + d.byteLength, 0);
  const counts = { ...state.counts, cloned: state.counts.cloned + documents.length, clonedBytes: state.counts.clonedBytes + bytes };
  return to({ ...state, counts }, [
    { type: 'requestCloneBatch', donorShardId: request.donorShardId, migrationId: request.migrationId },
    { type: 'applyCloneBatch', nss: request.nss, documents },
  ]);
}

function onTransferMods(state: RecipientState, deleted: readonly Uint8Array[], reload: readonly Uint8Array[], pending: number | undefined): RecipientStep {
  const { phase } = state;
  if (phase !== 'kCatchup' && phase !== 'kSteady' && phase !== 'kCommitStart') return to(state, []);
  const request = requestOf(state);
  const n = deleted.length + reload.length;
  if (n === 0) {
    if (phase === 'kCatchup') return to({ ...state, phase: 'kSteady' }, [askMods(request, true)]);
    if (phase === 'kSteady') return to(state, [askMods(request, true)]);
    if (state.drainRequested) return to({ ...state, drainRequested: false, sessionsRequested: true }, [askSessionMods(request, undefined)]);
    return to({ ...state, drainRequested: true }, [askMods(request, false)]);
  }
  const counts = phase === 'kCatchup' ? { ...state.counts, catchup: state.counts.catchup + n } : { ...state.counts, steady: state.counts.steady + n };
  const next = phase === 'kCatchup' && pending === 0 ? 'kSteady' : phase;
  return to({ ...state, phase: next, counts, drainRequested: phase === 'kCommitStart' }, [
    askMods(request, false),
    { type: 'applyMods', nss: request.nss, deleted, reload },
  ]);
}

// After the drain, the sessions' history of the range: applied batch by batch, then the commit is
// answered (kDone) once the last batch is on disk. Until then a failure to apply one still
// answers the commit, with the error.
function onSessionMods(state: RecipientState, entries: readonly Doc[], last: unknown, done: boolean): RecipientStep {
  if (state.phase !== 'kCommitStart' || !state.sessionsRequested) return to(state, []);
  const request = requestOf(state);
  if (done && entries.length === 0) return committed(state);
  const apply: RecipientEffect = { type: 'applySessionMods', nss: request.nss, migrationId: request.migrationId, entries, last: done };
  return to(state, done ? [apply] : [apply, askSessionMods(request, last)]);
}

function committed(state: RecipientState): RecipientStep {
  const finished: RecipientState = { ...state, phase: 'kDone' };
  return to(finished, [reply('_recvChunkCommit', recipientStatus(finished))]);
}

function askSessionMods(request: RecvChunkStartRequest, after: unknown): RecipientEffect {
  return { type: 'requestSessionMods', donorShardId: request.donorShardId, migrationId: request.migrationId, after };
}

// The commit is answered when the drain ends (kDone) or the migration fails. No request is sent
// here: one _transferMods is always outstanding in kSteady, and its answer drives the drain.
function onCommit(state: RecipientState): RecipientStep {
  if (state.phase !== 'kSteady') {
    return to(state, [reply('_recvChunkCommit', new MongoError(ErrorCodes.OperationFailed, `Migration startCommit attempted when not in STEADY state (state is ${STATE_NAMES[state.phase]})`))]);
  }
  return to({ ...state, phase: 'kCommitStart', drainRequested: false }, []);
}

// The donor sends _recvChunkAbort only after persisting its abort; the reply is queued after any
// batch still being applied, so once the donor hears it nothing more lands in the range.
function onAbort(state: RecipientState): RecipientStep {
  if (isRecipientDone(state)) return to(state, [reply('_recvChunkAbort', recipientStatus(state))]);
  const aborted: RecipientState = { ...state, phase: 'kAbort', errmsg: 'migration aborted by the donor' };
  const effects: RecipientEffect[] = [];
  if (state.phase === 'kCommitStart') effects.push(reply('_recvChunkCommit', new MongoError(ErrorCodes.OperationFailed, 'migration aborted by the donor')));
  effects.push(reply('_recvChunkAbort', recipientStatus(aborted)));
  return to(aborted, effects);
}

function onFailed(state: RecipientState, error: MongoError): RecipientStep {
  if (isRecipientDone(state) || state.phase === 'kReady') return to(state, []);
  const failed: RecipientState = { ...state, phase: 'kFail', errmsg: error.message };
  return to(failed, state.phase === 'kCommitStart' ? [reply('_recvChunkCommit', error)] : []);
}

// Commands for another migration id are refused without touching this one; an abort for a
// migration this shard does not run is acknowledged, since there is nothing left to stop.
function onCommand(state: RecipientState, command: RecipientCommand, migrationId: UUID, handle: () => RecipientStep): RecipientStep {
  if (state.request !== undefined && state.request.migrationId.equals(migrationId)) return handle();
  if (command === '_recvChunkAbort') return to(state, [reply(command, recipientStatus(recipientInitialState()))]);
  const active = state.request === undefined ? 'none' : state.request.migrationId.toHexString();
  return to(state, [reply(command, new MongoError(ErrorCodes.OperationFailed, `migration session id mismatch: requested ${migrationId.toHexString()}, active ${active}`))]);
}

function askMods(request: RecvChunkStartRequest, pause: boolean): RecipientEffect {
  return { type: 'requestTransferMods', donorShardId: request.donorShardId, migrationId: request.migrationId, pause };
}

function reply(command: RecipientCommand, result: RecvChunkStatus | MongoError): RecipientEffect {
  return { type: 'reply', command, result };
}

function requestOf(state: RecipientState): RecvChunkStartRequest {
  assert(state.request !== undefined, `the recipient has a request in ${state.phase}`);
  return state.request;
}

function to(state: RecipientState, effects: RecipientEffect[]): RecipientStep {
  return { state, effects };
}
