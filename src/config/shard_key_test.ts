import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSONRegExp, Long, MaxKey, MinKey } from '../bson/values.js';
import { hashValue } from '../bson/hash.js';
import { MongoError } from '../base/errors.js';
import { globalMax, globalMin, hasHashedPrefix, isShardKeyShaped, isStorableShardKey, normalizeShardKey, parseShardKey, shardKeyFromEqualityQuery } from './shard_key.js';

function badValue(message: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === 2 && message.test(err.message);
}

test('a range key lists its fields in order and has no hashed field', () => {
  const key = parseShardKey({ a: 1, 'b.c': 1 });
  assert.deepEqual(key.fields, ['a', 'b.c']);
  assert.equal(key.hashedField, undefined);
  assert.equal(hasHashedPrefix(key), false);
});

test('a hashed field is found wherever it sits, and only a leading one is a hashed prefix', () => {
  assert.equal(parseShardKey({ a: 'hashed', b: 1 }).hashedField, 'a');
  assert.equal(hasHashedPrefix(parseShardKey({ a: 'hashed', b: 1 })), true);
  assert.equal(hasHashedPrefix(parseShardKey({ a: 1, b: 'hashed' })), false);
});

test('an empty key is rejected', () => {
  assert.throws(() => parseShardKey({}), badValue(/^Shard key is empty$/));
});

test('two hashed fields are rejected with MongoDB message', () => {
  assert.throws(() => parseShardKey({ a: 'hashed', b: 'hashed' }), badValue(/can contain at most one 'hashed' field.*Failed to parse field b$/));
});

test('values other than 1 or "hashed" are rejected', () => {
  for (const value of [-1, 0, 2, 'text', true, { x: 1 }]) {
    assert.throws(() => parseShardKey({ a: value }), badValue(/Failed to parse field a$/), String(value));
  }
  assert.doesNotThrow(() => parseShardKey({ a: Long.fromNumber(1) }));
});

test('malformed paths are rejected', () => {
  assert.throws(() => parseShardKey({ 'a..b': 1 }), badValue(/contains empty parts/));
  assert.throws(() => parseShardKey({ '$a': 1 }), badValue(/contains parts that start with '\$'/));
  assert.doesNotThrow(() => parseShardKey({ 'ref.$id': 1 }));
});

test('global bounds put MinKey and MaxKey in every field', () => {
  const key = parseShardKey({ a: 1, b: 'hashed' });
  assert.deepEqual(globalMin(key), { a: new MinKey(), b: new MinKey() });
  assert.deepEqual(globalMax(key), { a: new MaxKey(), b: new MaxKey() });
});

test('a shard key has exactly the key fields and no arrays', () => {
  const key = parseShardKey({ a: 1, b: 1 });
  assert.equal(isShardKeyShaped(key, { a: 1, b: 2 }), true);
  assert.equal(isShardKeyShaped(key, { b: 2, a: 1 }), true);
  assert.equal(isShardKeyShaped(key, { a: 1 }), false);
  assert.equal(isShardKeyShaped(key, { a: 1, b: 2, c: 3 }), false);
  assert.equal(isShardKeyShaped(key, { a: [1], b: 2 }), false);
  assert.deepEqual(Object.keys(normalizeShardKey(key, { b: 2, a: 1 })), ['a', 'b']);
});

test('regexes, arrays and dollar-prefixed embedded fields cannot be stored as bounds', () => {
  assert.equal(isStorableShardKey({ a: 1 }), true);
  assert.equal(isStorableShardKey({ a: new BSONRegExp('x', '') }), false);
  assert.equal(isStorableShardKey({ a: [1] }), false);
  assert.equal(isStorableShardKey({ a: { $x: 1 } }), false);
});

test('an equality query yields the shard key, hashing the hashed field', () => {
  const key = parseShardKey({ a: 'hashed', 'b.c': 1 });
  assert.deepEqual(shardKeyFromEqualityQuery(key, { a: 5, b: { c: 'x' } }), { a: hashValue(5), 'b.c': 'x' });
  assert.deepEqual(shardKeyFromEqualityQuery(key, { a: 5, 'b.c': 'x' }), { a: hashValue(5), 'b.c': 'x' });
  assert.equal(shardKeyFromEqualityQuery(key, { a: 5 }), undefined);
  assert.equal(shardKeyFromEqualityQuery(key, { a: { $gt: 5 }, 'b.c': 1 }), undefined);
});
