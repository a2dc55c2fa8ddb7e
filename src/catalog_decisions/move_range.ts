import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { shardVersionToBSON } from '../catalog/chunk_version.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { normalizeShardKey } from './shard_key.js';
import { formatRange } from '../catalog/chunk_range.js';
import { shardPlacementVersion } from './placement.js';
import type { MigrationRequest } from './migration_request.js';

export interface MoveRangeRequest {
  readonly collection: CollectionType;
  readonly chunks: readonly ChunkType[]; // every chunk of the collection
  readonly min?: Doc; // required by 7.0's moveRange, optional here to answer its error
  // Without max the donor picks one by data size (autoSplitVector); with no size information this
  // takes the owning chunk's max, which is what the donor falls back to.
  readonly max?: Doc;
  readonly toShard: string;
  readonly shards: readonly ShardType[];
}

export interface MoveRangeDecision {
  readonly chunk: ChunkType; // the chunk the range falls in
  // Bounds of the range strictly inside that chunk: where it is cut. 7.0 cuts it in the migration
  // commit (decideCommitChunkMigration); a split first at these points gives the same chunks.
  readonly splitPoints: Doc[];
  // Undefined when the chunk is already on toShard: MongoDB answers ok and moves nothing.
  readonly migration: MigrationRequest | undefined;
}

// moveRange through the router, _configsvrMoveRange and Balancer::moveRange, then the donor's
// checks (_shardsvrMoveRange, MigrationSourceManager), in that order: the donor returns at once
// when it is also the recipient, before it looks at the range.
export function decideMoveRange(req: MoveRangeRequest): MoveRangeDecision {
  const { collection, min } = req;
  if (min === undefined) throw new MongoError(ErrorCodes.InvalidOptions, "Missing required parameter 'min'");
  if (!req.shards.some((s) => s._id === req.toShard)) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${req.toShard} not found`);

  const chunk = findIntersectingChunk(collection, req.chunks, min);
  if (chunk.shard === req.toShard) return { chunk, splitPoints: [], migration: undefined };

  const max = req.max ?? chunk.max;
  const range = { min, max };
  const key = new ShardKeyPattern(collection.key);
  // The donor's checks fail with StaleConfig, naming the placement it holds: its routing
  // information may be what is wrong.
  const stale = { ns: collection._id, shardId: chunk.shard, vWanted: shardVersionToBSON(shardPlacementVersion(collection, req.chunks, chunk.shard)) };
  if (!key.isShardKey(min) || !key.isShardKey(max)) {
    throw new MongoError(ErrorCodes.StaleConfig, `The range ${formatRange(range)} is not valid for collection ${collection._id} with key pattern ${formatValue(collection.key)}`, stale);
  }
  if (compareValues(min, max) >= 0) {
    throw new MongoError(ErrorCodes.FailedToParse, `min: ${formatValue(min)} should be less than max: ${formatValue(max)}`);
  }
  if (compareValues(max, chunk.max) > 0) {
    throw new MongoError(ErrorCodes.StaleConfig, `Range with bounds ${formatRange(range)} is not contained within a chunk owned by this shard.`, stale);
  }

  const splitPoints = [min, max].filter((b) => compareValues(b, chunk.min) > 0 && compareValues(b, chunk.max) < 0);
  return { chunk, splitPoints, migration: { ns: collection._id, min, max, fromShard: chunk.shard, toShard: req.toShard } };
}

export interface MoveChunkRequest {
  readonly collection: CollectionType;
  readonly chunks: readonly ChunkType[];
  readonly find?: Doc;
  readonly bounds?: readonly Doc[];
  readonly to: string;
  readonly shards: readonly ShardType[];
}

// The router's moveChunk (7.0): `find` names the chunk holding a shard key, `bounds` must be a
// chunk's exact bounds; either way the whole chunk moves, through moveRange.
export function decideMoveChunk(req: MoveChunkRequest): MoveRangeDecision {
  const { collection, find, bounds } = req;
  if (bounds !== undefined && bounds.length !== 2) throw new MongoError(ErrorCodes.InvalidOptions, 'bounds can only have exactly 2 elements');
  if (find !== undefined && bounds !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'cannot specify bounds and query at the same time');
  if (find === undefined && bounds === undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'need to specify query or bounds');
  if (!req.shards.some((s) => s._id === req.to)) {
    throw new MongoError(ErrorCodes.ShardNotFound, `Could not move chunk in ${collection._id} to ${req.to} because that shard does not exist`);
  }

  const key = new ShardKeyPattern(collection.key);
  let chunk: ChunkType;
  if (find !== undefined) {
    const shardKey = key.extractShardKeyFromQuery(find);
    if (shardKey === undefined) throw new MongoError(ErrorCodes.Location656450, `no shard key found in chunk query ${formatValue(find)}`);
    chunk = findIntersectingChunk(collection, req.chunks, shardKey);
  } else {
    const [lower, upper] = bounds as readonly [Doc, Doc];
    if (!key.isShardKey(lower) || !key.isShardKey(upper)) {
      throw new MongoError(ErrorCodes.Location656451, `shard key bounds [${formatValue(lower)},${formatValue(upper)}) are not valid for shard key pattern ${formatValue(collection.key)}`);
    }
    const range = { min: normalizeShardKey(key, lower), max: normalizeShardKey(key, upper) };
    chunk = findIntersectingChunk(collection, req.chunks, range.min);
    if (compareValues(chunk.min, range.min) !== 0 || compareValues(chunk.max, range.max) !== 0) {
      throw new MongoError(ErrorCodes.Location656452, `no chunk found with the shard key bounds ${formatRange(range)}`);
    }
  }
  return decideMoveRange({ collection, chunks: req.chunks, min: chunk.min, max: chunk.max, toShard: req.to, shards: req.shards });
}

// ChunkManager::findIntersectingChunk: the chunk with min <= key < max.
function findIntersectingChunk(collection: CollectionType, chunks: readonly ChunkType[], key: Doc): ChunkType {
  const chunk = chunks.find((c) => compareValues(c.min, key) <= 0 && compareValues(key, c.max) < 0);
  if (chunk === undefined) {
    throw new MongoError(ErrorCodes.ShardKeyNotFound, `Cannot target single shard using key ${formatValue(key)} for namespace ${collection._id}`);
  }
  return chunk;
}
