import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShardKeyPattern } from './shard_key_pattern.js';
import { hashValue } from '../bson/hash.js';
import { BSONRegExp, Double, Long, MinKey } from '../bson/values.js';
import { MongoError } from '../base/errors.js';

function assertMongoError(fn: () => unknown, code: number, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof MongoError);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('a pattern of ascending fields lists them in order, all ascending', () => {
  const p = new ShardKeyPattern({ a: 1, 'b.c': 1 });
  assert.deepEqual(p.fields, ['a', 'b.c']);
  assert.deepEqual(p.ordering, [1, 1]);
  assert.equal(p.isHashed, false);
});

test('one hashed field is allowed, alone or compound', () => {
  assert.equal(new ShardKeyPattern({ a: 'hashed' }).isHashed, true);
  const compound = new ShardKeyPattern({ a: 1, b: 'hashed' });
  assert.equal(compound.hashedField, 'b');
  assert.equal(compound.hasHashedPrefix(), false);
  assert.equal(new ShardKeyPattern({ a: 'hashed', b: 1 }).hasHashedPrefix(), true);
});

test('numbers whose integer part is 1 count as ascending, as MongoDB safeNumberInt', () => {
  assert.doesNotThrow(() => new ShardKeyPattern({ a: new Double(1), b: Long.fromNumber(1) }));
});

test('invalid patterns fail with BadValue and MongoDB wording', () => {
  assertMongoError(() => new ShardKeyPattern({}), 2, /^Shard key is empty$/);
  assertMongoError(() => new ShardKeyPattern({ a: -1 }), 2, /can contain at most one 'hashed' field.*Failed to parse field a/);
  assertMongoError(() => new ShardKeyPattern({ a: 'hashed', b: 'hashed' }), 2, /Failed to parse field b$/);
  assertMongoError(() => new ShardKeyPattern({ a: '2d' }), 2);
  assertMongoError(() => new ShardKeyPattern({ 'a..b': 1 }), 2, /contains empty parts/);
});

test('extracting from a document follows dotted paths and fills missing fields with null', () => {
  const p = new ShardKeyPattern({ a: 1, 'b.c': 1 });
  assert.deepEqual(p.extractShardKeyFromDoc({ a: 5, b: { c: 'x' }, z: 1 }), { a: 5, 'b.c': 'x' });
  assert.deepEqual(p.extractShardKeyFromDoc({ b: 7 }), { a: null, 'b.c': null });
});

test('extracting from a document hashes the hashed field, null when missing', () => {
  const p = new ShardKeyPattern({ a: 'hashed' });
  assert.deepEqual(p.extractShardKeyFromDoc({ a: 42 }), { a: hashValue(42) });
  assert.deepEqual(p.extractShardKeyFromDoc({}), { a: hashValue(null) });
});

test('an array on a shard key path is rejected with ShardKeyNotFound', () => {
  const p = new ShardKeyPattern({ 'a.b': 1 });
  const message = /^Shard key cannot contain array values or array descendants\.$/;
  assertMongoError(() => p.extractShardKeyFromDoc({ a: [{ b: 1 }] }), 61, message);
  assertMongoError(() => p.extractShardKeyFromDoc({ a: { b: [1] } }), 61, message);
});

test('a query pins the shard key by plain values, $eq, one-element $in and $and', () => {
  const p = new ShardKeyPattern({ a: 1, b: 1 });
  assert.deepEqual(p.extractShardKeyFromQuery({ a: 1, b: 'x', c: { $gt: 3 } }), { a: 1, b: 'x' });
  assert.deepEqual(p.extractShardKeyFromQuery({ a: { $eq: 1 }, $and: [{ b: { $in: [2] } }] }), { a: 1, b: 2 });
  assert.deepEqual(p.extractShardKeyFromQuery({ a: null, b: { $eq: 1, $gt: 0 } }), { a: null, b: 1 });
});

test('a query that leaves a field free, or uses ranges, pins no key', () => {
  const p = new ShardKeyPattern({ a: 1, b: 1 });
  assert.equal(p.extractShardKeyFromQuery({ a: 1 }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: 1, b: { $gt: 1 } }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: 1, b: { $in: [1, 2] } }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ $or: [{ a: 1, b: 1 }] }), undefined);
});

