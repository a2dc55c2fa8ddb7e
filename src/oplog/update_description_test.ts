import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Double } from 'bson';
import { describeUpdate } from './update_description.js';

test('fields set, removed and changed in sub-documents and arrays, as dotted paths', () => {
  assert.deepEqual(describeUpdate({ _id: 1, a: 1, b: 2 }, { _id: 1, a: 1, c: 3 }), { updatedFields: { c: 3 }, removedFields: ['b'], truncatedArrays: [] });
  assert.deepEqual(describeUpdate({ _id: 1, s: { x: 1, y: { z: 1 } } }, { _id: 1, s: { x: 2, y: { z: 1, w: 0 } } }), { updatedFields: { 's.x': 2, 's.y.w': 0 }, removedFields: [], truncatedArrays: [] });
  assert.deepEqual(describeUpdate({ _id: 1, arr: [1, { a: 1 }] }, { _id: 1, arr: [1, { a: 2 }, 3] }), { updatedFields: { 'arr.1.a': 2, 'arr.2': 3 }, removedFields: [], truncatedArrays: [] });
  assert.deepEqual(describeUpdate({ _id: 1, arr: [1, 2, 3] }, { _id: 1, arr: [9] }), { updatedFields: { 'arr.0': 9 }, removedFields: [], truncatedArrays: [{ field: 'arr', newSize: 1 }] });
  assert.deepEqual(describeUpdate({ _id: 1, a: [1] }, { _id: 1, a: { 0: 1 } }), { updatedFields: { a: { 0: 1 } }, removedFields: [], truncatedArrays: [] });
});

test('a value of another type is a change, an equal one is not', () => {
  assert.deepEqual(describeUpdate({ _id: 1, n: 1 }, { _id: 1, n: new Double(1) }).updatedFields, { n: new Double(1) });
  assert.deepEqual(describeUpdate({ _id: 1, n: 1, s: 'x' }, { _id: 1, n: 1, s: 'x' }), { updatedFields: {}, removedFields: [], truncatedArrays: [] });
});
