import { Long, type Binary, type ObjectId, type Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { chunkVersion } from '../catalog/chunk_version.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { decideShardKeyIndex } from './shard_key_index.js';
import { initialChunks } from './initial_chunks.js';
import { checkShardKeyAgainstZones, type ZoneRange } from './zones.js';
import { changeLogEntry, type ChangeLogContext } from './changelog.js';
import { versionString } from './placement.js';

export interface ShardCollectionRequest {
  readonly ns: string;
  readonly key: Doc;
  readonly unique: boolean;
  readonly numInitialChunks?: number;
  readonly presplitHashedZones?: boolean;
  readonly zones?: readonly ZoneRange[]; // config.tags of ns
  readonly shardZones?: Readonly<Record<string, readonly string[]>>; // shard id -> its zones
  readonly primaryShard: string;
  readonly shards: readonly string[];
  readonly existing: CollectionType | undefined;
  readonly collectionIsEmpty: boolean;
  readonly existingIndexes: readonly Doc[];
  readonly newEpoch: ObjectId;
  readonly newUuid: Binary; // the unsharded collection's uuid when it already exists
  readonly now: Timestamp;
  readonly chunkIdFactory: () => ObjectId;
  readonly log: ChangeLogContext; // its time is also config.collections' lastmod (wall clock)
}

export interface ShardCollectionDecision {
  // True when the collection was sharded before with the same key and uniqueness: MongoDB
  // answers ok and nothing is written (chunks and changelog are empty, collection is the entry).
  readonly alreadySharded: boolean;
  readonly collection: CollectionType;
  readonly chunks: ChunkType[];
  readonly createIndex?: Doc; // to build on the primary shard before the chunks are committed
  readonly changelog: Doc[];
}

const SESSIONS_NS = 'config.system.sessions';

// CreateCollectionCoordinator (7.0) for shardCollection: argument checks, the idempotent
// already-sharded answer, the shard key index, the initial chunks and the catalog entries.
export function decideShardCollection(req: ShardCollectionRequest): ShardCollectionDecision {
  const key = new ShardKeyPattern(req.key);
  checkNamespace(req.ns);
  if (key.hashedField !== undefined && req.unique) {
    throw new MongoError(ErrorCodes.InvalidOptions, "Hashed shard keys cannot be declared unique. It's possible to ensure uniqueness on the hashed field by declaring an additional (non-hashed) unique index on the field.");
  }

  if (req.existing !== undefined) {
    if (compareValues(req.existing.key, req.key) !== 0 || req.existing.unique !== req.unique) {
      throw new MongoError(ErrorCodes.AlreadyInitialized, `sharding already enabled for collection ${req.ns}`);
    }
    return { alreadySharded: true, collection: req.existing, chunks: [], changelog: [] };
  }

  const createIndex = decideShardKeyIndex({ ns: req.ns, key, unique: req.unique, collectionIsEmpty: req.collectionIsEmpty, existingIndexes: req.existingIndexes });
  checkShardKeyAgainstZones(req.key, req.zones ?? []);
  const chunks = initialChunks({
    key,
    uuid: req.newUuid,
    primaryShard: req.primaryShard,
    shards: req.shards,
    collectionIsEmpty: req.collectionIsEmpty,
    numInitialChunks: req.numInitialChunks ?? 0,
    presplitHashedZones: req.presplitHashedZones ?? false,
    zones: req.zones ?? [],
    shardZones: req.shardZones ?? {},
    now: req.now,
    chunkIdFactory: req.chunkIdFactory,
  });

  const collection: CollectionType = {
    _id: req.ns,
    lastmodEpoch: req.newEpoch,
    lastmod: req.log.time,
    timestamp: req.now,
    uuid: req.newUuid,
    key: req.key,
    unique: req.unique,
    noBalance: false,
  };
  const last = chunks[chunks.length - 1]!.lastmod;
  const version = chunkVersion(req.newEpoch, req.now, last.high, last.low);
  const changelog = [
    changeLogEntry(req.log, req.primaryShard, 'shardCollection.start', req.ns, { shardKey: req.key, collection: req.ns, primary: req.primaryShard }),
    changeLogEntry(req.log, req.primaryShard, 'shardCollection.end', req.ns, {
      uuid: req.newUuid,
      version: versionString(version),
      empty: req.collectionIsEmpty,
      numChunks: Long.fromNumber(chunks.length),
    }),
  ];
  const decision = { alreadySharded: false, collection, chunks, changelog };
  return createIndex === undefined ? decision : { ...decision, createIndex };
}

// _checkCommandArguments: of the config database only the sessions collection may be sharded,
// and no system collection other than that one.
function checkNamespace(ns: string): void {
  const dot = ns.indexOf('.');
  const db = ns.slice(0, dot);
  const coll = ns.slice(dot + 1);
  if (dot <= 0 || coll === '') throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
  if (db === 'config' && ns !== SESSIONS_NS) {
    throw new MongoError(ErrorCodes.IllegalOperation, 'only special collections in the config db may be sharded');
  }
  if (coll.startsWith('system.') && ns !== SESSIONS_NS) {
    throw new MongoError(ErrorCodes.IllegalOperation, "can't shard system namespaces");
  }
}
