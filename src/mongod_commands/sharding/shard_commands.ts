import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { parseShardIdentity } from '../../shard/sharding_state.js';
import type { CommandDefinition } from '../command.js';
import type { ShardMetadata } from '../../shard/shard_metadata.js';

// Sent by the config server during addShard: persist the shard identity, then serve as a shard.
export const addShardInternalCommand: CommandDefinition = {
  names: ['_addShard'],
  adminOnly: true,
  run(ctx, cmd) {
    const identity = parseShardIdentity(cmd.shardIdentity);
    if (!identity) throw new MongoError(ErrorCodes.BadValue, '_addShard requires shardIdentity {shardName, clusterId, configsvrConnectionString}');
    const { sharding } = ctx.node;
    if (ctx.node.options.role !== 'shard') throw new MongoError(ErrorCodes.IllegalOperation, 'only a shard node can be added to a cluster');
    const current = sharding.state;
    if (current.enabled && current.clusterId && !current.clusterId.equals(identity.clusterId)) {
      throw new MongoError(ErrorCodes.IllegalOperation, `this node already belongs to cluster ${current.clusterId.toHexString()} as shard ${current.shardName}`);
    }
    if (current.enabled && current.shardName !== identity.shardName) {
      throw new MongoError(ErrorCodes.IllegalOperation, `this node is already shard ${current.shardName}`);
    }
    current.initialize(identity);
    ctx.node.logger.info({ c: 'SHARDING', shardName: identity.shardName, configsvr: identity.configsvrConnectionString }, 'Sharding state initialized');
    return { ok: 1 };
  },
};

// Reads only the shard's filtering metadata (a migration's donor asks the recipient for it).
export const flushRoutingTableCacheUpdatesCommand: CommandDefinition<{ sharding: { metadata: ShardMetadata } }> = {
  names: ['_flushRoutingTableCacheUpdates', '_flushRoutingTableCacheUpdatesWithWriteConcern'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = cmd[Object.keys(cmd)[0]!];
    if (typeof ns !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, '_flushRoutingTableCacheUpdates takes a namespace');
    ctx.node.sharding.metadata.forget(ns);
    await ctx.node.sharding.metadata.refreshCollection(ns);
    return { ok: 1 };
  },
};

export const flushDatabaseCacheUpdatesCommand: CommandDefinition = {
  names: ['_flushDatabaseCacheUpdates', '_flushDatabaseCacheUpdatesWithWriteConcern'],
  adminOnly: true,
  async run(ctx, cmd) {
    const db = cmd[Object.keys(cmd)[0]!];
    if (typeof db !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, '_flushDatabaseCacheUpdates takes a database name');
    ctx.node.sharding.metadata.forgetDatabase(db);
    await ctx.node.sharding.metadata.refreshDatabase(db);
    return { ok: 1 };
  },
};
