import { test } from 'node:test';
import assert from 'node:assert/strict';
import { disambiguatedPaths } from './disambiguated_paths.js';

test('paths with a numeric component say which are array indexes', () => {
  const after = { _id: 1, arr: [{ a: 1 }, 2], obj: { 0: { b: 1 } }, plain: 1 };
  const desc = { updatedFields: { 'arr.0.a': 1, 'obj.0.b': 1, plain: 1 }, removedFields: ['obj.0.c'], truncatedArrays: [] };
  assert.deepEqual(disambiguatedPaths(desc, after), { 'arr.0.a': ['arr', 0, 'a'], 'obj.0.b': ['obj', '0', 'b'], 'obj.0.c': ['obj', '0', 'c'] });
});
