import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, BSONRegExp, Long, MinKey, ObjectId, Timestamp, type Doc } from '../bson/values.js';
import { hashValue } from '../bson/hash.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { ChunkManager } from './chunk_manager.js';
import { shardForInsert, shardsForQuery, targetUpdateOrDelete } from './targeter.js';

const uuid = new Binary(Buffer.alloc(16, 3), 4);
const timestamp = new Timestamp({ t: 5, i: 1 });

function manager(key: Doc, bounds: [Doc, string][]): ChunkManager {
  const fields = Object.keys(key);
  const max = Object.fromEntries(fields.map((f) => [f, new MaxKey()]));
  const chunks: ChunkType[] = bounds.map(([min, shard], i) => ({
    _id: new ObjectId(),
    uuid,
    min,
    max: bounds[i + 1]?.[0] ?? max,
    shard,
    lastmod: new Timestamp({ t: 1, i }),
    onCurrentShardSince: timestamp,
    history: [],
  }));
  return ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key, unique: false }, chunks);
}

// x: [MinKey, 0) s0, [0, 10) s1, [10, 20) s2, [20, MaxKey) s3
const ranged = manager({ x: 1 }, [
  [{ x: new MinKey() }, 's0'],
  [{ x: 0 }, 's1'],
  [{ x: 10 }, 's2'],
  [{ x: 20 }, 's3'],
]);

function shards(cm: ChunkManager, filter: Doc): string[] {
  return [...shardsForQuery(cm, filter)].sort();
}

test('an equality on a range key targets the one owning shard', () => {
  assert.deepEqual(shards(ranged, { x: 5 }), ['s1']);
  assert.deepEqual(shards(ranged, { x: { $eq: 10 } }), ['s2']);
  assert.deepEqual(shards(ranged, { x: 'a string' }), ['s3']);
});

test('a range targets the shards of the chunks it overlaps', () => {
  assert.deepEqual(shards(ranged, { x: { $gte: 5, $lt: 15 } }), ['s1', 's2']);
  assert.deepEqual(shards(ranged, { x: { $gt: 12 } }), ['s2', 's3']);
  assert.deepEqual(shards(ranged, { x: { $gte: 0, $lte: 9 }, y: 1 }), ['s1']);
});

test('an exclusive upper bound stops short of the chunk starting there', () => {
  assert.deepEqual(shards(ranged, { x: { $gte: 0, $lt: 10 } }), ['s1']);
  assert.deepEqual(shards(ranged, { x: { $gte: 0, $lte: 10 } }), ['s1', 's2']);
});

test('predicates in $and intersect', () => {
  assert.deepEqual(shards(ranged, { $and: [{ x: { $gte: 3 } }, { x: { $lt: 8 } }] }), ['s1']);
});

test('$in targets the owner of each value', () => {
  assert.deepEqual(shards(ranged, { x: { $in: [-5, 25] } }), ['s0', 's3']);
});

test('a top-level $or targets the union of its branches', () => {
  assert.deepEqual(shards(ranged, { $or: [{ x: 1 }, { x: { $gt: 25 } }] }), ['s1', 's3']);
  assert.deepEqual(shards(ranged, { x: { $lt: 5 }, $or: [{ x: 1 }, { x: 15 }] }), ['s1']);
});

test('a $or with a branch free of the shard key targets all shards', () => {
  assert.deepEqual(shards(ranged, { $or: [{ x: 1 }, { y: 2 }] }), ['s0', 's1', 's2', 's3']);
});

test('a filter that does not restrict the shard key targets all shards', () => {
  assert.deepEqual(shards(ranged, {}), ['s0', 's1', 's2', 's3']);
  assert.deepEqual(shards(ranged, { y: 1 }), ['s0', 's1', 's2', 's3']);
  assert.deepEqual(shards(ranged, { x: { $ne: 5 } }), ['s0', 's1', 's2', 's3']);
  assert.deepEqual(shards(ranged, { x: new BSONRegExp('^a', '') }), ['s0', 's1', 's2', 's3']);
  assert.deepEqual(shards(ranged, { $nor: [{ x: 1 }] }), ['s0', 's1', 's2', 's3']);
});

test('a filter no key can satisfy still targets one shard (SERVER-4914)', () => {
  assert.deepEqual(shards(ranged, { x: { $gt: 10, $lt: 5 } }), ['s0']);
});

test('null and missing keys live in the chunk holding null', () => {
  assert.deepEqual(shards(ranged, { x: null }), ['s0']);
  assert.equal(shardForInsert(ranged, { y: 1 }), 's0');
  assert.equal(shardForInsert(ranged, { x: null }), 's0');
});

test('MinKey and MaxKey edges: MinKey is in the first chunk, MaxKey in none', () => {
  assert.deepEqual(shards(ranged, { x: new MinKey() }), ['s0']);
  assert.deepEqual(shards(ranged, { x: new MaxKey() }), ['s3']);
  assert.deepEqual(shards(ranged, { x: { $gte: new MinKey(), $lte: new MaxKey() } }), ['s0', 's1', 's2', 's3']);
  assert.throws(() => shardForInsert(ranged, { x: new MaxKey() }), (err: unknown) => err instanceof MongoError && err.code === 61);
});

