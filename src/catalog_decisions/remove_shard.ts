import { Long } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { ShardType } from '../catalog/type_chunk.js';

// What is still on the shard being removed, counted in config.chunks and config.databases.
export interface DrainingUsage {
  readonly chunks: number;
  readonly jumboChunks: number;
  // Databases whose primary shard it is, by name ('local' left out of dbsToMove, as 7.0 does).
  readonly databases: readonly string[];
}

export interface RemoveShardRequest {
  // The shard's name, or its host as config.shards spells it (the shard registry accepts either).
  readonly shardIdOrHost: string;
  readonly shards: readonly ShardType[];
  readonly usage: DrainingUsage;
  // Zones that some config.tags range uses.
  readonly zonesWithRanges?: readonly string[];
}

export type RemoveShardDecision =
  // First call: set draining: true (and log removeShard.start).
  | { readonly kind: 'start'; readonly shard: string; readonly dbsToMove: string[] }
  // Chunks or databases are still there: nothing to write.
  | { readonly kind: 'ongoing'; readonly shard: string; readonly remaining: { chunks: number; dbs: number; jumboChunks: number }; readonly dbsToMove: string[] }
  // Nothing left: delete the config.shards entry, give the control shard a new topologyTime
  // (7.0 does so in the same transaction) and log removeShard.
  | { readonly kind: 'remove'; readonly shard: string; readonly controlShard: string };

// The shard to remove, by name or host; ShardNotFound as the shard registry answers it.
export function resolveShard(shards: readonly ShardType[], shardIdOrHost: string): ShardType {
  const found = shards.find((s) => s._id === shardIdOrHost) ?? shards.find((s) => s.host === shardIdOrHost);
  if (!found) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${shardIdOrHost} not found`);
  return found;
}

// ShardingCatalogManager::removeShard (7.0): refused while no other shard would be left that is
// not draining; the first call starts draining; later calls report what remains until the shard
// owns no chunk and is primary of no database, and the call after that removes it.
export function decideRemoveShard(req: RemoveShardRequest): RemoveShardDecision {
  const shard = resolveShard(req.shards, req.shardIdOrHost);
  const others = req.shards.filter((s) => s._id !== shard._id);
  if (!others.some((s) => s.draining !== true)) {
    throw new MongoError(ErrorCodes.IllegalOperation, 'Operation not allowed because it would remove the last shard');
  }
  // A zone with ranges must keep a shard (checked on every call, as 7.0 does).
  for (const zone of shard.tags ?? []) {
    const onlyShard = !others.some((s) => s.tags?.includes(zone) === true);
    if (onlyShard && req.zonesWithRanges?.includes(zone) === true) {
      throw new MongoError(ErrorCodes.ZoneStillInUse, `Operation not allowed because it would remove the only shard for zone ${zone} which has a chunk range is associated with it`);
    }
  }
  const dbsToMove = req.usage.databases.filter((d) => d !== 'local');
  if (shard.draining !== true) return { kind: 'start', shard: shard._id, dbsToMove };
  const { chunks, jumboChunks, databases } = req.usage;
  if (chunks > 0 || databases.length > 0) {
    return { kind: 'ongoing', shard: shard._id, remaining: { chunks, dbs: databases.length, jumboChunks }, dbsToMove };
  }
  const controlShard = [...others].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))[0]!;
  return { kind: 'remove', shard: shard._id, controlShard: controlShard._id };
}

// 7.0's note: the same words whether or not there is anything to move.
export const REMOVE_SHARD_NOTE = 'you need to drop or movePrimary these databases';

// The _configsvrRemoveShard reply (appendShardDrainingStatus), field order as 7.0 writes it; the
// counts are 64-bit, as the server's long long.
export function removeShardReply(decision: RemoveShardDecision): Doc {
  switch (decision.kind) {
    case 'start':
      return { msg: 'draining started successfully', state: 'started', shard: decision.shard, note: REMOVE_SHARD_NOTE, dbsToMove: decision.dbsToMove, ok: 1 };
    case 'ongoing': {
      const { chunks, dbs, jumboChunks } = decision.remaining;
      return {
        msg: 'draining ongoing', state: 'ongoing',
        remaining: { chunks: Long.fromNumber(chunks), dbs: Long.fromNumber(dbs), jumboChunks: Long.fromNumber(jumboChunks) },
        note: REMOVE_SHARD_NOTE, dbsToMove: decision.dbsToMove, ok: 1,
      };
    }
    case 'remove':
      return { msg: 'removeshard completed successfully', state: 'completed', shard: decision.shard, ok: 1 };
  }
}
