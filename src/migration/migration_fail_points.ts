import type { DonorEffect } from './donor_effects.js';
import type { DonorEvent, DonorState } from './donor_state_machine.js';
import type { RecipientEffect } from './recipient_effects.js';
import type { RecipientState } from './recipient_state_machine.js';

// Where the drivers pause for a test (MongoDB's moveChunkHangAtStepN / migrateThreadHangAtStepN):
// a `hang` entry queued among the effects, so the pause falls exactly between two effects and the
// machines stay free of test hooks.
export interface FailPointHang {
  readonly type: 'hang';
  readonly failPoint: string;
}

function hang(failPoint: string): FailPointHang {
  return { type: 'hang', failPoint };
}

// The donor's seven steps (move_chunk_command.cpp): 1 start, 2 recipient started cloning,
// 3 recipient steady, 4 critical section entered, 5 recipient committed, 6 config server
// committed, 7 after the cleanup and the exit from the critical section.
export function withDonorFailPoints(before: DonorState, event: DonorEvent, after: DonorState, effects: readonly DonorEffect[]): (DonorEffect | FailPointHang)[] {
  const from = before.phase;
  const to = after.phase;
  if (event.type === 'start' && to === 'kCloning') return [hang('moveChunkHangAtStep1'), ...effects];
  if (event.type === 'recipientAcknowledgedStart' && to === 'kCloning') return [hang('moveChunkHangAtStep2'), ...effects];
  if (from === 'kCloning' && to === 'kCloneCaughtUp') return [hang('moveChunkHangAtStep3'), hang('hangBeforeEnteringCriticalSection'), ...effects];
  if (from === 'kCloneCaughtUp' && to === 'kCriticalSection') return [hang('moveChunkHangAtStep4'), ...effects];
  if (from === 'kCriticalSection' && to === 'kCloneCompleted') return [hang('moveChunkHangAtStep5'), ...effects];
  if (from === 'kCommittingOnConfig' && to === 'kCommitted') return [hang('moveChunkHangAtStep6'), ...effects, hang('moveChunkHangAtStep7')];
  return [...effects];
}

// The recipient's five steps (migration_destination_manager.cpp): 1 start (after answering
// _recvChunkStart), 2 indexes created, 3 clone done, 4 caught up (steady), 5 commit answered.
// A pause also holds back replies queued behind it; the donor's requests wait, as they would for
// a slow recipient.
export function withRecipientFailPoints(before: RecipientState, after: RecipientState, effects: readonly RecipientEffect[]): (RecipientEffect | FailPointHang)[] {
  const from = before.phase;
  const to = after.phase;
  const list = effects.flatMap((e): (RecipientEffect | FailPointHang)[] => (e.type === 'createCollectionAndIndexes' ? [hang('migrateThreadHangAtStep1'), e, hang('migrateThreadHangAtStep2')] : [e]));
  if (from === 'kClone' && to === 'kCatchup') return [hang('migrateThreadHangAtStep3'), ...list];
  if (from === 'kCatchup' && to === 'kSteady') return [hang('migrateThreadHangAtStep4'), ...list];
  if (from === 'kCommitStart' && to === 'kDone') return [...list, hang('migrateThreadHangAtStep5')];
  return list;
}
