import type { UUID } from 'bson';
import type { MigrationCoordinatorDocument, MigrationDecision } from './migration_coordinator_document.js';
import type { RangeDeletionTask } from './range_deletion_task.js';

// What the donor's state machine asks its driver to do. The driver runs the effects of one step
// in list order, and the effects of successive steps in the order the steps produced them,
// starting an effect only when the one before it has completed. "Completed" depends on the class:
//   persist  a local write to config.migrationCoordinators / config.rangeDeletions, durable
//            (fsynced) before the next effect starts. A failed persist is fatal for the process:
//            recovery then starts from what is on disk.
//   request  a command whose reply (or failure) comes back as an event; complete once sent.
//   command  a command to another node that is idempotent and retried until acknowledged; an
//            answer that the target no longer knows the migration counts as acknowledged.
//   local    an in-memory action on this shard; complete when done, except that the critical
//            section effects also answer with `criticalSectionEntered`.
//   hint     a command that only saves time (nothing waits for it, a failure is only logged);
//            complete once sent.
// Persist before send follows from the order: every list that first tells another node about a
// migration or a decision lists the persist effects that make it recoverable before the send.
export type DonorEffect =
  | { readonly type: 'persistCoordinatorDoc'; readonly doc: MigrationCoordinatorDocument }
  | { readonly type: 'persistRangeDeletionTask'; readonly task: RangeDeletionTask }
  | { readonly type: 'persistDecision'; readonly migrationId: UUID; readonly decision: MigrationDecision }
  | { readonly type: 'markRangeDeletionReady'; readonly migrationId: UUID }
  | { readonly type: 'deleteRangeDeletionTask'; readonly migrationId: UUID }
  | { readonly type: 'deleteCoordinatorDoc'; readonly migrationId: UUID }
  | { readonly type: 'sendRecvChunkStart'; readonly doc: MigrationCoordinatorDocument }
  | { readonly type: 'pollRecvChunkStatus'; readonly recipientShardId: string; readonly migrationId: UUID }
  | { readonly type: 'sendRecvChunkCommit'; readonly recipientShardId: string; readonly migrationId: UUID }
  // _configsvrCommitChunkMigration; the config server checks the chunk still has
  // doc.preMigrationChunkVersion, so a commit that arrives after a fence fails.
  | { readonly type: 'sendCommitToConfig'; readonly doc: MigrationCoordinatorDocument }
  // A majority read of config.chunks (by collection uuid) for the chunk holding range.min; the
  // driver retries it until it answers, since nothing can be decided without it.
  | { readonly type: 'readConfigChunkOwner'; readonly collectionUuid: UUID; readonly range: MigrationCoordinatorDocument['range'] }
  // _configsvrEnsureChunkVersionIsGreaterThan: bumps the chunk's version past the one the commit
  // expects (a no-op if the chunk already moved), so no commit still in flight can land later.
  | { readonly type: 'sendEnsureChunkVersionIsGreaterThan'; readonly doc: MigrationCoordinatorDocument }
  | { readonly type: 'sendRecvChunkAbort'; readonly recipientShardId: string; readonly migrationId: UUID }
  | { readonly type: 'markRecipientRangeDeletionReady'; readonly recipientShardId: string; readonly migrationId: UUID }
  | { readonly type: 'deleteRecipientRangeDeletionTask'; readonly recipientShardId: string; readonly migrationId: UUID }
  | { readonly type: 'enterCriticalSection'; readonly nss: string }
  | { readonly type: 'enterCriticalSectionForReads'; readonly nss: string }
  | { readonly type: 'exitCriticalSection'; readonly nss: string }
  | { readonly type: 'refreshFilteringMetadata'; readonly nss: string }
  // After a commit: the recipient refreshes at once instead of on the first request with the
  // new version, which would otherwise wait for that refresh (the stall after the exit).
  | { readonly type: 'hintRecipientRefresh'; readonly recipientShardId: string; readonly nss: string }
  // moveChunk's _waitForDelete: the reply waits until the range deleter has run this task.
  | { readonly type: 'awaitRangeDeletion'; readonly migrationId: UUID };

export type DonorEffectClass = 'persist' | 'request' | 'command' | 'local' | 'hint';

const CLASSES: Record<DonorEffect['type'], DonorEffectClass> = {
  persistCoordinatorDoc: 'persist',
  persistRangeDeletionTask: 'persist',
  persistDecision: 'persist',
  markRangeDeletionReady: 'persist',
  deleteRangeDeletionTask: 'persist',
  deleteCoordinatorDoc: 'persist',
  sendRecvChunkStart: 'request',
  pollRecvChunkStatus: 'request',
  sendRecvChunkCommit: 'request',
  sendCommitToConfig: 'request',
  readConfigChunkOwner: 'request',
  sendEnsureChunkVersionIsGreaterThan: 'command',
  sendRecvChunkAbort: 'command',
  markRecipientRangeDeletionReady: 'command',
  deleteRecipientRangeDeletionTask: 'command',
  enterCriticalSection: 'local',
  enterCriticalSectionForReads: 'local',
  exitCriticalSection: 'local',
  refreshFilteringMetadata: 'local',
  awaitRangeDeletion: 'local',
  hintRecipientRefresh: 'hint',
};

export function donorEffectClass(effect: DonorEffect): DonorEffectClass {
  return CLASSES[effect.type];
}

// The task the donor writes before the recipient hears of the migration: pending until the
// commit, then the range it gave away. `_waitForDelete` asks for it to run without the delay. It
// counts no orphans while pending: the donor owns the range until the commit.
export function donorRangeDeletionTask(doc: MigrationCoordinatorDocument, waitForDelete: boolean, details: DonorTaskDetails = {}): RangeDeletionTask {
  return {
    _id: doc._id,
    nss: doc.nss,
    collectionUuid: doc.collectionUuid,
    donorShardId: doc.donorShardId,
    range: doc.range,
    pending: true,
    processing: false,
    whenToClean: waitForDelete ? 'now' : 'delayed',
    numOrphanDocs: 0,
    orphanedSizeBytes: 0,
    ...details,
  };
}

// What the driver knows of the task beyond the coordinator document.
export type DonorTaskDetails = Partial<Pick<RangeDeletionTask, 'timestamp' | 'keyPattern' | 'preMigrationShardVersion'>>;
