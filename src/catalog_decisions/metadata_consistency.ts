import type { Binary } from 'bson';
import { compareValues, valuesEqual } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import type { ZoneRangeType } from './zones.js';

// checkMetadataConsistency's checks (MongoDB 7.0's metadata_consistency_util and
// metadata_consistency_types.idl): each takes catalog documents and what a shard holds and returns
// the inconsistencies, `{type, description, details}`, with MongoDB's names and detail shapes.

// A type, not an interface, so that it is a Doc to whoever sends it.
export type MetadataInconsistency = {
  type: string;
  description: string;
  details: Doc;
};

const DESCRIPTIONS = {
  CollectionUUIDMismatch: 'Found collection on non primary shard with mismatching UUID',
  CorruptedChunkShardKey: 'Found chunk with a shard key pattern violation',
  CorruptedZoneShardKey: 'Found zone with a shard key pattern violation',
  HiddenShardedCollection: 'Found sharded collection but relative database does not exist',
  InconsistentIndex: 'Found an index of a sharded collection that is inconsistent between different shards',
  MisplacedCollection: 'Unsharded collection found on shard different from database primary shard',
  MissingRoutingTable: 'Found sharded collection without any chunk',
  MissingShardKeyIndex: 'Found sharded collection without a shard key index',
  RoutingTableMissingMaxKey: 'Routing table has a gap because last chunk boundary does not reach MaxKey',
  RoutingTableMissingMinKey: 'Routing table has a gap because first chunk does not start from MinKey',
  RoutingTableRangeGap: 'Found a gap between two consecutive chunks',
  RoutingTableRangeOverlap: 'Found two overlapping consecutive chunks',
  ZonesRangeOverlap: 'Found two overlapping zones',
} as const;

function inconsistency(type: keyof typeof DESCRIPTIONS, details: Doc): MetadataInconsistency {
  return { type, description: DESCRIPTIONS[type], details };
}

// A collection as a shard's local catalog has it: its name within the database, its UUID and the
// key patterns of its indexes.
export interface LocalCollection {
  name: string;
  uuid: Binary;
  indexKeys: readonly Doc[];
}

export interface ShardCollectionsCheck {
  shardId: string;
  // The primary shard of the database, the only one that may hold its unsharded collections.
  primaryShardId: string;
  db: string;
  // config.collections entries of the database (or of the one collection checked).
  catalogCollections: readonly CollectionType[];
  localCollections: readonly LocalCollection[];
  // The sharded collections (by namespace) this shard owns chunks of.
  ownedNamespaces: ReadonlySet<string>;
}

// What the shard's local catalog contradicts in config.collections. A collection the config
// server does not know is an unsharded one, which belongs on the primary shard alone. The shard
// key index is required only where chunks are owned: a shard that owns none takes part in no
// createIndexes, so MongoDB does not hold one without it to the key's index either.
export function checkCollectionMetadataInconsistencies(check: ShardCollectionsCheck): MetadataInconsistency[] {
  const { shardId, primaryShardId } = check;
  const catalog = new Map(check.catalogCollections.map((c) => [c._id, c]));
  const out: MetadataInconsistency[] = [];
  for (const local of [...check.localCollections].sort((a, b) => compareStringsBinary(a.name, b.name))) {
    const ns = `${check.db}.${local.name}`;
    const coll = catalog.get(ns);
    if (!coll) {
      if (shardId !== primaryShardId) out.push(inconsistency('MisplacedCollection', { namespace: ns, shard: shardId, localUUID: local.uuid }));
      continue;
    }
    if (!valuesEqual(coll.uuid, local.uuid)) {
      out.push(inconsistency('CollectionUUIDMismatch', { namespace: ns, shard: shardId, localUUID: local.uuid, uuid: coll.uuid }));
    }
    const key = new ShardKeyPattern(coll.key);
    if (check.ownedNamespaces.has(ns) && !local.indexKeys.some((k) => key.isShardKeyPrefixOf(k))) {
      out.push(inconsistency('MissingShardKeyIndex', { namespace: ns, shard: shardId, shardKey: coll.key }));
    }
  }
  return out;
}

// The routing table of one collection: its chunks, sorted by min, must cover the key space from
// MinKey to MaxKey without gaps or overlaps, each bound a key of the collection's pattern.
export function checkChunksInconsistencies(collection: CollectionType, sortedChunks: readonly ChunkType[]): MetadataInconsistency[] {
  const ns = collection._id;
  const collectionUUID = collection.uuid;
  const key = new ShardKeyPattern(collection.key);
  const out: MetadataInconsistency[] = [];
  if (sortedChunks.length === 0) return [inconsistency('MissingRoutingTable', { namespace: ns, collectionUUID })];
  // MongoDB compares each chunk with the one before it, so the first chunk's bounds go unchecked.
  for (let i = 1; i < sortedChunks.length; i++) {
    const prev = sortedChunks[i - 1]!;
    const chunk = sortedChunks[i]!;
    if (!key.isShardKey(chunk.min) || !key.isShardKey(chunk.max)) {
      out.push(inconsistency('CorruptedChunkShardKey', { namespace: ns, collectionUUID, chunk, shardKeyPattern: collection.key }));
    }
    const cmp = compareValues(prev.max, chunk.min);
    if (cmp < 0) out.push(inconsistency('RoutingTableRangeGap', { namespace: ns, collectionUUID, chunkA: prev, chunkB: chunk }));
    else if (cmp > 0) out.push(inconsistency('RoutingTableRangeOverlap', { namespace: ns, collectionUUID, chunkA: prev, chunkB: chunk }));
  }
  const minKeyObj = sortedChunks[0]!.min;
  const globalMin = key.globalMin();
  if (compareValues(minKeyObj, globalMin) !== 0) {
    out.push(inconsistency('RoutingTableMissingMinKey', { namespace: ns, collectionUUID, minKeyObj, globalMin }));
  }
  const maxKeyObj = sortedChunks[sortedChunks.length - 1]!.max;
  const globalMax = key.globalMax();
  if (compareValues(maxKeyObj, globalMax) !== 0) {
    out.push(inconsistency('RoutingTableMissingMaxKey', { namespace: ns, collectionUUID, maxKeyObj, globalMax }));
  }
  return out;
}

