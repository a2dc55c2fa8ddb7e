import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import type { CollectionType } from '../catalog/type_chunk.js';
import { decideShardCollection, type ShardCollectionRequest } from './shard_collection.js';

const now = new Timestamp({ t: 300, i: 2 });
const wall = new Date('2024-05-01T10:00:00.000Z');
const epoch = new ObjectId('65a000000000000000000001');
const uuid = new UUID('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
const log = { server: 'cfg:27019', clientAddr: '127.0.0.1:5000', time: wall, newId: () => new ObjectId('65a0000000000000000000ff') };

function request(over: Partial<ShardCollectionRequest>): ShardCollectionRequest {
  return {
    ns: 'db.users', key: { a: 1 }, unique: false, primaryShard: 's0', shards: ['s0', 's1'], existing: undefined,
    collectionIsEmpty: true, existingIndexes: [{ v: 2, key: { _id: 1 }, name: '_id_' }], newEpoch: epoch, newUuid: uuid,
    now, chunkIdFactory: () => new ObjectId(), log, ...over,
  };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

test('sharding an empty collection writes its entry, one chunk on the primary and the key index', () => {
  const d = decideShardCollection(request({}));
  assert.equal(d.alreadySharded, false);
  assert.deepEqual(d.collection, { _id: 'db.users', lastmodEpoch: epoch, lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false, noBalance: false });
  assert.equal(d.chunks.length, 1);
  assert.equal(d.chunks[0]!.shard, 's0');
  assert.deepEqual(d.createIndex, { key: { a: 1 }, name: 'a_1' });
});

test('shardCollection logs start and end with MongoDB details, as the primary shard', () => {
  const [start, end] = decideShardCollection(request({ key: { h: 'hashed' } })).changelog;
  assert.deepEqual(start, {
    _id: 'cfg:27019-2024-05-01T10:00:00.000+00:00-65a0000000000000000000ff', server: 'cfg:27019', shard: 's0',
    clientAddr: '127.0.0.1:5000', time: wall, what: 'shardCollection.start', ns: 'db.users',
    details: { shardKey: { h: 'hashed' }, collection: 'db.users', primary: 's0' },
  });
  assert.equal(end!.what, 'shardCollection.end');
  assert.deepEqual(end!.details, { uuid, version: `1|3||${epoch.toHexString()}||Timestamp(300, 2)`, empty: true, numChunks: Long.fromNumber(4) });
});

test('a unique key is recorded and its index built unique', () => {
  const d = decideShardCollection(request({ unique: true }));
  assert.equal(d.collection.unique, true);
  assert.deepEqual(d.createIndex, { key: { a: 1 }, name: 'a_1', unique: true });
});

test('an existing usable index means no index to build', () => {
  const d = decideShardCollection(request({ collectionIsEmpty: false, existingIndexes: [{ v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' }] }));
  assert.equal('createIndex' in d, false);
});

test('a non-empty collection without an index on the key is refused', () => {
  assert.throws(() => decideShardCollection(request({ collectionIsEmpty: false })), code(72, /^Please create an index that starts with the proposed shard key before sharding the collection/));
});

test('a hashed key cannot be unique', () => {
  assert.throws(() => decideShardCollection(request({ key: { _id: 'hashed' }, unique: true })), code(72, /^Hashed shard keys cannot be declared unique/));
});

test('an invalid key pattern is BadValue', () => {
  assert.throws(() => decideShardCollection(request({ key: { a: -1 } })), code(2));
});

test('sharding again with the same key and uniqueness changes nothing', () => {
  const existing: CollectionType = { _id: 'db.users', lastmodEpoch: new ObjectId(), lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false };
  const d = decideShardCollection(request({ existing, key: { a: 1.0 } }));
  assert.equal(d.alreadySharded, true);
  assert.equal(d.collection, existing);
  assert.deepEqual(d.chunks, []);
  assert.deepEqual(d.changelog, []);
});

test('sharding again with another key or uniqueness is AlreadyInitialized', () => {
  const existing: CollectionType = { _id: 'db.users', lastmodEpoch: new ObjectId(), lastmod: wall, timestamp: now, uuid, key: { a: 1 }, unique: false };
  assert.throws(() => decideShardCollection(request({ existing, key: { b: 1 } })), code(23, /^sharding already enabled for collection db\.users$/));
  assert.throws(() => decideShardCollection(request({ existing, unique: true })), code(23));
});

test('config collections other than system.sessions and system collections cannot be sharded', () => {
  assert.throws(() => decideShardCollection(request({ ns: 'config.chunks' })), code(20, /only special collections in the config db may be sharded/));
  assert.throws(() => decideShardCollection(request({ ns: 'db.system.views' })), code(20, /can't shard system namespaces/));
  assert.doesNotThrow(() => decideShardCollection(request({ ns: 'config.system.sessions', key: { _id: 1 } })));
});
