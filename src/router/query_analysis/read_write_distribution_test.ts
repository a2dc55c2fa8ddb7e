import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rangesTable, ReadDistribution, splitPointsFor, WriteDistribution } from './read_write_distribution.js';

const values = (n: number, frequency = 1) => Array.from({ length: n }, (_, i) => ({ key: { k: i }, frequency }));

test('split points cut the values into ranges of about as many documents, never inside a value', () => {
  assert.deepEqual(splitPointsFor(values(10), 5), [{ k: 2 }, { k: 4 }, { k: 6 }, { k: 8 }]);
  assert.equal(splitPointsFor(values(1000), 100).length, 99);
  // One heavy value takes several ranges' share: no split point inside it.
  const skewed = [{ key: { k: 0 }, frequency: 90 }, ...values(10).map((v) => ({ key: { k: v.key.k + 1 }, frequency: 1 }))];
  assert.deepEqual(splitPointsFor(skewed, 10), [{ k: 1 }]);
  assert.deepEqual(splitPointsFor(values(3), 100), [{ k: 1 }, { k: 2 }]);
  assert.deepEqual(splitPointsFor([], 100), []);
});

// k: [MinKey, 10) [10, 20) [20, MaxKey)
const table = () => rangesTable('db.c', { k: 1 }, [{ k: 10 }, { k: 20 }]);

test('reads: a whole key single-shard, a range multi-shard, no key scatter-gather, counted per range', () => {
  const reads = new ReadDistribution(table());
  reads.add('find', { filter: { k: 5 }, collation: {} });
  reads.add('count', { filter: { k: { $gte: 12, $lt: 25 } }, collation: {} });
  reads.add('aggregate', { filter: { other: 1 }, collation: {} });
  reads.add('distinct', { filter: { k: 'x' }, collation: { locale: 'fr' } });
  assert.deepEqual(reads.metrics(), {
    sampleSize: { total: 4, find: 1, aggregate: 1, count: 1, distinct: 1 },
    percentageOfSingleShardReads: 25, percentageOfMultiShardReads: 50, percentageOfScatterGatherReads: 25,
    numReadsByRange: [2, 2, 3],
  });
});

test('no samples: the sample sizes alone', () => {
  assert.deepEqual(new ReadDistribution(table()).metrics(), { sampleSize: { total: 0, find: 0, aggregate: 0, count: 0, distinct: 0 } });
  assert.deepEqual(new WriteDistribution(table()).metrics(), { sampleSize: { total: 0, update: 0, delete: 0, findAndModify: 0 } });
});

test('writes: by statement, a replacement pinning the key, writes without the key, shard key updates by their recorded diffs', () => {
  const writes = new WriteDistribution(table());
  writes.add('update', { update: 'c', updates: [{ q: { k: 1 }, u: { $set: { x: 1 } } }, { q: { _id: 3 }, u: { k: 15, x: 2 } }] });
  writes.add('update', { update: 'c', updates: [{ q: { x: 1 }, u: { $set: { k: 30 } }, multi: true }] }, { u: { k: 30 } });
  writes.add('delete', { delete: 'c', deletes: [{ q: { x: 2 }, limit: 1 }] });
  writes.add('findAndModify', { findAndModify: 'c', query: { k: { $gt: 21 } }, update: { $inc: { n: 1 } } }, { u: { n: 2 } });
  assert.deepEqual(writes.metrics(), {
    sampleSize: { total: 5, update: 3, delete: 1, findAndModify: 1 },
    percentageOfSingleShardWrites: 40, percentageOfMultiShardWrites: 20, percentageOfScatterGatherWrites: 40,
    numWritesByRange: [3, 3, 3],
    percentageOfShardKeyUpdates: 20, percentageOfSingleWritesWithoutShardKey: 40, percentageOfMultiWritesWithoutShardKey: 20,
  });
});

test('percentages keep ten decimal places', () => {
  const reads = new ReadDistribution(table());
  for (const filter of [{ k: 1 }, {}, {}]) reads.add('find', { filter, collation: {} });
  const metrics = reads.metrics();
  assert.equal(metrics.percentageOfSingleShardReads, 33.3333333333);
  assert.equal(metrics.percentageOfScatterGatherReads, 66.6666666667);
});
