import type { Doc } from '../bson/values.js';
import type { AbortReason } from './resharding_coordinator_state_machine.js';

// A recipient's states (MongoDB's RecipientStateEnum, those it goes through), as its state
// document in config.localReshardingOperations.recipient names them.
export type RecipientState = 'creating-collection' | 'cloning' | 'applying' | 'strict-consistency' | 'error' | 'done';

// What the recipient has of one donor, persisted: a crash or a step-down resumes from it.
export interface DonorProgress {
  readonly shardId: string;
  // Every document the donor held at cloneTimestamp is in the temporary collection.
  readonly cloned: boolean;
  // The postBatchResumeToken of the last batch of the donor's change events applied, written in
  // the write unit of that batch: the donor's stream resumes exactly after it.
  readonly resumeToken?: Doc;
}

export interface RecipientProgress {
  readonly state: RecipientState;
  readonly donors: readonly DonorProgress[];
  readonly abortReason?: AbortReason;
}

export type RecipientEvent =
  // The state document is in place: just inserted (creating-collection), or found at a step-up
  // or a restart, in whatever state it was persisted.
  | { readonly type: 'started' }
  | { readonly type: 'collectionCreated' }
  | { readonly type: 'donorCloned'; readonly shardId: string }
  | { readonly type: 'batchApplied'; readonly shardId: string; readonly resumeToken: Doc }
  // Every donor's events up to its time under the critical section are applied and its
  // retryable-write history copied: the coordinator may commit.
  | { readonly type: 'finished' }
  | { readonly type: 'failed'; readonly error: AbortReason }
  // The coordinator's decision (sent again after a crash of either side: each must be idempotent).
  | { readonly type: 'commit' }
  | { readonly type: 'abort' };

export type RecipientEffect =
  // The progress as it is now, written to the state document before any effect after it runs.
  | { readonly type: 'persist' }
  // The temporary collection with the source's options and indexes and the new key's; one already
  // there (a crash after it was made) is kept.
  | { readonly type: 'createCollection' }
  // The donor's documents at cloneTimestamp from the start: written as upserts of the one snapshot,
  // a clone a crash cut short needs nothing cleared before it runs again.
  | { readonly type: 'clone'; readonly shardId: string }
  // The donor's change events after its resumeToken (after cloneTimestamp without one).
  | { readonly type: 'follow'; readonly shardId: string; readonly resumeToken?: Doc }
  // The clones and streams running stop where they are.
  | { readonly type: 'stopWork' }
  // The temporary collection takes the source's name (nothing when it already has).
  | { readonly type: 'renameOverSource' }
  | { readonly type: 'dropTemporaryCollection' }
  | { readonly type: 'removeDocument' };

export interface RecipientStep {
  readonly progress: RecipientProgress;
  readonly effects: readonly RecipientEffect[];
}

export function initialRecipientProgress(donors: readonly string[]): RecipientProgress {
  return { state: 'creating-collection', donors: donors.map((shardId) => ({ shardId, cloned: false })) };
}

// The recipient as a pure step (MongoDB's RecipientStateMachine): its progress and an event give
// the next progress and what the driver does, in order. Every change of state is persisted before
// the work of the new state starts, so `started` on any persisted progress resumes it: the clones
// not known done run again from the start, each donor's stream resumes after its last applied
// batch. The decision ends it from any state: commit renames, abort drops, then the document goes.
export function recipientStep(p: RecipientProgress, e: RecipientEvent): RecipientStep {
  switch (e.type) {
    case 'started':
      if (p.state === 'cloning' && p.donors.every((d) => d.cloned)) return enterApplying({ ...p, state: 'applying' });
      return { progress: p, effects: resume(p) };
    case 'collectionCreated': {
      if (p.state !== 'creating-collection') return { progress: p, effects: [] };
      return enterCloning({ ...p, state: 'cloning' });
    }
    case 'donorCloned': {
      if (p.state !== 'cloning') return { progress: p, effects: [] };
      const progress = { ...p, donors: p.donors.map((d) => (d.shardId === e.shardId ? { ...d, cloned: true } : d)) };
      if (progress.donors.some((d) => !d.cloned)) return { progress, effects: [{ type: 'persist' }] };
      return enterApplying({ ...progress, state: 'applying' });
    }
    case 'batchApplied': {
      if (p.state !== 'applying') return { progress: p, effects: [] };
      return { progress: { ...p, donors: p.donors.map((d) => (d.shardId === e.shardId ? { ...d, resumeToken: e.resumeToken } : d)) }, effects: [{ type: 'persist' }] };
    }
    case 'finished':
      if (p.state !== 'applying') return { progress: p, effects: [] };
      return { progress: { ...p, state: 'strict-consistency' }, effects: [{ type: 'persist' }, { type: 'stopWork' }] };
    case 'failed':
      if (p.state === 'error' || p.state === 'strict-consistency' || p.state === 'done') return { progress: p, effects: [] };
      return { progress: { ...p, state: 'error', abortReason: e.error }, effects: [{ type: 'stopWork' }, { type: 'persist' }] };
    case 'commit':
      return { progress: { ...p, state: 'done' }, effects: [{ type: 'stopWork' }, { type: 'renameOverSource' }, { type: 'removeDocument' }] };
    case 'abort':
      return { progress: { ...p, state: 'done' }, effects: [{ type: 'stopWork' }, { type: 'dropTemporaryCollection' }, { type: 'removeDocument' }] };
  }
}

function resume(p: RecipientProgress): RecipientEffect[] {
  switch (p.state) {
    case 'creating-collection': return [{ type: 'createCollection' }];
    case 'cloning': return cloneEffects(p);
    case 'applying': return followEffects(p);
    // Waits for the decision: strict consistency holds nothing running (the donors block writes),
    // an error is answered to the coordinator's next status request, which aborts.
    case 'strict-consistency':
    case 'error':
    case 'done':
      return [];
  }
}

function enterCloning(progress: RecipientProgress): RecipientStep {
  return { progress, effects: [{ type: 'persist' }, ...cloneEffects(progress)] };
}

// No donor's events are applied before every donor's clone is whole: a document that a shard key
// update moved from one donor to another must not be overwritten by the first donor's older copy.
function enterApplying(progress: RecipientProgress): RecipientStep {
  return { progress, effects: [{ type: 'persist' }, ...followEffects(progress)] };
}

function cloneEffects(p: RecipientProgress): RecipientEffect[] {
  return p.donors.filter((d) => !d.cloned).map((d) => ({ type: 'clone', shardId: d.shardId }));
}

function followEffects(p: RecipientProgress): RecipientEffect[] {
  return p.donors.map((d) => ({ type: 'follow', shardId: d.shardId, ...(d.resumeToken === undefined ? {} : { resumeToken: d.resumeToken }) }));
}
