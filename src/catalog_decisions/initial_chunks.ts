import { Long, Timestamp, type Binary, type ObjectId } from 'bson';
import { bsonTag, MinKey, type Doc } from '../bson/values.js';
import { compareStrings, compareValues } from '../bson/compare.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { shardsByZone, sortZoneRanges, type ZoneRange } from './zones.js';

export interface InitialSplitRequest {
  readonly key: ShardKeyPattern;
  readonly primaryShard: string;
  readonly shards: readonly string[];
  readonly collectionIsEmpty: boolean;
  readonly numInitialChunks: number; // 0 when not given
  readonly presplitHashedZones: boolean;
  // The namespace's zone ranges (config.tags, bounds naming exactly the shard key's fields) and
  // each shard's zones (config.shards tags); none when absent.
  readonly zones?: readonly ZoneRange[];
  readonly shardZones?: Readonly<Record<string, readonly string[]>>;
}

export interface InitialChunksRequest extends InitialSplitRequest {
  readonly uuid: Binary;
  readonly now: Timestamp;
  readonly chunkIdFactory: () => ObjectId;
}

// A first chunk's bounds and owner, before it has an id and a version.
export interface InitialChunkRange {
  readonly min: Doc;
  readonly max: Doc;
  readonly shard: string;
}

const MAX_SPLIT_POINTS = 8192; // shardutil::kMaxSplitPoints
const MAX_INITIAL_CHUNKS_TOTAL = 1000 * 1000;

// InitialSplitPolicy::calculateOptimizationStrategy + createFirstChunks (7.0): with
// presplitHashedZones each zone range is presplit by hash over its shards; without zones a
// hashed-prefix key on an empty collection is presplit over every shard; with zones an empty
// collection gets one chunk per zone range on a shard of that zone (and the gaps between them
// round-robin over all shards); anything else starts as one chunk on the primary shard.
export function initialSplit(req: InitialSplitRequest): InitialChunkRange[] {
  const { key, numInitialChunks } = req;
  checkNumInitialChunks(numInitialChunks, req.shards.length);
  if (numInitialChunks !== 0 && !(key.hashedField !== undefined && req.collectionIsEmpty)) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'numInitialChunks is only supported when the collection is empty and has a hashed field in the shard key pattern');
  }
  if (numInitialChunks !== 0 && !key.hasHashedPrefix() && !req.presplitHashedZones) {
    throw new MongoError(ErrorCodes.InvalidOptions, "When the prefix of the hashed shard key is a range field, 'numInitialChunks' can only be used when the 'presplitHashedZones' is true");
  }
  const zones = sortZoneRanges(req.zones ?? []);
  if (req.presplitHashedZones) return presplitHashedZones(req, zones);
  if (zones.length === 0 && key.hasHashedPrefix() && req.collectionIsEmpty) return presplitHashed(req);
  if (zones.length > 0 && req.collectionIsEmpty) return singleChunkPerZone(req, zones);
  return [{ min: key.globalMin(), max: key.globalMax(), shard: req.primaryShard }];
}

