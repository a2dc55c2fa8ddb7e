import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCollation } from '../../bson/collation.js';
import { Double, Long } from '../../bson/values.js';
import { mergeDistinctValues } from './distinct_merge.js';

test('distinct values from all shards are deduplicated and sorted in BSON order', () => {
  const merged = mergeDistinctValues([
    ['b', 3, null, { x: 1 }],
    [new Double(3), 'a', [1], Long.fromNumber(1), { x: 1 }],
    [],
  ]);
  assert.deepEqual(merged, [null, Long.fromNumber(1), 3, 'a', 'b', { x: 1 }, [1]]);
});

test('distinct values are deduplicated under the collation', () => {
  const merged = mergeDistinctValues([['a', 'B'], ['A', 'b', 'c']], parseCollation({ locale: 'en', strength: 2 }));
  assert.deepEqual(merged, ['a', 'B', 'c']);
});
