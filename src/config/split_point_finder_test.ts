import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID } from 'bson';
import { MaxKey, MinKey, type Doc } from '../bson/values.js';
import { hashValue } from '../bson/hash.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { parseSplitForm, splitPointFor } from './split_point_finder.js';

const ts = new Timestamp({ t: 1, i: 0 });
function chunk(min: Doc, max: Doc): ChunkType {
  return { _id: new ObjectId(), uuid: new UUID(), min, max, shard: 's0', lastmod: ts, onCurrentShardSince: ts, history: [{ validAfter: ts, shard: 's0' }] };
}

const key = new ShardKeyPattern({ a: 1 });
const low = chunk({ a: new MinKey() }, { a: 0 });
const high = chunk({ a: 0 }, { a: new MaxKey() });
const chunks = [low, high];
const median = (c: ChunkType) => (c === high ? { a: 50 } : undefined);

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

test('the command takes exactly one of find, bounds and middle', () => {
  assert.deepEqual(parseSplitForm({ split: 'db.c', middle: { a: 5 } }), { kind: 'middle', middle: { a: 5 } });
  assert.deepEqual(parseSplitForm({ split: 'db.c', find: { a: 5 } }), { kind: 'find', find: { a: 5 } });
  assert.deepEqual(parseSplitForm({ split: 'db.c', bounds: [{ a: 0 }, { a: 1 }] }), { kind: 'bounds', bounds: [{ a: 0 }, { a: 1 }] });
  assert.throws(() => parseSplitForm({ split: 'db.c' }), code(8, /^need to specify find\/bounds or middle$/));
  assert.throws(() => parseSplitForm({ split: 'db.c', find: { a: 1 }, middle: { a: 1 } }), code(8, /cannot specify find and middle together/));
  assert.throws(() => parseSplitForm({ split: 'db.c', bounds: [{ a: 0 }, { a: 1 }], middle: { a: 1 } }), code(8, /cannot specify bounds and middle together/));
  assert.throws(() => parseSplitForm({ split: 'db.c', bounds: [{ a: 0 }, { a: 1 }], find: { a: 1 } }), code(8, /cannot specify bounds and find at the same time/));
  assert.throws(() => parseSplitForm({ split: 'db.c', bounds: [{ a: 0 }] }), code(8, /upper bound not specified/));
});

test('middle splits the chunk that holds it exactly there', () => {
  const target = splitPointFor({ kind: 'middle', middle: { a: 5 } }, key, chunks, median);
  assert.equal(target.chunk, high);
  assert.deepEqual(target.splitPoint, { a: 5 });
});

test('middle on a chunk boundary or not shaped like the key is refused', () => {
  assert.throws(() => splitPointFor({ kind: 'middle', middle: { a: 0 } }, key, chunks, median), code(8, /is a boundary key of existing chunk \[\{ a: 0 \},\{ a: MaxKey \}\)$/));
  assert.throws(() => splitPointFor({ kind: 'middle', middle: { b: 0 } }, key, chunks, median), code(8, /is not valid for shard key pattern \{ a: 1 \}$/));
});

test('find splits the chunk holding the document at the median the shard reports', () => {
  const target = splitPointFor({ kind: 'find', find: { a: 7, other: 1 } }, key, chunks, median);
  assert.equal(target.chunk, high);
  assert.deepEqual(target.splitPoint, { a: 50 });
});

test('find targets hashed keys by the hash of the value', () => {
  const hashedKey = new ShardKeyPattern({ h: 'hashed' });
  const h = hashValue('x');
  const hashedChunks = [chunk({ h: new MinKey() }, { h }), chunk({ h }, { h: new MaxKey() })];
  const target = splitPointFor({ kind: 'find', find: { h: 'x' } }, hashedKey, hashedChunks, () => ({ h: 1 }));
  assert.equal(target.chunk, hashedChunks[1]);
});

test('find without the shard key is refused', () => {
  assert.throws(() => splitPointFor({ kind: 'find', find: { b: 1 } }, key, chunks, median), code(8, /^no shard key found in chunk query \{ b: 1 \}$/));
});

test('bounds must name an existing chunk exactly', () => {
  assert.equal(splitPointFor({ kind: 'bounds', bounds: [{ a: 0 }, { a: new MaxKey() }] }, key, chunks, median).chunk, high);
  assert.throws(() => splitPointFor({ kind: 'bounds', bounds: [{ a: 0 }, { a: 10 }] }, key, chunks, median), code(8, /^no chunk found with the shard key bounds \[\{ a: 0 \}, \{ a: 10 \}\)$/));
  assert.throws(() => splitPointFor({ kind: 'bounds', bounds: [{ b: 0 }, { a: 10 }] }, key, chunks, median), code(8, /are not valid for shard key pattern/));
});

test('a chunk the shard finds no median for cannot be split', () => {
  assert.throws(() => splitPointFor({ kind: 'find', find: { a: -3 } }, key, chunks, median), code(87, /^Unable to find median in chunk because chunk is indivisible\.$/));
});
