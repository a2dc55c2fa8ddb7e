import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heatMatrix, rowOf, rowStarts } from './heat_map.js';

test('chunks are cut into at most so many rows of consecutive chunks, as even as can be', () => {
  assert.deepEqual(rowStarts(3, 40), [0, 1, 2]);
  assert.deepEqual(rowStarts(10, 4), [0, 2, 5, 7]);
  assert.deepEqual(rowStarts(0, 4), []);
});

test('a key lands in the row whose first key is the last at or below it', () => {
  const keys = [Buffer.from([0]), Buffer.from([5]), Buffer.from([9])];
  assert.equal(rowOf(keys, Buffer.from([0])), 0);
  assert.equal(rowOf(keys, Buffer.from([4, 255])), 0);
  assert.equal(rowOf(keys, Buffer.from([5])), 1);
  assert.equal(rowOf(keys, Buffer.from([200])), 2);
});

test('counts taken before a split land in the row that holds their keys now; old columns fall out', () => {
  const keys = [Buffer.from([0]), Buffer.from([5])];
  const { reads, writes } = heatMatrix([
    { column: 10, key: Buffer.from([7]), reads: 2, writes: 1 },
    { column: 9, key: Buffer.from([1]), reads: 0, writes: 4 },
    { column: 7, key: Buffer.from([1]), reads: 9, writes: 9 },
  ], keys, 10, 3);
  assert.deepEqual(reads, [[0, 0, 0], [0, 0, 2]]);
  assert.deepEqual(writes, [[0, 4, 0], [0, 0, 1]]);
});
