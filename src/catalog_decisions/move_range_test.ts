import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Int32, ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { compareValues } from '../bson/compare.js';
import { decideMoveChunk, decideMoveRange, type MoveChunkRequest, type MoveRangeRequest } from './move_range.js';

const uuid = new UUID();
const early = new Timestamp({ t: 1, i: 0 });
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp: early, uuid, key: { a: 1 }, unique: false };
const shards: ShardType[] = ['s0', 's1'].map((id) => ({ _id: id, host: `${id}:27018`, state: 1, topologyTime: early }));

function chunk(min: unknown, max: unknown, shard: string): ChunkType {
  return { _id: new ObjectId(), uuid, min: { a: min }, max: { a: max }, shard, lastmod: new Timestamp({ t: 1, i: 0 }), onCurrentShardSince: early, history: [{ validAfter: early, shard }] };
}

// s0 owns [MinKey, 0) and [10, MaxKey); s1 owns [0, 10).
const c1 = chunk(new MinKey(), 0, 's0');
const c2 = chunk(0, 10, 's1');
const c3 = chunk(10, new MaxKey(), 's0');
const chunks = [c3, c1, c2];

function range(min: Doc | undefined, max: Doc | undefined, over: Partial<MoveRangeRequest> = {}): MoveRangeRequest {
  return { collection, chunks, min, max, toShard: 's1', shards, ...over };
}

