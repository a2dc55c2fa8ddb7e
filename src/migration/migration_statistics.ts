// Cumulative migration counters of one node, for serverStatus's shardingStatistics (MongoDB's
// ShardingStatistics). Kept per node object so several nodes in one process (unit tests)
// do not share them.
export interface MigrationStatistics {
  countDonorMoveChunkStarted: number;
  countDonorMoveChunkCommitted: number;
  countDonorMoveChunkAborted: number;
  totalDonorMoveChunkTimeMillis: number;
  countRecipientMoveChunkStarted: number;
  countDocsClonedOnRecipient: number;
  countBytesClonedOnRecipient: number;
  // Batches of _transferMods the recipient applied, over every migration.
  countTransferModsBatchesOnRecipient: number;
  // How long this donor held _migrateClone replies back while it served users (clone_pacer.ts).
  clonePausedMillisOnDonor: number;
}

const byNode = new WeakMap<object, MigrationStatistics>();

export function migrationStatistics(node: object): MigrationStatistics {
  let stats = byNode.get(node);
  if (stats === undefined) {
    stats = {
      countDonorMoveChunkStarted: 0, countDonorMoveChunkCommitted: 0, countDonorMoveChunkAborted: 0, totalDonorMoveChunkTimeMillis: 0,
      countRecipientMoveChunkStarted: 0, countDocsClonedOnRecipient: 0, countBytesClonedOnRecipient: 0,
      countTransferModsBatchesOnRecipient: 0, clonePausedMillisOnDonor: 0,
    };
    byNode.set(node, stats);
  }
  return stats;
}
