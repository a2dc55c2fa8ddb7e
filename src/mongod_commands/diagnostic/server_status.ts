import os from 'node:os';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { commandMetricsOf, opLatencies } from '../../metrics/command_metrics.js';
import { migrationStatistics } from '../../migration/migration_statistics.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON } from '../../migration/range_deletion_task.js';
import { isConfigServerServices, type CommandDefinition, type MongodServices } from '../command.js';
import { SERVER_VERSION } from '../../command_layer/server_description.js';
import { authenticationAttempts } from '../auth/sasl_commands.js';
import { memberHelloFields } from '../../replication/member_hello.js';

export const serverStatusCommand: CommandDefinition = {
  names: ['serverStatus'],
  run(ctx, cmd) {
    const { node } = ctx;
    const now = node.wallClock.now();
    const uptimeMs = now - node.startedAt.getTime();
    const mem = process.memoryUsage();
    return {
      host: `${os.hostname()}:${node.options.port}`,
      version: SERVER_VERSION,
      process: 'docshard',
      pid: process.pid,
      uptime: Math.floor(uptimeMs / 1000),
      uptimeMillis: uptimeMs,
      uptimeEstimate: Math.floor(uptimeMs / 1000),
      localTime: new Date(now),
      connections: { current: node.counters.connectionsCurrent, available: node.options.maxConns - node.counters.connectionsCurrent, totalCreated: node.counters.connectionsTotal },
      security: { authentication: authenticationAttempts(node).serverStatus() },
      opcounters: { ...node.counters.opcounters },
      opLatencies: opLatencies(commandMetricsOf(node), isPlainObject(cmd.opLatencies) && cmd.opLatencies.histograms === true),
      mem: { bits: 64, resident: Math.round(mem.rss / 1024 / 1024), virtual: Math.round(mem.heapTotal / 1024 / 1024), supported: true },
      metrics: { cursor: { open: { total: node.cursors.openCount } }, ttl: { ...node.ttl.statistics } },
      storageEngine: { name: 'lmdb', supportsCommittedReads: true, supportsSnapshotReadConcern: true, persistent: true },
      ...(node.options.role === 'shard' ? { shardingStatistics: shardingStatistics(node) } : {}),
      // A config server's: the reshardings its coordinators ran (src/resharding).
      ...(isConfigServerServices(node) ? { shardingStatistics: node.resharding.statistics.serverStatus() } : {}),
      // MongoDB's section for a replica-set member: what hello says of the set, and the rollback id.
      ...(node.replication === undefined ? {} : { repl: { ...memberHelloFields(node.replication, false), rbid: node.replication.rollbackId() } }),
      ok: 1,
    };
  },
};

// mongod's serverStatus.shardingStatistics on a shard: MongoDB's counter names where docshard has
// the counter, and a `docshard` section with the migration in flight and the range deletions.
export function shardingStatistics(node: MongodServices): Doc {
  const stats = migrationStatistics(node);
  const tasks = node.local.find(RANGE_DELETIONS_NS).map(rangeDeletionTaskFromBSON);
  const pending = tasks.filter((t) => t.pending).length;
  return {
    countDonorMoveChunkStarted: stats.countDonorMoveChunkStarted,
    countDonorMoveChunkCommitted: stats.countDonorMoveChunkCommitted,
    countDonorMoveChunkAborted: stats.countDonorMoveChunkAborted,
    totalDonorMoveChunkTimeMillis: stats.totalDonorMoveChunkTimeMillis,
    countDocsClonedOnRecipient: stats.countDocsClonedOnRecipient,
    countBytesClonedOnRecipient: stats.countBytesClonedOnRecipient,
    countRecipientMoveChunkStarted: stats.countRecipientMoveChunkStarted,
    rangeDeleterTasks: tasks.length,
    docshard: {
      migration: inFlightMigration(node),
      transferModsBatchesOnRecipient: stats.countTransferModsBatchesOnRecipient,
      clonePausedMillisOnDonor: stats.clonePausedMillisOnDonor,
      userOpsPerSecond: Math.round(node.migrations.loadMeter.opsPerSecond(performance.now())),
      // expedited: tasks run ahead of orphanCleanupDelaySecs because a migration brought their
      // range back (docsDeletedExpedited of docsDeleted were theirs).
      rangeDeletions: {
        total: tasks.length, pending, ready: tasks.length - pending, running: node.migrations.rangeDeleter.runningTaskKeys.length,
        orphanedDocs: tasks.reduce((n, t) => n + t.numOrphanDocs, 0), ...node.migrations.rangeDeleter.statistics,
      },
    },
  };
}

// The donation or reception in flight, or null.
function inFlightMigration(node: MongodServices): Doc | null {
  const source = node.migrations.source;
  if (source !== undefined) {
    const p = source.progress;
    return {
      role: 'donor', migrationId: source.doc._id, ns: source.doc.nss, min: source.doc.range.min, max: source.doc.range.max,
      toShard: source.doc.recipientShardId, phase: source.phase, recipientState: p.recipientState ?? null,
      clonedDocs: p.clonedDocs, clonedBytes: p.clonedBytes, transferModsPending: p.transferModsPending,
    };
  }
  const destination = node.migrations.destination;
  if (destination !== undefined && !destination.done) {
    const r = destination.request;
    const { state, counts } = destination.status();
    return {
      role: 'recipient', migrationId: r.migrationId, ns: r.nss, min: r.range.min, max: r.range.max, fromShard: r.donorShardId,
      phase: destination.phase, state, clonedDocs: counts.cloned, clonedBytes: counts.clonedBytes,
      catchupMods: counts.catchup, steadyMods: counts.steady, transferModsBatches: destination.transferModsBatches,
    };
  }
  return null;
}