// The chunks of initialSplit with their versions, 1|0, 1|1, ... in key order.
export function initialChunks(req: InitialChunksRequest): ChunkType[] {
  return initialSplit(req).map((range, minor) => makeChunk(req, range, minor));
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
function presplitHashed(req: InitialSplitRequest): InitialChunkRange[] {
  const shards = [...req.shards].sort(compareStrings);
  if (shards.length === 0) throw new MongoError(ErrorCodes.ShardNotFound, 'No shards found');
  const numChunks = req.numInitialChunks !== 0 ? req.numInitialChunks : 2 * shards.length;
  const contiguous = Math.max(Math.floor(numChunks / shards.length), 1);
  const points = hashedSplitPoints(req.key, numChunks);
  const bounds = [req.key.globalMin(), ...points, req.key.globalMax()];
  const chunks: InitialChunkRange[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const shard = i === 0 && bounds.length - 1 < shards.length ? req.primaryShard : shards[Math.floor(i / contiguous) % shards.length]!;
    chunks.push({ min: bounds[i]!, max: bounds[i + 1]!, shard });
  }
  return chunks;
}

const INT64_MAX = 2n ** 63n - 1n;

// InitialSplitPolicy::calculateHashedSplitPoints: numInitialChunks - 1 NumberLong boundaries that
// cut the hash space into equal intervals symmetric around 0; fields after the hashed one are
// MinKey so that every boundary is a full shard key, and the range fields before it (only when
// presplitting a zone) take the zone's lower bound values, `prefix`.
export function hashedSplitPoints(key: ShardKeyPattern, numInitialChunks: number, prefix: Doc = {}): Doc[] {
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
  return values.map((v) => splitPoint(key, v, prefix)).sort(compareValues);
}

function splitPoint(key: ShardKeyPattern, hash: bigint, prefix: Doc): Doc {
  const point: Doc = {};
  let afterHashed = false;
  for (const field of key.fields) {
    if (field === key.hashedField) {
      point[field] = Long.fromBigInt(hash);
      afterHashed = true;
    } else if (afterHashed) {
      point[field] = new MinKey();
    } else {
      point[field] = prefix[field];
    }
  }
  return point;
}

interface ZoneSplit {
  points: Doc[]; // inside the zone range, sorted
  owners: { shard: string; chunks: number }[]; // contiguous runs; their chunks add up to points + 1
}

// AbstractTagsBasedSplitPolicy::createFirstChunks: in key order, each gap before a zone range is
// one chunk on the next shard (by id, round-robin over all shards), each zone range is split as
// `split` says over that zone's shards, and the gap after the last range is one more chunk.
function chunksAlongZones(req: InitialSplitRequest, zones: readonly ZoneRange[], split: (zone: ZoneRange, owners: readonly string[], next: number) => ZoneSplit): InitialChunkRange[] {
  const shards = [...req.shards].sort(compareStrings);
  if (shards.length === 0) throw new MongoError(ErrorCodes.ShardNotFound, 'No shards found');
  const owners = shardsByZone(req.shardZones ?? {});
  const nextInZone = new Map<string, number>();
  let nextForGap = 0;
  const chunks: InitialChunkRange[] = [];
  const add = (min: Doc, max: Doc, shard: string): void => { chunks.push({ min, max, shard }); };
  let last = req.key.globalMin();
  for (const zone of zones) {
    if (compareValues(zone.min, last) > 0) add(last, zone.min, shards[nextForGap++ % shards.length]!);
    const zoneShards = owners.get(zone.tag) ?? [];
    if (zoneShards.length === 0) {
      throw new MongoError(50973, `Cannot shard collection due to zone ${zone.tag} which is not assigned to a shard. Please assign this zone to a shard.`);
    }
    const next = nextInZone.get(zone.tag) ?? 0;
    nextInZone.set(zone.tag, next + 1);
    const { points, owners: runs } = split(zone, zoneShards, next);
    const bounds = [zone.min, ...points, zone.max];
    let i = 0;
    for (const run of runs) {
      for (let n = 0; n < run.chunks; n++, i++) add(bounds[i]!, bounds[i + 1]!, run.shard);
    }
    last = zone.max;
  }
  if (compareValues(last, req.key.globalMax()) < 0) add(last, req.key.globalMax(), shards[nextForGap % shards.length]!);
  return chunks;
}

// SingleChunkPerTagSplitPolicy: one chunk per zone range, on that zone's shards in turn.
function singleChunkPerZone(req: InitialSplitRequest, zones: readonly ZoneRange[]): InitialChunkRange[] {
  return chunksAlongZones(req, zones, (_zone, owners, next) => ({ points: [], owners: [{ shard: owners[next % owners.length]!, chunks: 1 }] }));
}

// PresplitHashedZonesSplitPolicy (7.0): numInitialChunks (default 2 per shard that has a zone
// range) is spread over those shards; each zone range gets, from each of its shards, that shard's
// share divided by how many zone ranges the shard serves (rounded up), cut by hash.
function presplitHashedZones(req: InitialSplitRequest, zones: readonly ZoneRange[]): InitialChunkRange[] {
  checkPresplitHashedZones(req, zones);
  const owners = shardsByZone(req.shardZones ?? {});
  const rangesPerShard = new Map<string, number>();
  for (const zone of zones) {
    for (const shard of owners.get(zone.tag) ?? []) rangesPerShard.set(shard, (rangesPerShard.get(shard) ?? 0) + 1);
  }
  const shardCount = rangesPerShard.size;
  const ceilDiv = (x: number, y: number): number => Math.floor(x / y) + (x % y !== 0 ? 1 : 0);
  const perShard = shardCount === 0 ? 0 : ceilDiv(req.numInitialChunks !== 0 ? req.numInitialChunks : shardCount * 2, shardCount);
  const hashed = req.key.hashedField!;
  return chunksAlongZones(req, zones, (zone, zoneShards) => {
    const runs = zoneShards.map((shard) => ({ shard, chunks: ceilDiv(perShard, rangesPerShard.get(shard)!) }));
    const total = runs.reduce((sum, r) => sum + r.chunks, 0);
    const prefix: Doc = {};
    for (const field of Object.keys(zone.min)) {
      if (field === hashed) break;
      prefix[field] = zone.min[field];
    }
    return { points: hashedSplitPoints(req.key, total, prefix), owners: runs };
  });
}

// PresplitHashedZonesSplitPolicy::_validate: an empty collection, zones, a hashed field; with a
// hashed prefix one zone range over the whole key space; otherwise each range's lower bound has
// real values before the hashed field (and an upper bound differing in one of them) and MinKey
// from the hashed field on.
function checkPresplitHashedZones(req: InitialSplitRequest, zones: readonly ZoneRange[]): void {
  const { key } = req;
  if (!req.collectionIsEmpty || zones.length === 0 || key.hashedField === undefined) {
    throw new MongoError(31387, "'presplitHashedZones' is only supported when the collection is empty, zones are set up and shard key pattern has a hashed field");
  }
  if (key.hasHashedPrefix()) {
    const only = zones[0]!;
    if (zones.length !== 1 || compareValues(only.min, key.globalMin()) !== 0 || compareValues(only.max, key.globalMax()) !== 0) {
      throw new MongoError(31412, "For hashed prefix shard keys, 'presplitHashedZones' is only supported when there is a single zone defined which covers entire shard key range");
    }
    return;
  }
  const hashedAt = key.fields.indexOf(key.hashedField);
  for (const zone of zones) {
    let prefixDiffers = false;
    for (const field of key.fields.slice(0, hashedAt)) {
      const tag = bsonTag(zone.min[field]);
      if (tag === 'MinKey' || tag === 'MaxKey') {
        throw new MongoError(31388, `One or more zones are not defined in a manner that supports hashed pre-splitting. Cannot have MinKey or MaxKey in the lower bound for fields preceding the hashed field but found one, for zone ${zone.tag}`);
      }
      prefixDiffers ||= compareValues(zone.min[field], zone.max[field]) !== 0;
    }
    if (!prefixDiffers) {
      throw new MongoError(31390, `One or more zones are not defined in a manner that supports hashed pre-splitting. The value preceding hashed field of the upper bound should be greater than that of lower bound, for zone ${zone.tag}`);
    }
    if (bsonTag(zone.min[key.hashedField]) !== 'MinKey') {
      throw new MongoError(31389, `One or more zones are not defined in a manner that supports hashed pre-splitting. The hashed field value for lower bound must be MinKey, for zone ${zone.tag}`);
    }
    for (const field of key.fields.slice(hashedAt + 1)) {
      if (bsonTag(zone.min[field]) !== 'MinKey') {
        throw new MongoError(31391, `One or more zones are not defined in a manner that supports hashed pre-splitting. The fields after the hashed field must have MinKey value, for zone ${zone.tag}`);
      }
    }
  }
}

// appendChunk: each chunk's history starting now.
function makeChunk(req: InitialChunksRequest, { min, max, shard }: InitialChunkRange, minor: number): ChunkType {
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