test('a query pinning a field twice, or to an array or regex, pins no key', () => {
  const p = new ShardKeyPattern({ a: 1 });
  assert.equal(p.extractShardKeyFromQuery({ a: 1, $and: [{ a: 1 }] }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: [1] }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: new BSONRegExp('x', '') }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: { $eq: new BSONRegExp('x', '') } }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ a: { $in: [new BSONRegExp('x', '')] } }), undefined);
});

test('an equality on a parent document pins a nested shard key field', () => {
  const p = new ShardKeyPattern({ 'a.b': 1 });
  assert.deepEqual(p.extractShardKeyFromQuery({ a: { b: 3, c: 4 } }), { 'a.b': 3 });
  assert.equal(p.extractShardKeyFromQuery({ a: { c: 4 } }), undefined);
  assert.equal(p.extractShardKeyFromQuery({ 'a.b.c': 1 }), undefined);
});

test('_id pins the key only when it is a shard key field', () => {
  assert.equal(new ShardKeyPattern({ a: 1 }).extractShardKeyFromQuery({ _id: 1 }), undefined);
  assert.deepEqual(new ShardKeyPattern({ _id: 1 }).extractShardKeyFromQuery({ _id: 1 }), { _id: 1 });
});

test('a query on a hashed field yields the hash of the pinned value', () => {
  const p = new ShardKeyPattern({ a: 1, b: 'hashed' });
  assert.deepEqual(p.extractShardKeyFromQuery({ a: 1, b: 'x' }), { a: 1, b: hashValue('x') });
});

test('key strings order shard keys as compareValues does', () => {
  const p = new ShardKeyPattern({ a: 1, b: 1 });
  const keys = [
    p.globalMin(),
    { a: null, b: 5 },
    { a: 1, b: new MinKey() },
    { a: 1, b: 2 },
    { a: new Double(1.5), b: 0 },
    { a: 2, b: 'z' },
    { a: 'x', b: 0 },
    p.globalMax(),
  ];
  for (let i = 1; i < keys.length; i++) {
    assert.ok(Buffer.compare(p.keyString(keys[i - 1]!), p.keyString(keys[i]!)) < 0, `key ${i - 1} < key ${i}`);
  }
});

test('the global bounds are MinKey and MaxKey in every field', () => {
  const p = new ShardKeyPattern({ a: 1, b: 'hashed' });
  assert.deepEqual(p.globalMin(), { a: new MinKey(), b: new MinKey() });
  assert.deepEqual(p.globalMax(), { a: new MaxKey(), b: new MaxKey() });
});

test('an index serves the shard key when its key pattern starts with it', () => {
  const p = new ShardKeyPattern({ a: 1, b: 1 });
  assert.equal(p.isShardKeyPrefixOf({ a: 1, b: 1 }), true);
  assert.equal(p.isShardKeyPrefixOf({ a: new Double(1), b: 1, c: -1 }), true);
  assert.equal(p.isShardKeyPrefixOf({ a: 1 }), false);
  assert.equal(p.isShardKeyPrefixOf({ b: 1, a: 1 }), false);
  assert.equal(p.isShardKeyPrefixOf({ a: 1, b: -1 }), false);
  const hashed = new ShardKeyPattern({ a: 'hashed' });
  assert.equal(hashed.isShardKeyPrefixOf({ a: 'hashed' }), true);
  assert.equal(hashed.isShardKeyPrefixOf({ a: 1 }), false);
  assert.equal(new ShardKeyPattern({ a: 1 }).isShardKeyPrefixOf({ a: 'hashed' }), false);
});

test('a shard key document has exactly the pattern fields, none an array', () => {
  const p = new ShardKeyPattern({ a: 1, b: 1 });
  assert.equal(p.isShardKey({ a: 1, b: null }), true);
  assert.equal(p.isShardKey({ a: 1 }), false);
  assert.equal(p.isShardKey({ a: 1, b: [2] }), false);
  assert.equal(p.isShardKey({ a: 1, b: 2, c: 3 }), false);
});