test('an insert goes to the owner of its shard key, arrays refused', () => {
  assert.equal(shardForInsert(ranged, { x: 15, y: 'a' }), 's2');
  assert.throws(() => shardForInsert(ranged, { x: [1, 2] }), (err: unknown) => err instanceof MongoError && err.code === 61);
});

// {a, b}: [MinKey..) s0, [{a: 5, b: MinKey}..) s1, [{a: 5, b: 50}..) s2, [{a: 6, b: MinKey}..) s3
const compound = manager({ a: 1, b: 1 }, [
  [{ a: new MinKey(), b: new MinKey() }, 's0'],
  [{ a: 5, b: new MinKey() }, 's1'],
  [{ a: 5, b: 50 }, 's2'],
  [{ a: 6, b: new MinKey() }, 's3'],
]);

test('a compound key: a point prefix and a range on the next field, like an index scan', () => {
  assert.deepEqual(shards(compound, { a: 5, b: { $lt: 10 } }), ['s1']);
  assert.deepEqual(shards(compound, { a: 5, b: { $gte: 40 } }), ['s1', 's2']);
  assert.deepEqual(shards(compound, { a: 5 }), ['s1', 's2']);
  assert.deepEqual(shards(compound, { a: 5, b: 60 }), ['s2']);
});

test('a compound key: a range on the prefix widens to the rest of the key', () => {
  assert.deepEqual(shards(compound, { a: { $lt: 5 } }), ['s0']);
  assert.deepEqual(shards(compound, { a: { $lte: 5 } }), ['s0', 's1', 's2']);
  // 5.5 > 5 sorts inside [{a: 5, b: 50}, {a: 6, b: MinKey}).
  assert.deepEqual(shards(compound, { a: { $gt: 5 } }), ['s2', 's3']);
  assert.deepEqual(shards(compound, { a: { $gte: 6 } }), ['s3']);
  assert.deepEqual(shards(compound, { a: { $in: [1, 6] }, b: 3 }), ['s0', 's3']);
});

test('a compound key: only the suffix restricted targets all shards', () => {
  assert.deepEqual(shards(compound, { b: 3 }), ['s0', 's1', 's2', 's3']);
});

// Hashed {h: 'hashed'}: chunks split the hash space at -2^62, 0, 2^62.
const hashed = manager({ h: 'hashed' }, [
  [{ h: new MinKey() }, 's0'],
  [{ h: Long.fromBigInt(-(2n ** 62n)) }, 's1'],
  [{ h: Long.fromBigInt(0n) }, 's2'],
  [{ h: Long.fromBigInt(2n ** 62n) }, 's3'],
]);

function hashOwner(v: unknown): string {
  return hashed.findIntersectingChunk({ h: hashValue(v) }).shard;
}

test('a hashed key: equality targets the owner of the hash', () => {
  for (const v of [1, 2, 'abc', null]) assert.deepEqual(shards(hashed, { h: v }), [hashOwner(v)]);
  assert.equal(shardForInsert(hashed, { h: 'abc' }), hashOwner('abc'));
  assert.equal(shardForInsert(hashed, {}), hashOwner(null));
});

test('a hashed key: $in targets the owners of each hash', () => {
  const values = [1, 2, 3, 4, 5, 6];
  assert.deepEqual(shards(hashed, { h: { $in: values } }), [...new Set(values.map(hashOwner))].sort());
});

test('a hashed key: a range targets all shards', () => {
  assert.deepEqual(shards(hashed, { h: { $gt: 1, $lt: 3 } }), ['s0', 's1', 's2', 's3']);
});

test('a compound key with a hashed suffix targets by the prefix', () => {
  const cm = manager({ a: 1, h: 'hashed' }, [
    [{ a: new MinKey(), h: new MinKey() }, 's0'],
    [{ a: 5, h: new MinKey() }, 's1'],
    [{ a: 5, h: Long.fromBigInt(0n) }, 's2'],
    [{ a: 6, h: new MinKey() }, 's3'],
  ]);
  assert.deepEqual(shards(cm, { a: 5 }), ['s1', 's2']);
  assert.deepEqual(shards(cm, { a: 5, h: { $gt: 3 } }), ['s1', 's2']);
  const owner = cm.findIntersectingChunk({ a: 5, h: hashValue('k') }).shard;
  assert.deepEqual(shards(cm, { a: 5, h: 'k' }), [owner]);
});

test('an update or delete with the full shard key names its key and one shard', () => {
  assert.deepEqual(targetUpdateOrDelete(ranged, { x: 12, y: 1 }, false), { shards: new Set(['s2']), exactKey: { x: 12 }, singleWriteWithoutShardKey: false });
});

test('a single-document write reaching several shards is a write without shard key', () => {
  const single = targetUpdateOrDelete(ranged, { y: 1 }, false);
  assert.equal(single.shards.size, 4);
  assert.equal(single.exactKey, undefined);
  assert.equal(single.singleWriteWithoutShardKey, true);
  assert.equal(targetUpdateOrDelete(ranged, { y: 1 }, true).singleWriteWithoutShardKey, false);
  assert.equal(targetUpdateOrDelete(ranged, { x: { $gt: 1, $lt: 3 } }, false).singleWriteWithoutShardKey, false);
});
