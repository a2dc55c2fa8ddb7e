import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, ObjectId, Timestamp, UUID } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import {
  checkChunksInconsistencies, checkCollectionMetadataInconsistencies, checkHiddenShardedCollections, checkIndexesInconsistencies,
  checkZonesInconsistencies, type LocalCollection,
} from './metadata_consistency.js';
import type { ZoneRangeType } from './zones.js';

const ts = new Timestamp({ t: 1, i: 1 });
const uuid = new UUID();
const db: DatabaseType = { _id: 'app', primary: 'shard0', version: { uuid: new UUID(), timestamp: ts, lastMod: 1 } };
const coll: CollectionType = { _id: 'app.users', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp: ts, uuid, key: { k: 1 }, unique: false };

function chunk(min: Doc, max: Doc, shard = 'shard0'): ChunkType {
  return { _id: new ObjectId(), uuid, min, max, shard, lastmod: ts, onCurrentShardSince: ts, history: [] };
}

function local(name: string, id = uuid, indexKeys: Doc[] = [{ _id: 1 }, { k: 1 }]): LocalCollection {
  return { name, uuid: id, indexKeys };
}

const types = (found: { type: string }[]): string[] => found.map((i) => i.type);

test('a routing table from MinKey to MaxKey without gaps is consistent', () => {
  const chunks = [chunk({ k: new MinKey() }, { k: 0 }), chunk({ k: 0 }, { k: 10 }, 'shard1'), chunk({ k: 10 }, { k: new MaxKey() })];
  assert.deepEqual(checkChunksInconsistencies(coll, chunks), []);
});

test('a gap and an overlap between consecutive chunks name both chunks', () => {
  const a = chunk({ k: new MinKey() }, { k: 0 });
  const b = chunk({ k: 5 }, { k: 20 });
  const c = chunk({ k: 10 }, { k: new MaxKey() });
  const found = checkChunksInconsistencies(coll, [a, b, c]);
  assert.deepEqual(types(found), ['RoutingTableRangeGap', 'RoutingTableRangeOverlap']);
  assert.deepEqual(found[0]!.details, { namespace: 'app.users', collectionUUID: uuid, chunkA: a, chunkB: b });
  assert.equal(found[0]!.description, 'Found a gap between two consecutive chunks');
  assert.deepEqual(found[1]!.details, { namespace: 'app.users', collectionUUID: uuid, chunkA: b, chunkB: c });
});

test('a table that starts after MinKey or ends before MaxKey says which end is missing', () => {
  const found = checkChunksInconsistencies(coll, [chunk({ k: 0 }, { k: 10 })]);
  assert.deepEqual(types(found), ['RoutingTableMissingMinKey', 'RoutingTableMissingMaxKey']);
  assert.deepEqual(found[0]!.details, { namespace: 'app.users', collectionUUID: uuid, minKeyObj: { k: 0 }, globalMin: { k: new MinKey() } });
  assert.deepEqual(found[1]!.details, { namespace: 'app.users', collectionUUID: uuid, maxKeyObj: { k: 10 }, globalMax: { k: new MaxKey() } });
});

test('a collection without chunks has no routing table', () => {
  assert.deepEqual(checkChunksInconsistencies(coll, []), [{
    type: 'MissingRoutingTable', description: 'Found sharded collection without any chunk', details: { namespace: 'app.users', collectionUUID: uuid },
  }]);
});

test('a chunk bound of other fields than the shard key is corrupted, except the first chunk, which MongoDB does not check', () => {
  const bad = chunk({ x: 0 }, { k: new MaxKey() });
  const found = checkChunksInconsistencies(coll, [chunk({ k: new MinKey() }, { k: 0 }), bad]);
  assert.ok(types(found).includes('CorruptedChunkShardKey'));
  assert.deepEqual(found.find((i) => i.type === 'CorruptedChunkShardKey')!.details, { namespace: 'app.users', collectionUUID: uuid, chunk: bad, shardKeyPattern: { k: 1 } });
  assert.ok(!types(checkChunksInconsistencies(coll, [chunk({ x: new MinKey() }, { k: new MaxKey() })])).includes('CorruptedChunkShardKey'));
});

test('a shard whose collections agree with the catalog is consistent', () => {
  const found = checkCollectionMetadataInconsistencies({
    shardId: 'shard1', primaryShardId: 'shard0', db: 'app', catalogCollections: [coll], localCollections: [local('users')], ownedNamespaces: new Set(['app.users']),
  });
  assert.deepEqual(found, []);
});

test('an unsharded collection is misplaced on any shard but the primary', () => {
  const other = new UUID();
  const check = { primaryShardId: 'shard0', db: 'app', catalogCollections: [coll], localCollections: [local('users'), local('logs', other)], ownedNamespaces: new Set<string>() };
  assert.deepEqual(checkCollectionMetadataInconsistencies({ ...check, shardId: 'shard0' }), []);
  const found = checkCollectionMetadataInconsistencies({ ...check, shardId: 'shard1' });
  assert.deepEqual(found, [{
    type: 'MisplacedCollection', description: 'Unsharded collection found on shard different from database primary shard',
    details: { namespace: 'app.logs', shard: 'shard1', localUUID: other },
  }]);
});

test('a sharded collection with another UUID on a shard is a UUID mismatch, on the primary too', () => {
  const other = new UUID();
  const found = checkCollectionMetadataInconsistencies({
    shardId: 'shard0', primaryShardId: 'shard0', db: 'app', catalogCollections: [coll], localCollections: [local('users', other)], ownedNamespaces: new Set(),
  });
  assert.deepEqual(found, [{
    type: 'CollectionUUIDMismatch', description: 'Found collection on non primary shard with mismatching UUID',
    details: { namespace: 'app.users', shard: 'shard0', localUUID: other, uuid },
  }]);
});

