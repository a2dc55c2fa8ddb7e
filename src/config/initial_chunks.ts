import { Long, Timestamp, type Binary, type ObjectId } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { compareStrings, compareValues } from '../bson/compare.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ShardKeyPattern } from '../catalog/shard_key_pattern.js';

export interface InitialChunksRequest {
  readonly key: ShardKeyPattern;
  readonly uuid: Binary;
  readonly primaryShard: string;
  readonly shards: readonly string[];
  readonly collectionIsEmpty: boolean;
  readonly numInitialChunks: number; // 0 when not given
  readonly presplitHashedZones: boolean;
  readonly now: Timestamp;
  readonly chunkIdFactory: () => ObjectId;
}

const MAX_SPLIT_POINTS = 8192; // shardutil::kMaxSplitPoints
const MAX_INITIAL_CHUNKS_TOTAL = 1000 * 1000;

// InitialSplitPolicy::calculateOptimizationStrategy + createFirstChunks (7.0) for a collection
// without zones: a hashed-prefix key on an empty collection is presplit over every shard,
// anything else starts as one chunk on the primary shard.
export function initialChunks(req: InitialChunksRequest): ChunkType[] {
  const { key, numInitialChunks } = req;
  checkNumInitialChunks(numInitialChunks, req.shards.length);
  if (numInitialChunks !== 0 && !(key.hashedField !== undefined && req.collectionIsEmpty)) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'numInitialChunks is only supported when the collection is empty and has a hashed field in the shard key pattern');
  }
  if (numInitialChunks !== 0 && !key.hasHashedPrefix() && !req.presplitHashedZones) {
    throw new MongoError(ErrorCodes.InvalidOptions, "When the prefix of the hashed shard key is a range field, 'numInitialChunks' can only be used when the 'presplitHashedZones' is true");
  }
  // Presplitting by zones needs zones, and these decisions are never given any.
  if (req.presplitHashedZones) {
    throw new MongoError(31387, "'presplitHashedZones' is only supported when the collection is empty, zones are set up and shard key pattern has a hashed field");
  }
  if (key.hasHashedPrefix() && req.collectionIsEmpty) return presplitHashed(req);
  return [makeChunk(req, key.globalMin(), key.globalMax(), 0, req.primaryShard)];
}

function checkNumInitialChunks(n: number, numShards: number): void {
  const maxForShards = numShards * MAX_SPLIT_POINTS;
  if (!Number.isInteger(n) || n < 0 || n > maxForShards || n > MAX_INITIAL_CHUNKS_TOTAL) {
    throw new MongoError(ErrorCodes.InvalidOptions, `numInitialChunks cannot be more than either: ${maxForShards}, ${MAX_SPLIT_POINTS} * number of shards; or ${MAX_INITIAL_CHUNKS_TOTAL}`);
  }
}

// SplitPointsBasedSplitPolicy: 2 chunks per shard unless told otherwise; shards sorted by id get
// runs of numInitialChunks / numShards contiguous chunks, and when there are fewer chunks than
// shards the first chunk goes to the primary shard.
function presplitHashed(req: InitialChunksRequest): ChunkType[] {
  const shards = [...req.shards].sort(compareStrings);
  if (shards.length === 0) throw new MongoError(ErrorCodes.ShardNotFound, 'No shards found');
  const numChunks = req.numInitialChunks !== 0 ? req.numInitialChunks : 2 * shards.length;
  const contiguous = Math.max(Math.floor(numChunks / shards.length), 1);
  const points = hashedSplitPoints(req.key, numChunks);
  const bounds = [req.key.globalMin(), ...points, req.key.globalMax()];
  const chunks: ChunkType[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const shard = i === 0 && bounds.length - 1 < shards.length ? req.primaryShard : shards[Math.floor(i / contiguous) % shards.length]!;
    chunks.push(makeChunk(req, bounds[i]!, bounds[i + 1]!, i, shard));
  }
  return chunks;
}

const INT64_MAX = 2n ** 63n - 1n;

// InitialSplitPolicy::calculateHashedSplitPoints: numInitialChunks - 1 NumberLong boundaries that
// cut the hash space into equal intervals symmetric around 0; fields after the hashed one are
// MinKey so that every boundary is a full shard key. Only hashed-prefix keys are presplit without
// zones, so no range fields ever precede the hashed one here.
export function hashedSplitPoints(key: ShardKeyPattern, numInitialChunks: number): Doc[] {
  const n = BigInt(numInitialChunks);
  const intervalSize = (INT64_MAX / n) * 2n;
  const values: bigint[] = [];
  let current = 0n;
  if (n % 2n === 0n) {
    values.push(current);
    current += intervalSize;
  } else {
    current += intervalSize / 2n;
  }
  for (let i = 0n; i < (n - 1n) / 2n; i++) {
    values.push(current, -current);
    current += intervalSize;
  }
  return values.map((v) => splitPoint(key, v)).sort(compareValues);
}

function splitPoint(key: ShardKeyPattern, hash: bigint): Doc {
  const point: Doc = {};
  let afterHashed = false;
  for (const field of key.fields) {
    if (field === key.hashedField) {
      point[field] = Long.fromBigInt(hash);
      afterHashed = true;
    } else if (afterHashed) {
      point[field] = new MinKey();
    }
  }
  return point;
}

// appendChunk: versions 1|0, 1|1, ... in key order, each chunk's history starting now.
function makeChunk(req: InitialChunksRequest, min: Doc, max: Doc, minor: number, shard: string): ChunkType {
  return {
    _id: req.chunkIdFactory(),
    uuid: req.uuid,
    min,
    max,
    shard,
    lastmod: new Timestamp({ t: 1, i: minor }),
    onCurrentShardSince: req.now,
    history: [{ validAfter: req.now, shard }],
  };
}
