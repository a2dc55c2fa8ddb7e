import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSONRegExp } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { isStorableShardKey, normalizeShardKey } from './shard_key.js';

test('a shard key is normalized to the pattern field order', () => {
  const key = new ShardKeyPattern({ a: 1, b: 1 });
  assert.deepEqual(Object.keys(normalizeShardKey(key, { b: 2, a: 1 })), ['a', 'b']);
});

test('regexes, arrays and dollar-prefixed embedded fields cannot be stored as bounds', () => {
  assert.equal(isStorableShardKey({ a: 1, b: { c: 'x' } }), true);
  assert.equal(isStorableShardKey({ a: new BSONRegExp('x', '') }), false);
  assert.equal(isStorableShardKey({ a: [1] }), false);
  assert.equal(isStorableShardKey({ a: { $x: 1 } }), false);
});
