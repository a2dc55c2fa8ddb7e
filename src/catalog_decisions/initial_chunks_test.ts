import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { hashedSplitPoints, initialChunks, type InitialChunksRequest } from './initial_chunks.js';

const now = new Timestamp({ t: 200, i: 3 });
const uuid = new UUID();

function request(pattern: Doc, over: Partial<InitialChunksRequest> = {}): InitialChunksRequest {
  return {
    key: new ShardKeyPattern(pattern), uuid, primaryShard: 's1', shards: ['s2', 's0', 's1'], collectionIsEmpty: true,
    numInitialChunks: 0, presplitHashedZones: false, now, chunkIdFactory: () => new ObjectId(), ...over,
  };
}

function hashes(points: Doc[]): string[] {
  return points.map((p) => (p.x as Long).toString());
}

function invalidOptions(message: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === 72 && message.test(err.message);
}

test('hashed split points cut the hash space evenly and symmetrically around zero', () => {
  const key = new ShardKeyPattern({ x: 'hashed' });
  assert.deepEqual(hashes(hashedSplitPoints(key, 4)), ['-4611686018427387902', '0', '4611686018427387902']);
  assert.deepEqual(hashes(hashedSplitPoints(key, 3)), ['-3074457345618258602', '3074457345618258602']);
  assert.deepEqual(hashedSplitPoints(key, 1), []);
  assert.ok(hashedSplitPoints(key, 4).every((p) => p.x instanceof Long));
});

test('fields after the hashed one are MinKey in every split point', () => {
  const points = hashedSplitPoints(new ShardKeyPattern({ x: 'hashed', y: 1 }), 2);
  assert.deepEqual(points, [{ x: Long.fromNumber(0), y: new MinKey() }]);
});

test('a range key starts as one chunk over the whole key space on the primary shard', () => {
  const [chunk, ...rest] = initialChunks(request({ a: 1, b: 1 }));
  assert.equal(rest.length, 0);
  assert.deepEqual(chunk!.min, { a: new MinKey(), b: new MinKey() });
  assert.deepEqual(chunk!.max, { a: new MaxKey(), b: new MaxKey() });
  assert.equal(chunk!.shard, 's1');
  assert.deepEqual(chunk!.lastmod, new Timestamp({ t: 1, i: 0 }));
  assert.deepEqual(chunk!.history, [{ validAfter: now, shard: 's1' }]);
  assert.equal(chunk!.onCurrentShardSince, now);
  assert.equal(chunk!.uuid, uuid);
});

test('a hashed key on an empty collection gets two chunks per shard, in runs on shards sorted by id', () => {
  const chunks = initialChunks(request({ x: 'hashed' }));
  assert.equal(chunks.length, 6);
  assert.deepEqual(chunks.map((c) => c.shard), ['s0', 's0', 's1', 's1', 's2', 's2']);
  assert.deepEqual(chunks.map((c) => c.lastmod.low), [0, 1, 2, 3, 4, 5]);
  assert.ok(chunks.every((c) => c.lastmod.high === 1));
  for (let i = 1; i < chunks.length; i++) assert.deepEqual(chunks[i]!.min, chunks[i - 1]!.max);
  assert.deepEqual(chunks[0]!.min, { x: new MinKey() });
  assert.deepEqual(chunks[5]!.max, { x: new MaxKey() });
  assert.deepEqual(chunks.map((c) => c.history[0]!.shard), chunks.map((c) => c.shard));
});

test('numInitialChunks sets the number of hashed chunks', () => {
  const chunks = initialChunks(request({ x: 'hashed' }, { numInitialChunks: 7 }));
  assert.equal(chunks.length, 7);
  assert.deepEqual(chunks.map((c) => c.shard), ['s0', 's0', 's1', 's1', 's2', 's2', 's0']);
});

test('with fewer chunks than shards the first chunk goes to the primary shard', () => {
  const chunks = initialChunks(request({ x: 'hashed' }, { numInitialChunks: 2 }));
  assert.deepEqual(chunks.map((c) => c.shard), ['s1', 's1']);
});

test('a compound key with a hashed prefix is presplit on the hashed field', () => {
  const chunks = initialChunks(request({ x: 'hashed', y: 1 }, { shards: ['s0'], primaryShard: 's0' }));
  assert.equal(chunks.length, 2);
  assert.deepEqual(chunks[0]!.max, { x: Long.fromNumber(0), y: new MinKey() });
});

test('a hashed field after a range field, or a non-empty collection, starts as one chunk', () => {
  assert.equal(initialChunks(request({ a: 1, x: 'hashed' })).length, 1);
  assert.equal(initialChunks(request({ x: 'hashed' }, { collectionIsEmpty: false })).length, 1);
});

test('numInitialChunks needs a hashed key, an empty collection and a hashed prefix', () => {
  assert.throws(() => initialChunks(request({ a: 1 }, { numInitialChunks: 4 })), invalidOptions(/only supported when the collection is empty and has a hashed field/));
  assert.throws(() => initialChunks(request({ x: 'hashed' }, { numInitialChunks: 4, collectionIsEmpty: false })), invalidOptions(/only supported when the collection is empty/));
  assert.throws(() => initialChunks(request({ a: 1, x: 'hashed' }, { numInitialChunks: 4 })), invalidOptions(/'numInitialChunks' can only be used when the 'presplitHashedZones' is true/));
});

test('numInitialChunks is bounded by 8192 per shard', () => {
  assert.throws(() => initialChunks(request({ x: 'hashed' }, { numInitialChunks: 3 * 8192 + 1 })), invalidOptions(/cannot be more than either: 24576, 8192 \* number of shards; or 1000000/));
  assert.throws(() => initialChunks(request({ x: 'hashed' }, { numInitialChunks: -1 })), invalidOptions(/cannot be more than/));
});

test('presplitHashedZones without zones fails as MongoDB does', () => {
  assert.throws(() => initialChunks(request({ x: 'hashed' }, { presplitHashedZones: true })), (err: unknown) => err instanceof MongoError && err.code === 31387);
});
