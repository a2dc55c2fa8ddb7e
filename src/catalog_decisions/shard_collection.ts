import { Long, type Binary, type ObjectId, type Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareStrings, compareValues } from '../bson/compare.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { chunkVersion } from '../catalog/chunk_version.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { decideShardKeyIndex } from './shard_key_index.js';
import { initialChunks, initialSplit, type InitialSplitRequest } from './initial_chunks.js';
import { checkShardKeyAgainstZones, type ZoneRange } from './zones.js';
import { changeLogEntry, type ChangeLogContext } from './changelog.js';
import { versionString } from './placement.js';

export interface ShardCollectionArgs {
  readonly ns: string;
  readonly key: Doc;
  readonly unique: boolean;
  readonly numInitialChunks?: number;
  readonly presplitHashedZones?: boolean;
}

// What the first chunks are laid out from: the shards, their zones, the namespace's zone ranges
// (config.shards, config.tags) and whether the collection has documents. The coordinator reads them
// once and persists them; the commit lays the chunks out again from the same facts, so that they fall
// on the shards the coordinator created the collection on whatever changed in config.* meanwhile.
export interface InitialChunksLayout {
  readonly primaryShard: string;
  readonly shards: readonly string[];
  readonly zones: readonly ZoneRange[];
  readonly shardZones: Readonly<Record<string, readonly string[]>>;
  readonly collectionIsEmpty: boolean;
}

export interface ShardCollectionTranslationRequest extends ShardCollectionArgs {
  readonly layout: InitialChunksLayout;
  readonly options: Doc; // the collection's, on the primary shard
  readonly existingIndexes: readonly Doc[];
}

export interface ShardCollectionTranslation {
  readonly createIndex?: Doc; // to build on the primary shard before its indexes are copied
  readonly dataShards: string[]; // the shards other than the primary that get initial chunks
}

export interface ShardCollectionRequest extends ShardCollectionArgs {
  readonly layout: InitialChunksLayout;
  readonly uuid: Binary; // the primary shard's collection's
  readonly existing: CollectionType | undefined;
  readonly knownShards: readonly string[]; // config.shards at the commit
  readonly newEpoch: ObjectId;
  readonly now: Timestamp;
  readonly chunkIdFactory: () => ObjectId;
  readonly log: ChangeLogContext; // its time is also config.collections' lastmod (wall clock)
  // An unsplittable entry (MongoDB 8.0's registration of an unsharded collection).
  readonly unsplittable?: boolean;
}

export interface ShardCollectionDecision {
  // True when the collection is sharded already with the same UUID, key and uniqueness (the commit
  // run again): nothing is written (chunks and changelog are empty, collection is the entry).
  readonly alreadySharded: boolean;
  readonly collection: CollectionType;
  readonly chunks: ChunkType[];
  readonly changelog: Doc[];
}

const SESSIONS_NS = 'config.system.sessions';

// CreateCollectionCoordinator's kCheck: what the request alone may be refused for.
export function checkShardCollectionArgs(args: ShardCollectionArgs): ShardKeyPattern {
  const key = new ShardKeyPattern(args.key);
  checkNamespace(args.ns);
  if (key.hashedField !== undefined && args.unique) {
    throw new MongoError(ErrorCodes.InvalidOptions, "Hashed shard keys cannot be declared unique. It's possible to ensure uniqueness on the hashed field by declaring an additional (non-hashed) unique index on the field.");
  }
  return key;
}

// The coordinator's translation of the request, on the primary shard, the collection there and
// writes to it blocked: what refuses it (options, shard key index, zones, initial chunk options),
// the index to build and the shards to create the collection on. Nothing is written before it.
export function translateShardCollection(req: ShardCollectionTranslationRequest): ShardCollectionTranslation {
  checkCollectionOptions(req.ns, req.options);
  const key = checkShardCollectionArgs(req);
  const createIndex = decideShardKeyIndex({ ns: req.ns, key, unique: req.unique, collectionIsEmpty: req.layout.collectionIsEmpty, existingIndexes: req.existingIndexes });
  const owners = new Set(initialSplit(splitRequest(req, key, req.layout)).map((c) => c.shard));
  owners.delete(req.layout.primaryShard);
  const translation = { dataShards: [...owners].sort(compareStrings) };
  return createIndex === undefined ? translation : { ...translation, createIndex };
}

// The config server's commit: the catalog entries, from the layout the coordinator translated with.
export function decideShardCollection(req: ShardCollectionRequest): ShardCollectionDecision {
  const key = checkShardCollectionArgs(req);
  // An unsplittable entry gives way to the sharded one (shardCollection of a tracked unsharded collection).
  const replaced = req.existing !== undefined && req.existing.unsplittable === true && req.unsplittable !== true;
  if (req.existing !== undefined && !replaced) {
    const same = compareValues(req.existing.key, req.key) === 0 && (req.existing.unique === true) === req.unique && compareValues(req.existing.uuid, req.uuid) === 0;
    if (!same) throw new MongoError(ErrorCodes.AlreadyInitialized, `sharding already enabled for collection ${req.ns}`);
    return { alreadySharded: true, collection: req.existing, chunks: [], changelog: [] };
  }
  const chunks = initialChunks({ ...splitRequest(req, key, req.layout), uuid: req.uuid, now: req.now, chunkIdFactory: req.chunkIdFactory });
  const known = new Set(req.knownShards);
  const removed = chunks.find((c) => !known.has(c.shard));
  if (removed !== undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${removed.shard} not found`);

  const collection: CollectionType = {
    _id: req.ns,
    lastmodEpoch: req.newEpoch,
    lastmod: req.log.time,
    timestamp: req.now,
    uuid: req.uuid,
    key: req.key,
    unique: req.unique,
    noBalance: false,
    ...(req.unsplittable === true ? { unsplittable: true } : {}),
  };
  const last = chunks[chunks.length - 1]!.lastmod;
  const version = chunkVersion(req.newEpoch, req.now, last.high, last.low);
  const { primaryShard, collectionIsEmpty } = req.layout;
  const changelog = [
    changeLogEntry(req.log, primaryShard, 'shardCollection.start', req.ns, { shardKey: req.key, collection: req.ns, primary: primaryShard }),
    changeLogEntry(req.log, primaryShard, 'shardCollection.end', req.ns, {
      uuid: req.uuid,
      version: versionString(version),
      empty: collectionIsEmpty,
      numChunks: Long.fromNumber(chunks.length),
    }),
  ];
  return { alreadySharded: false, collection, chunks, changelog };
}

function splitRequest(args: ShardCollectionArgs, key: ShardKeyPattern, layout: InitialChunksLayout): InitialSplitRequest {
  checkShardKeyAgainstZones(args.key, layout.zones);
  return {
    key,
    primaryShard: layout.primaryShard,
    shards: layout.shards,
    collectionIsEmpty: layout.collectionIsEmpty,
    numInitialChunks: args.numInitialChunks ?? 0,
    presplitHashedZones: args.presplitHashedZones ?? false,
    zones: layout.zones,
    shardZones: layout.shardZones,
  };
}

function checkCollectionOptions(ns: string, options: Doc): void {
  if (options.capped === true) throw new MongoError(ErrorCodes.InvalidOptions, "can't shard a capped collection");
  // Routers would have to merge and target under the collection's collation (MongoDB keeps it in
  // config.collections as defaultCollation); docshard's routers compare as bytes.
  if (options.collation !== undefined) {
    throw new MongoError(ErrorCodes.NotImplemented, `Sharding ${ns}, which has a default collation, is not implemented in docshard`);
  }
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
