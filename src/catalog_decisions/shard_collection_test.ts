import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import type { CollectionType } from '../catalog/type_chunk.js';
import {
  checkShardCollectionArgs, decideShardCollection, translateShardCollection, type InitialChunksLayout, type ShardCollectionRequest,
  type ShardCollectionTranslationRequest,
} from './shard_collection.js';

const now = new Timestamp({ t: 300, i: 2 });
const wall = new Date('2024-05-01T10:00:00.000Z');
const epoch = new ObjectId('65a000000000000000000001');
const uuid = new UUID('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
const log = { server: 'cfg:27019', clientAddr: '127.0.0.1:5000', time: wall, newId: () => new ObjectId('65a0000000000000000000ff') };
const layout: InitialChunksLayout = { primaryShard: 's0', shards: ['s0', 's1'], zones: [], shardZones: { s0: [], s1: [] }, collectionIsEmpty: true };

function commit(over: Partial<ShardCollectionRequest>): ShardCollectionRequest {
  return {
    ns: 'db.users', key: { a: 1 }, unique: false, layout, uuid, existing: undefined, knownShards: ['s0', 's1'],
    newEpoch: epoch, now, chunkIdFactory: () => new ObjectId(), log, ...over,
  };
}

function translation(over: Partial<ShardCollectionTranslationRequest>): ShardCollectionTranslationRequest {
  return { ns: 'db.users', key: { a: 1 }, unique: false, layout, options: {}, existingIndexes: [{ v: 2, key: { _id: 1 }, name: '_id_' }], ...over };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

test('sharding an empty collection on a range key builds the key index and gives no other shard chunks', () => {
  assert.deepEqual(translateShardCollection(translation({})), { dataShards: [], createIndex: { key: { a: 1 }, name: 'a_1' } });
});

test('a hashed key on an empty collection presplits over every shard: the others are data shards', () => {
  assert.deepEqual(translateShardCollection(translation({ key: { h: 'hashed' }, layout: { ...layout, shards: ['s2', 's0', 's1'] } })).dataShards, ['s1', 's2']);
});

test('the commit writes the entry and the chunks of the layout, with the primary shard\'s UUID', () => {
  const d = decideShardCollection(commit({}));
  assert.equal(d.alreadySharded, false);
  assert.deepEqual(d.collection, { _id: 'db.users', lastmodEpoch: epoch, lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false, noBalance: false });
  assert.equal(d.chunks.length, 1);
  assert.equal(d.chunks[0]!.shard, 's0');
});

test('the commit lays out the chunks from the persisted layout, refusing a shard removed since', () => {
  const d = decideShardCollection(commit({ key: { h: 'hashed' }, layout: { ...layout, shards: ['s0', 's1', 's2'] }, knownShards: ['s0', 's1', 's2', 's3'] }));
  assert.deepEqual([...new Set(d.chunks.map((c) => c.shard))], ['s0', 's1', 's2'], 's3, added since, gets none');
  assert.throws(() => decideShardCollection(commit({ key: { h: 'hashed' }, knownShards: ['s0'] })), code(70, /^Shard s1 not found$/));
});

test('shardCollection logs start and end with MongoDB details, as the primary shard', () => {
  const [start, end] = decideShardCollection(commit({ key: { h: 'hashed' } })).changelog;
  assert.deepEqual(start, {
    _id: 'cfg:27019-2024-05-01T10:00:00.000+00:00-65a0000000000000000000ff', server: 'cfg:27019', shard: 's0',
    clientAddr: '127.0.0.1:5000', time: wall, what: 'shardCollection.start', ns: 'db.users',
    details: { shardKey: { h: 'hashed' }, collection: 'db.users', primary: 's0' },
  });
  assert.equal(end!.what, 'shardCollection.end');
  assert.deepEqual(end!.details, { uuid, version: `1|3||${epoch.toHexString()}||Timestamp(300, 2)`, empty: true, numChunks: Long.fromNumber(4) });
});

test('a unique key is recorded and its index built unique', () => {
  assert.equal(decideShardCollection(commit({ unique: true })).collection.unique, true);
  assert.deepEqual(translateShardCollection(translation({ unique: true })).createIndex, { key: { a: 1 }, name: 'a_1', unique: true });
});

test('an existing usable index means no index to build', () => {
  const t = translateShardCollection(translation({ layout: { ...layout, collectionIsEmpty: false }, existingIndexes: [{ v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' }] }));
  assert.equal('createIndex' in t, false);
});

test('a non-empty collection without an index on the key is refused', () => {
  assert.throws(() => translateShardCollection(translation({ layout: { ...layout, collectionIsEmpty: false } })), code(72, /^Please create an index that starts with the proposed shard key before sharding the collection/));
});

test('a capped collection or one with a default collation is refused', () => {
  assert.throws(() => translateShardCollection(translation({ options: { capped: true, size: 4096 } })), code(72, /^can't shard a capped collection$/));
  assert.throws(() => translateShardCollection(translation({ options: { collation: { locale: 'fr' } } })), code(238));
});

test('a hashed key cannot be unique', () => {
  assert.throws(() => checkShardCollectionArgs({ ns: 'db.users', key: { _id: 'hashed' }, unique: true }), code(72, /^Hashed shard keys cannot be declared unique/));
});

test('an invalid key pattern is BadValue', () => {
  assert.throws(() => checkShardCollectionArgs({ ns: 'db.users', key: { a: -1 }, unique: false }), code(2));
});

test('the commit run again, the collection sharded with the same UUID, key and uniqueness, changes nothing', () => {
  const existing: CollectionType = { _id: 'db.users', lastmodEpoch: new ObjectId(), lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false };
  const d = decideShardCollection(commit({ existing, key: { a: 1.0 } }));
  assert.equal(d.alreadySharded, true);
  assert.equal(d.collection, existing);
  assert.deepEqual(d.chunks, []);
  assert.deepEqual(d.changelog, []);
});

test('a collection sharded with another key, uniqueness or UUID is AlreadyInitialized', () => {
  const existing: CollectionType = { _id: 'db.users', lastmodEpoch: new ObjectId(), lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false };
  assert.throws(() => decideShardCollection(commit({ existing, key: { b: 1 } })), code(23, /^sharding already enabled for collection db\.users$/));
  assert.throws(() => decideShardCollection(commit({ existing, unique: true })), code(23));
  assert.throws(() => decideShardCollection(commit({ existing, uuid: new UUID() })), code(23));
});

test('config collections other than system.sessions and system collections cannot be sharded', () => {
  const check = (ns: string, key: Record<string, number> = { a: 1 }): unknown => checkShardCollectionArgs({ ns, key, unique: false });
  assert.throws(() => check('config.chunks'), code(20, /only special collections in the config db may be sharded/));
  assert.throws(() => check('db.system.views'), code(20, /can't shard system namespaces/));
  assert.doesNotThrow(() => check('config.system.sessions', { _id: 1 }));
});