// The zone ranges of one collection (config.tags, sorted by min) must not overlap, each bound a key
// of the collection's pattern. A zone is shown as MongoDB's TagsType serializes it: {ns, tag, min,
// max}, without its _id. These details name the collection `namespace`, as 7.0's documentation
// of both types shows them.
export function checkZonesInconsistencies(collection: CollectionType, sortedZones: readonly ZoneRangeType[]): MetadataInconsistency[] {
  const namespace = collection._id;
  const collectionUUID = collection.uuid;
  const key = new ShardKeyPattern(collection.key);
  const out: MetadataInconsistency[] = [];
  // As with chunks, MongoDB compares each zone with the one before it: the first one's bounds go unchecked.
  for (let i = 1; i < sortedZones.length; i++) {
    const prev = zoneDoc(sortedZones[i - 1]!);
    const zone = zoneDoc(sortedZones[i]!);
    if (!key.isShardKey(zone.min) || !key.isShardKey(zone.max)) {
      out.push(inconsistency('CorruptedZoneShardKey', { namespace, collectionUUID, zone, shardKeyPattern: collection.key }));
    }
    // Touching ranges (max equal to the next min) are the normal case, not an overlap.
    if (compareValues(prev.max, zone.min) > 0) {
      out.push(inconsistency('ZonesRangeOverlap', { namespace, collectionUUID, zoneA: prev, zoneB: zone }));
    }
  }
  return out;
}

function zoneDoc(zone: ZoneRangeType): { ns: string; tag: string; min: Doc; max: Doc } {
  return { ns: zone.ns, tag: zone.tag, min: zone.min, max: zone.max };
}

// The indexes of one sharded collection on each shard that owns chunks of it (as $indexStats
// reaches them), with their specs as listIndexes answers them.
export interface ShardIndexes {
  shard: string;
  indexes: readonly Doc[];
}

// MongoDB's checkIndexes pipeline, index by index name: a shard that has any index of the
// collection but not this one is in missingFromShards, and a {k, v} pair of the spec that some
// shard's spec has and another's lacks is in inconsistentProperties. Only shards that have the
// collection take part, since $indexStats finds no index on the others. MongoDB's $group leaves
// the order of indexes and shards unspecified; here both are by name, and the properties in BSON
// order, as its $setUnion sorts them.
export function checkIndexesInconsistencies(namespace: string, shards: readonly ShardIndexes[]): MetadataInconsistency[] {
  const allShards = shards.filter((s) => s.indexes.length > 0).map((s) => s.shard).sort(compareStringsBinary);
  const byName = new Map<string, { shards: string[]; specs: Doc[][] }>();
  for (const { shard, indexes } of shards) {
    for (const spec of indexes) {
      const name = String(spec.name);
      const entry = byName.get(name) ?? { shards: [], specs: [] };
      entry.shards.push(shard);
      entry.specs.push(Object.entries(spec).map(([k, v]) => ({ k, v })));
      byName.set(name, entry);
    }
  }
  const out: MetadataInconsistency[] = [];
  for (const indexName of [...byName.keys()].sort(compareStringsBinary)) {
    const { shards: holders, specs } = byName.get(indexName)!;
    const missingFromShards = allShards.filter((s) => !holders.includes(s));
    const union = uniqueValues(specs.flat()).sort(compareValues);
    const inconsistentProperties = union.filter((p) => !specs.every((spec) => spec.some((q) => valuesEqual(p, q))));
    if (missingFromShards.length > 0 || inconsistentProperties.length > 0) {
      out.push(inconsistency('InconsistentIndex', { namespace, info: { missingFromShards, inconsistentProperties, indexName } }));
    }
  }
  return out;
}

function uniqueValues(values: readonly Doc[]): Doc[] {
  const out: Doc[] = [];
  for (const v of values) if (!out.some((u) => valuesEqual(u, v))) out.push(v);
  return out;
}

// Sharded collections whose database config.databases no longer has: no router can reach them.
// The config database has no entry there and always exists (config.system.sessions is sharded).
export function checkHiddenShardedCollections(databases: readonly DatabaseType[], collections: readonly CollectionType[]): MetadataInconsistency[] {
  const names = new Set(['config', ...databases.map((d) => d._id)]);
  return collections
    .filter((c) => !names.has(c._id.slice(0, c._id.indexOf('.'))))
    .map((c) => inconsistency('HiddenShardedCollection', { namespace: c._id, collection: c as unknown as Doc }));
}

function compareStringsBinary(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
