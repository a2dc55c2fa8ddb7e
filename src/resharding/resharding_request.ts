import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import { isPlainObject, type Doc } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { initialSplit, type InitialChunkRange } from '../catalog_decisions/initial_chunks.js';
import { checkShardKeyAgainstZones, type ZoneRange } from '../catalog_decisions/zones.js';
import { isUnsplittable, type ReshardingProvenance } from './move_collection_request.js';

// What reshardCollection asks (mongosh's sh.reshardCollection(ns, key, unique, options) sends it).
export interface ReshardCollectionRequest {
  readonly ns: string;
  readonly key: Doc;
  readonly unique: boolean;
  readonly numInitialChunks?: number;
  readonly zones?: readonly ZoneRange[];
  readonly forceRedistribution: boolean;
  readonly collation?: Doc;
  // moveCollection and unshardCollection (move_collection_request.ts): absent, reshardCollection.
  readonly provenance?: ReshardingProvenance;
  readonly toShard?: string;
}

export interface ReshardingFacts {
  readonly collection: CollectionType | undefined;
  readonly chunks: readonly ChunkType[];
  readonly shards: readonly ShardType[];
  readonly primaryShard: string;
  // The collection's zones now (config.tags): the new key's when the request names none.
  readonly zones: readonly ZoneRange[];
}

export type ReshardingDecision =
  // The collection has that key already and no redistribution was asked: nothing to do (7.2+).
  | { readonly kind: 'noop' }
  | {
    readonly kind: 'reshard';
    readonly collection: CollectionType;
    readonly donorShards: string[];
    readonly recipientShards: string[];
    readonly newChunks: InitialChunkRange[];
    readonly zones: readonly ZoneRange[];
  };

// _configsvrReshardCollection's checks and the layout of the new key's first chunks, decided
// before anything is persisted, so that a refused request changes nothing.
export function decideReshardCollection(req: ReshardCollectionRequest, facts: ReshardingFacts): ReshardingDecision {
  if (req.unique) throw new MongoError(ErrorCodes.BadValue, 'The unique field must be false');
  if (req.collation !== undefined && !(Object.keys(req.collation).length === 1 && req.collation.locale === 'simple')) {
    throw new MongoError(ErrorCodes.BadValue, `The collation for reshardCollection must be {locale: 'simple'}, but found: ${JSON.stringify(req.collation)}`);
  }
  const key = new ShardKeyPattern(req.key);
  const collection = facts.collection;
  if (collection === undefined || isUnsplittable(collection)) throw new MongoError(ErrorCodes.NamespaceNotSharded, `Collection ${req.ns} is not sharded`);
  if (compareValues(collection.key, req.key) === 0 && !req.forceRedistribution) return { kind: 'noop' };
  // As MongoDB: zones given replace the collection's (none: no zones under the new key); not
  // given, the collection's own must fit the new key.
  const zones = req.zones ?? facts.zones;
  checkShardKeyAgainstZones(req.key, zones);
  const shardIds = facts.shards.filter((s) => s.draining !== true).map((s) => s._id);
  const shardZones = Object.fromEntries(facts.shards.map((s) => [s._id, s.tags ?? []]));
  const newChunks = initialSplit({
    key, primaryShard: facts.primaryShard, shards: shardIds, collectionIsEmpty: true, numInitialChunks: req.numInitialChunks ?? 0,
    presplitHashedZones: false, zones, shardZones,
  });
  return {
    kind: 'reshard',
    collection,
    donorShards: distinct(facts.chunks.map((c) => c.shard)),
    recipientShards: distinct(newChunks.map((c) => c.shard)),
    newChunks,
    zones,
  };
}

// reshardCollection's zones: [{min, max, zone}], as config.tags holds them without the namespace.
export function parseZones(raw: unknown): ZoneRange[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) throw new MongoError(ErrorCodes.TypeMismatch, 'zones must be an array');
  return raw.map((z) => {
    if (!isPlainObject(z) || !isPlainObject(z.min) || !isPlainObject(z.max) || typeof z.zone !== 'string') {
      throw new MongoError(ErrorCodes.TypeMismatch, 'each zone must be {min: <document>, max: <document>, zone: <string>}');
    }
    return { tag: z.zone, min: z.min, max: z.max };
  });
}

// Where a recipient builds the collection before the commit renames it (MongoDB's name for it).
export function temporaryReshardingNamespace(ns: string, sourceUUIDHex: string): string {
  const db = ns.slice(0, ns.indexOf('.'));
  const hex = sourceUUIDHex.replace(/-/g, '');
  return `${db}.system.resharding.${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function distinct(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort();
}
