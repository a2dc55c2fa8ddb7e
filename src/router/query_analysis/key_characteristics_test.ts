import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../../base/errors.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import {
  averageDocumentSize, compatibleIndex, firstRecordIds, inKeyOrder, isUniqueKey, mergeKeyFrequencies, monotonicityOf, mostCommonValues,
  recordIdCorrelation, shardKeyIndex,
} from './key_characteristics.js';

test('record ids in key order correlate by 1 when inserted in order, -1 reversed, near 0 scattered', () => {
  assert.equal(recordIdCorrelation([1, 2, 3, 4, 5]), 1);
  assert.equal(recordIdCorrelation([50, 40, 30, 20, 10]), -1);
  // Pearson's r of (1..6) against this order: sum of dx*dy over the root of the squares.
  assert.ok(Math.abs(recordIdCorrelation([3, 6, 1, 5, 2, 4]) + 0.0857142857) < 1e-9);
  assert.equal(recordIdCorrelation([7, 7, 7]), 0);
});

test('monotonicity: the threshold 0.7 either way, one value or a hashed first field never monotonic, no index unknown', () => {
  const range = new ShardKeyPattern({ a: 1 });
  assert.deepEqual(monotonicityOf(range, [1, 2, 3, 4]), { recordIdCorrelationCoefficient: 1, type: 'monotonic' });
  assert.deepEqual(monotonicityOf(range, [4, 3, 2, 1]), { recordIdCorrelationCoefficient: -1, type: 'monotonic' });
  assert.equal(monotonicityOf(range, [3, 6, 1, 5, 2, 4]).type, 'not monotonic');
  assert.deepEqual(monotonicityOf(range, [9]), { recordIdCorrelationCoefficient: 0, type: 'not monotonic' });
  assert.deepEqual(monotonicityOf(range, undefined), { type: 'unknown' });
  assert.deepEqual(monotonicityOf(new ShardKeyPattern({ a: 'hashed' }), undefined), { recordIdCorrelationCoefficient: 0, type: 'not monotonic' });
  assert.deepEqual(monotonicityOf(new ShardKeyPattern({ a: 1, b: 'hashed' }), [1, 2]), { type: 'unknown' });
});

test('the first record id of each distinct value, in key order', () => {
  const rows = [{ values: [1], recordId: 5 }, { values: [1], recordId: 2 }, { values: [2], recordId: 9 }, { values: [3], recordId: 1 }];
  assert.deepEqual(firstRecordIds(rows), [2, 9, 1]);
});

test('frequencies merge across shards by value; a missing field is null, an array refused with BadValue', () => {
  const merged = mergeKeyFrequencies(['a'], [[{ _id: { k0: 'x' }, frequency: 3 }, { _id: {}, frequency: 1 }], [{ _id: { k0: 'x' }, frequency: 2 }, { _id: { k0: null }, frequency: 4 }]]);
  assert.deepEqual(merged, [{ values: ['x'], frequency: 5 }, { values: [null], frequency: 5 }]);
  assert.throws(() => mergeKeyFrequencies(['a'], [[{ _id: { k0: [1, 2] }, frequency: 1 }]]), (err: unknown) => err instanceof MongoError && err.code === 2);
});

test('most common values: most frequent first, ties in key order, at most five', () => {
  const values = [['b', 1], ['a', 1], ['c', 7], ['d', 3], ['e', 3], ['f', 1]].map(([v, n]) => ({ values: [v], frequency: n as number }));
  assert.deepEqual(mostCommonValues(['t'], values), [
    { value: { t: 'c' }, frequency: 7 }, { value: { t: 'd' }, frequency: 3 }, { value: { t: 'e' }, frequency: 3 },
    { value: { t: 'a' }, frequency: 1 }, { value: { t: 'b' }, frequency: 1 },
  ]);
});

test('values in key order: by value, or by hash for a hashed field', () => {
  const values = [{ values: [3], frequency: 1 }, { values: [1], frequency: 2 }];
  assert.deepEqual(inKeyOrder(new ShardKeyPattern({ a: 1 }), values).map((v) => v.key), [{ a: 1 }, { a: 3 }]);
  const hashed = inKeyOrder(new ShardKeyPattern({ a: 'hashed' }), values);
  assert.equal(hashed.length, 2);
  assert.ok(Buffer.compare(hashed[0]!.keyString, hashed[1]!.keyString) < 0);
});

test('a supporting index: the key\'s fields first, b-tree or hashed, not sparse, partial or collated', () => {
  const indexes = [
    { name: 'a_text', key: { a: 'text' } },
    { name: 'a_sparse', key: { a: 1 }, sparse: true },
    { name: 'a_partial', key: { a: 1 }, partialFilterExpression: { c: { $gt: 5 } } },
    { name: 'a_collated', key: { a: 1 }, collation: { locale: 'en_US', strength: 1 } },
    { name: 'a_1_b_1', key: { a: 1, b: 1 } },
    { name: 'a_hashed', key: { a: 'hashed' } },
  ];
  assert.equal(compatibleIndex(indexes, { a: 1 })?.name, 'a_1_b_1');
  assert.equal(compatibleIndex(indexes, { a: 'hashed' })?.name, 'a_1_b_1');
  assert.equal(compatibleIndex(indexes, { b: 1 }), undefined);
  assert.equal(compatibleIndex([{ name: 'simple', key: { a: 1 }, collation: { locale: 'simple' } }], { a: 1 })?.name, 'simple');
  // Monotonicity reads the key's own index, type for type.
  assert.equal(shardKeyIndex(indexes, new ShardKeyPattern({ a: 'hashed' }))?.name, 'a_hashed');
  assert.equal(shardKeyIndex(indexes, new ShardKeyPattern({ a: 1 }))?.name, 'a_1_b_1');
});

test('unique: a unique index (or _id\'s) on exactly the key', () => {
  assert.equal(isUniqueKey({ name: '_id_', key: { _id: 1 } }, { _id: 1 }), true);
  assert.equal(isUniqueKey({ key: { a: 1 }, unique: true }, { a: 1 }), true);
  assert.equal(isUniqueKey({ key: { a: 1, b: 1 }, unique: true }, { a: 1 }), false);
  assert.equal(isUniqueKey({ key: { a: 1 } }, { a: 1 }), false);
});

test('average document size: floored, never below an empty document\'s 5 bytes, 0 when empty', () => {
  assert.equal(averageDocumentSize(1001, 10), 100);
  assert.equal(averageDocumentSize(3, 1), 5);
  assert.equal(averageDocumentSize(0, 0), 0);
});
