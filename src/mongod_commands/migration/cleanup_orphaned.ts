import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON } from '../../migration/range_deletion_task.js';
import type { CommandDefinition, MongodServices } from '../command.js';
import { requireString } from '../../command_layer/args.js';
import { isPlainObject } from '../../bson/values.js';
import { formatValue } from '../../bson/format.js';
import { isValidDbName } from '../../catalog_decisions/create_database.js';

// cleanupOrphaned (admin, on a shard), as since MongoDB 6.0: deletes nothing itself; waits until
// every range deletion task of the collection on this shard (config.rangeDeletions) has been run
// by the range deleter, then answers {ok: 1}. startingFromKey, secondaryThrottle and writeConcern
// are accepted and ignored (deprecated in MongoDB). A task still pending waits for its migration
// to be decided; a 'delayed' one for orphanCleanupDelaySecs.
export const cleanupOrphanedCommand: CommandDefinition = {
  names: ['cleanupOrphaned'],
  adminOnly: true,
  async run(ctx, cmd) {
    const nss = requireString(cmd, 'cleanupOrphaned');
    const dot = nss.indexOf('.');
    if (dot <= 0 || dot === nss.length - 1 || !isValidDbName(nss.slice(0, dot))) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace: ${nss}`);
    if (cmd.startingFromKey !== undefined && !isPlainObject(cmd.startingFromKey)) {
      throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'cleanupOrphaned.startingFromKey' is the wrong type, expected type 'object'");
    }
    if (ctx.node.options.role !== 'shard') throw new MongoError(ErrorCodes.IllegalOperation, 'cleanupOrphaned can only be run on a shard');
    // startingFromKey no longer chooses a range, but MongoDB still refuses one that is not a key
    // of the collection's shard key pattern, which it learns by refreshing the collection's
    // filtering metadata first (one this shard has not loaded since a DDL, say).
    const { metadata, state } = ctx.node.sharding;
    if (metadata.ownership(nss) === undefined && state.shardName !== undefined) await metadata.refreshCollection(nss);
    const pattern = metadata.ownership(nss)?.pattern;
    if (isPlainObject(cmd.startingFromKey) && pattern && !pattern.isShardKey(cmd.startingFromKey)) {
      throw new MongoError(ErrorCodes.ShardKeyNotFound, `could not cleanup orphaned data, start key ${formatValue(cmd.startingFromKey)} does not match shard key pattern ${formatValue(pattern.keyPattern)}`);
    }
    await awaitRangeDeletions(ctx.node, nss);
    return { ok: 1 };
  },
};

// Until no task for nss is left on disk; tasks written meanwhile are waited for too.
export async function awaitRangeDeletions(node: MongodServices, nss: string): Promise<void> {
  for (;;) {
    const tasks = node.local.find(RANGE_DELETIONS_NS, { nss }).map(rangeDeletionTaskFromBSON);
    if (tasks.length === 0) return;
    for (const task of tasks) await node.migrations.rangeDeleter.awaitTask(task._id);
  }
}
