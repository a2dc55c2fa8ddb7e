import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { hashValue } from '../bson/hash.js';
import { MongoError } from '../base/errors.js';
import { compareValues } from '../bson/compare.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { indivisibleChunk, parseSplitForm, splitTargetFor, type SplitForm } from './split_point_finder.js';
import { splitRefusals } from './split_point_finder_cases.js';

const ts = new Timestamp({ t: 1, i: 0 });
function chunk(min: Doc, max: Doc): ChunkType {
  return { _id: new ObjectId(), uuid: new UUID(), min, max, shard: 's0', lastmod: ts, onCurrentShardSince: ts, history: [{ validAfter: ts, shard: 's0' }] };
}

const key = new ShardKeyPattern({ a: 1 });
const low = chunk({ a: new MinKey() }, { a: 0 });
const high = chunk({ a: 0 }, { a: new MaxKey() });
const chunks = [low, high];
// The routing table's look-up over `all`.
function finder(all: readonly ChunkType[]) {
  return (k: Doc): ChunkType => {
    const found = all.find((c) => compareValues(c.min, k) <= 0 && compareValues(k, c.max) < 0);
    if (found === undefined) throw new MongoError(63, 'no chunk');
    return found;
  };
}

function target(form: SplitForm, pattern = key, all: readonly ChunkType[] = chunks) {
  return splitTargetFor(form, pattern, finder(all));
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

for (const refusal of splitRefusals('db.c')) {
  test(`split refuses ${refusal.name} as mongos does`, () => {
    assert.throws(() => target(parseSplitForm(refusal.cmd)), code(refusal.code, refusal.message));
  });
}

test('the command takes exactly one of find, bounds and middle', () => {
  assert.deepEqual(parseSplitForm({ split: 'db.c', middle: { a: 5 } }), { kind: 'middle', middle: { a: 5 } });
  assert.deepEqual(parseSplitForm({ split: 'db.c', find: { a: 5 } }), { kind: 'find', find: { a: 5 } });
  assert.deepEqual(parseSplitForm({ split: 'db.c', bounds: [{ a: 0 }, { a: 1 }] }), { kind: 'bounds', bounds: [{ a: 0 }, { a: 1 }] });
});

test('middle splits the chunk that holds it exactly there', () => {
  const t = target({ kind: 'middle', middle: { a: 5 } });
  assert.equal(t.chunk, high);
  assert.deepEqual(t.splitPoint, { a: 5 });
});

test('find and bounds name the chunk and leave the split point to the owning shard\'s median', () => {
  const byFind = target({ kind: 'find', find: { a: 7, other: 1 } });
  assert.equal(byFind.chunk, high);
  assert.equal(byFind.splitPoint, undefined);
  assert.equal(target({ kind: 'bounds', bounds: [{ a: 0 }, { a: new MaxKey() }] }).chunk, high);
});

test('find targets hashed keys by the hash of the value', () => {
  const hashedKey = new ShardKeyPattern({ h: 'hashed' });
  const h = hashValue('x');
  const hashedChunks = [chunk({ h: new MinKey() }, { h }), chunk({ h }, { h: new MaxKey() })];
  assert.equal(target({ kind: 'find', find: { h: 'x' } }, hashedKey, hashedChunks).chunk, hashedChunks[1]);
});

test('a chunk the shard finds no median for cannot be split', () => {
  assert.ok(code(87, /^Unable to find median in chunk because chunk is indivisible\.$/)(indivisibleChunk()));
});
