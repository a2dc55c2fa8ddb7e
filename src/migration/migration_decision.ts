import type { DonorEffect } from './donor_effects.js';
import type { MigrationCoordinatorDocument, MigrationDecision } from './migration_coordinator_document.js';

// How a migration ends, and what each shard must do about it. The config server's chunk
// ownership is the truth: the commit is the one write that moves the range, so a decision that
// was not persisted is read back from it (after fencing any commit still in flight).

// The owner the config server reports for the chunk holding range.min, or null when the
// collection (by uuid) has no chunks any more. The range can only have left the donor through
// this migration's commit: the donor starts no other migration, nor receives one, until this
// document is resolved. So any owner other than the donor means committed; and a dropped
// collection has nothing to keep, so aborting (which keeps the donor's copy) is as good as any.
export function decisionFromConfigOwner(doc: MigrationCoordinatorDocument, ownerShardId: string | null): MigrationDecision {
  if (ownerShardId === null || ownerShardId === doc.donorShardId) return 'aborted';
  return 'committed';
}

export interface DecisionOptions {
  // False when the decision is already on disk (read back at recovery).
  readonly persist: boolean;
  // True when the config commit may have been sent: the cached ownership is then unknown.
  readonly refresh: boolean;
  readonly criticalSectionHeld: boolean;
  readonly waitForDelete: boolean;
}

// The effects that carry out a decision, in the order that keeps every crash point recoverable:
// 1. persist it, so nothing below runs on a decision a restart could contradict;
// 2. refresh the filtering metadata while the critical section still holds writes back, so the
//    first write let through is checked against the new ownership (after a commit, the recipient
//    is asked to refresh too, without waiting for it);
// 3. leave the critical section;
// 4. resolve both range deletion tasks: the shard that keeps the range deletes its task, the other
//    one's becomes ready. On abort the recipient is first told to stop, so it copies nothing into
//    the range after its deletion starts;
// 5. forget the migration only when both shards have done their part; until then a restart
//    re-runs steps 2-5, which are all idempotent.
export function decisionEffects(doc: MigrationCoordinatorDocument, decision: MigrationDecision, opts: DecisionOptions): DonorEffect[] {
  const migrationId = doc._id;
  const recipientShardId = doc.recipientShardId;
  const effects: DonorEffect[] = [];
  if (opts.persist) effects.push({ type: 'persistDecision', migrationId, decision });
  // The hint goes out first, so both shards refresh at the same time.
  if (opts.refresh && decision === 'committed') effects.push({ type: 'hintRecipientRefresh', recipientShardId, nss: doc.nss });
  if (opts.refresh) effects.push({ type: 'refreshFilteringMetadata', nss: doc.nss });
  if (opts.criticalSectionHeld) effects.push({ type: 'exitCriticalSection', nss: doc.nss });
  if (decision === 'committed') {
    effects.push({ type: 'deleteRecipientRangeDeletionTask', recipientShardId, migrationId });
    effects.push({ type: 'markRangeDeletionReady', migrationId });
  } else {
    effects.push({ type: 'sendRecvChunkAbort', recipientShardId, migrationId });
    effects.push({ type: 'deleteRangeDeletionTask', migrationId });
    effects.push({ type: 'markRecipientRangeDeletionReady', recipientShardId, migrationId });
  }
  effects.push({ type: 'deleteCoordinatorDoc', migrationId });
  if (decision === 'committed' && opts.waitForDelete) effects.push({ type: 'awaitRangeDeletion', migrationId });
  return effects;
}

// The config server's view when the decision is unknown: fence first, then read, so the owner
// read cannot be overtaken by a commit that was still on its way.
export function resolveDecisionEffects(doc: MigrationCoordinatorDocument): DonorEffect[] {
  return [
    { type: 'sendEnsureChunkVersionIsGreaterThan', doc },
    { type: 'readConfigChunkOwner', collectionUuid: doc.collectionUuid, range: doc.range },
  ];
}

export type Resolution =
  | { readonly decision: MigrationDecision; readonly effects: DonorEffect[] }
  | { readonly decision: undefined; readonly effects: DonorEffect[] };

// Recovery of a persisted coordinator document after a restart. The critical section died with
// the process; the driver keeps the collection's filtering metadata unknown (versioned requests
// wait) until `refreshFilteringMetadata` runs. With the config server's view (`ownerShardId`)
// an undecided document is decided; without it, the effects ask for that view.
export function resolveMigration(doc: MigrationCoordinatorDocument, ownerShardId?: string | null): Resolution {
  const opts = { refresh: true, criticalSectionHeld: false, waitForDelete: false };
  if (doc.decision !== undefined) return { decision: doc.decision, effects: decisionEffects(doc, doc.decision, { ...opts, persist: false }) };
  if (ownerShardId === undefined) return { decision: undefined, effects: resolveDecisionEffects(doc) };
  const decision = decisionFromConfigOwner(doc, ownerShardId);
  return { decision, effects: decisionEffects(doc, decision, { ...opts, persist: true }) };
}