function moveChunk(over: Partial<MoveChunkRequest>): MoveChunkRequest {
  return { collection, chunks, to: 's1', shards, ...over };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

test('a whole chunk moves without split points', () => {
  const d = decideMoveRange(range({ a: 10 }, { a: new MaxKey() }));
  assert.equal(d.chunk, c3);
  assert.deepEqual(d.splitPoints, []);
  assert.deepEqual(d.migration, { ns: 'db.c', min: { a: 10 }, max: { a: new MaxKey() }, fromShard: 's0', toShard: 's1' });
});

test('a range inside a chunk names the bounds where the chunk is cut', () => {
  assert.deepEqual(decideMoveRange(range({ a: 20 }, { a: 30 })).splitPoints, [{ a: 20 }, { a: 30 }]);
  assert.deepEqual(decideMoveRange(range({ a: 10 }, { a: 30 })).splitPoints, [{ a: 30 }]);
  assert.deepEqual(decideMoveRange(range({ a: 20 }, { a: new MaxKey() })).splitPoints, [{ a: 20 }]);
});

test('without max the range runs to the end of the owning chunk', () => {
  const d = decideMoveRange(range({ a: 20 }, undefined));
  assert.deepEqual(d.migration!.max, { a: new MaxKey() });
  assert.deepEqual(d.splitPoints, [{ a: 20 }]);
});

test('a range already on the recipient is an ok no-op, whatever its max', () => {
  const d = decideMoveRange(range({ a: 5 }, { a: 500 }));
  assert.equal(d.chunk, c2);
  assert.equal(d.migration, undefined);
  assert.deepEqual(d.splitPoints, []);
});

const rangeErrors: [string, MoveRangeRequest, (e: unknown) => boolean][] = [
  ['no min', range(undefined, { a: 5 }), code(72, /^Missing required parameter 'min'$/)],
  ['an unknown shard', range({ a: 10 }, undefined, { toShard: 's9' }), code(70, /^Shard s9 not found$/)],
  ['a range across two chunks', range({ a: -5 }, { a: 5 }), code(13388, /^Range with bounds \[\{ a: -5 \}, \{ a: 5 \}\) is not contained within a chunk owned by this shard\.$/)],
  ['bounds that are not shard keys', range({ a: -5 }, { b: 5 }), code(13388, /^The range \[\{ a: -5 \}, \{ b: 5 \}\) is not valid for collection db\.c with key pattern \{ a: 1 \}$/)],
  ['min not below max', range({ a: -5 }, { a: -5 }), code(9, /^min: \{ a: -5 \} should be less than max: \{ a: -5 \}$/)],
  ['a key past the last chunk', range({ a: new MaxKey() }, undefined), code(61, /^Cannot target single shard using key \{ a: MaxKey \} for namespace db\.c$/)],
];

for (const [name, req, check] of rangeErrors) {
  test(`moveRange refuses ${name}`, () => assert.throws(() => decideMoveRange(req), check));
}

test('the donor error carries the namespace and the donor for StaleConfig handling', () => {
  assert.throws(() => decideMoveRange(range({ a: -5 }, { a: 5 })), (e: unknown) => e instanceof MongoError && e.extra.ns === 'db.c' && e.extra.shardId === 's0' &&
    (e.extra.vWanted as { v: Timestamp }).v.equals(new Timestamp({ t: 1, i: 0 })));
});

test('moveChunk with find moves the chunk holding that shard key', () => {
  const d = decideMoveChunk(moveChunk({ find: { a: 42, other: 1 } }));
  assert.deepEqual(d.migration, { ns: 'db.c', min: { a: 10 }, max: { a: new MaxKey() }, fromShard: 's0', toShard: 's1' });
  assert.deepEqual(d.splitPoints, []);
});

test('moveChunk with bounds needs a chunk\'s exact bounds, numbers compared by value', () => {
  const d = decideMoveChunk(moveChunk({ bounds: [{ a: new MinKey() }, { a: new Int32(0) }] }));
  assert.equal(d.chunk, c1);
  assert.deepEqual(d.migration!.fromShard, 's0');
});

test('moveChunk to the shard that owns the chunk is an ok no-op', () => {
  assert.equal(decideMoveChunk(moveChunk({ find: { a: 3 } })).migration, undefined);
});

const chunkErrors: [string, MoveChunkRequest, (e: unknown) => boolean][] = [
  ['three bounds', moveChunk({ bounds: [{ a: 0 }, { a: 5 }, { a: 10 }] }), code(72, /^bounds can only have exactly 2 elements$/)],
  ['find and bounds together', moveChunk({ find: { a: 1 }, bounds: [{ a: 0 }, { a: 10 }] }), code(72, /^cannot specify bounds and query at the same time$/)],
  ['neither find nor bounds', moveChunk({}), code(72, /^need to specify query or bounds$/)],
  ['an unknown shard', moveChunk({ find: { a: 1 }, to: 's9' }), code(70, /^Could not move chunk in db\.c to s9 because that shard does not exist$/)],
  ['a query without the shard key', moveChunk({ find: { b: 1 } }), code(656450, /^no shard key found in chunk query \{ b: 1 \}$/)],
  ['bounds that are not shard keys', moveChunk({ bounds: [{ b: 0 }, { a: 10 }] }), code(656451, /^shard key bounds \[\{ b: 0 \},\{ a: 10 \}\) are not valid for shard key pattern \{ a: 1 \}$/)],
  ['bounds that are not a chunk', moveChunk({ bounds: [{ a: 0 }, { a: 5 }] }), code(656452, /^no chunk found with the shard key bounds \[\{ a: 0 \}, \{ a: 5 \}\)$/)],
];

for (const [name, req, check] of chunkErrors) {
  test(`moveChunk refuses ${name}`, () => assert.throws(() => decideMoveChunk(req), check));
}

test('moveChunk find on a hashed key targets the chunk holding the hash, not the value', () => {
  const hashedColl = { ...collection, key: { a: 'hashed' } };
  const hashed = [chunk(new MinKey(), 0, 's0'), chunk(0, new MaxKey(), 's1')];
  const hashOf = (v: unknown) => new ShardKeyPattern(hashedColl.key).extractShardKeyFromQuery({ a: v })!;
  // Pick a value whose hash is negative, so that only the hash puts it in the first chunk.
  const value = ['x', 'y', 'z', 'w', 'v'].find((v) => compareValues(hashOf(v), { a: 0 }) < 0)!;
  const d = decideMoveChunk({ collection: hashedColl, chunks: hashed, find: { a: value }, to: 's1', shards });
  assert.equal(d.chunk, hashed[0]);
  assert.equal(d.migration!.fromShard, 's0');
});