test('the shard key index is missing only where the shard owns chunks', () => {
  const check = { shardId: 'shard1', primaryShardId: 'shard0', db: 'app', catalogCollections: [coll], localCollections: [local('users', uuid, [{ _id: 1 }, { k: -1 }])] };
  assert.deepEqual(checkCollectionMetadataInconsistencies({ ...check, ownedNamespaces: new Set() }), []);
  assert.deepEqual(checkCollectionMetadataInconsistencies({ ...check, ownedNamespaces: new Set(['app.users']) }), [{
    type: 'MissingShardKeyIndex', description: 'Found sharded collection without a shard key index',
    details: { namespace: 'app.users', shard: 'shard1', shardKey: { k: 1 } },
  }]);
  const prefixed = { ...check, localCollections: [local('users', uuid, [{ _id: 1 }, { k: 1, x: 1 }])] };
  assert.deepEqual(checkCollectionMetadataInconsistencies({ ...prefixed, ownedNamespaces: new Set(['app.users']) }), []);
});

test('a sharded collection whose database is gone is hidden; the config database has no entry and is never gone', () => {
  const orphan: CollectionType = { ...coll, _id: 'gone.users' };
  const sessions: CollectionType = { ...coll, _id: 'config.system.sessions', key: { _id: 1 } };
  const found = checkHiddenShardedCollections([db], [coll, orphan, sessions]);
  assert.deepEqual(found, [{
    type: 'HiddenShardedCollection', description: 'Found sharded collection but relative database does not exist',
    details: { namespace: 'gone.users', collection: orphan },
  }]);
});

function zone(min: Doc, max: Doc, tag = 'z'): ZoneRangeType {
  return { _id: new ObjectId(), ns: 'app.users', tag, min, max };
}

test('zone ranges that touch or leave room between them are consistent', () => {
  const zones = [zone({ k: new MinKey() }, { k: 0 }), zone({ k: 0 }, { k: 10 }, 'y'), zone({ k: 20 }, { k: new MaxKey() })];
  assert.deepEqual(checkZonesInconsistencies(coll, zones), []);
  assert.deepEqual(checkZonesInconsistencies(coll, []), []);
});

test('two overlapping zones name both ranges as TagsType shows them, without their _id', () => {
  const a = zone({ k: -100 }, { k: 100 }, 'a');
  const b = zone({ k: 50 }, { k: 150 }, 'b');
  assert.deepEqual(checkZonesInconsistencies(coll, [a, b]), [{
    type: 'ZonesRangeOverlap', description: 'Found two overlapping zones',
    details: {
      namespace: 'app.users', collectionUUID: uuid,
      zoneA: { ns: 'app.users', tag: 'a', min: { k: -100 }, max: { k: 100 } },
      zoneB: { ns: 'app.users', tag: 'b', min: { k: 50 }, max: { k: 150 } },
    },
  }]);
});

test('a zone bound of other fields than the shard key is corrupted, except the first zone, which MongoDB does not check', () => {
  const found = checkZonesInconsistencies(coll, [zone({ k: 0 }, { k: 10 }), zone({ k: 10 }, { x: 20 })]);
  assert.deepEqual(found, [{
    type: 'CorruptedZoneShardKey', description: 'Found zone with a shard key pattern violation',
    details: { namespace: 'app.users', collectionUUID: uuid, zone: { ns: 'app.users', tag: 'z', min: { k: 10 }, max: { x: 20 } }, shardKeyPattern: { k: 1 } },
  }]);
  assert.deepEqual(checkZonesInconsistencies(coll, [zone({ x: 0 }, { x: 10 })]), []);
});

const idIndex = { v: 2, key: { _id: 1 }, name: '_id_' };
const kIndex = { v: 2, key: { k: 1 }, name: 'k_1' };

test('the same indexes on every shard that owns chunks are consistent', () => {
  assert.deepEqual(checkIndexesInconsistencies('app.users', [
    { shard: 'shard0', indexes: [idIndex, kIndex] }, { shard: 'shard1', indexes: [kIndex, idIndex] },
  ]), []);
});

test('an index missing on a shard names that shard, and a shard without the collection is not counted', () => {
  const a1 = { v: 2, key: { a: 1 }, name: 'index1' };
  const found = checkIndexesInconsistencies('app.users', [
    { shard: 'shard0', indexes: [idIndex, kIndex, a1] }, { shard: 'shard1', indexes: [idIndex, kIndex] }, { shard: 'shard2', indexes: [] },
  ]);
  assert.deepEqual(found, [{
    type: 'InconsistentIndex', description: 'Found an index of a sharded collection that is inconsistent between different shards',
    details: { namespace: 'app.users', info: { missingFromShards: ['shard1'], inconsistentProperties: [], indexName: 'index1' } },
  }]);
});

test('an index whose options differ between shards lists the {k, v} pairs not every shard has, in BSON order', () => {
  const found = checkIndexesInconsistencies('app.users', [
    { shard: 'shard0', indexes: [idIndex, { v: 2, key: { a: 1 }, name: 'index1', sparse: true, expireAfterSeconds: 3600 }] },
    { shard: 'shard1', indexes: [idIndex, { v: 2, key: { a: 1 }, name: 'index1', sparse: true }] },
    { shard: 'shard2', indexes: [idIndex, { v: 2, key: { a: -1 }, name: 'index1', sparse: true }] },
  ]);
  assert.deepEqual(found.map((i) => i.details), [{
    namespace: 'app.users',
    info: {
      missingFromShards: [],
      inconsistentProperties: [{ k: 'expireAfterSeconds', v: 3600 }, { k: 'key', v: { a: -1 } }, { k: 'key', v: { a: 1 } }],
      indexName: 'index1',
    },
  }]);
});
