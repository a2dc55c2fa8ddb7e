import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffChangesPath, documentDiff } from './document_diff.js';

test('a diff names the fields set, added and removed, and embedded documents changed in place', () => {
  assert.equal(documentDiff({ _id: 1, a: 1 }, { _id: 1, a: 1 }), undefined);
  assert.deepEqual(documentDiff({ _id: 1, a: 1, b: 2, c: { x: 1, y: 2 } }, { _id: 1, a: 5, c: { x: 1, y: 3 }, d: [1] }), {
    d: { b: false }, u: { a: 5 }, i: { d: [1] }, sc: { u: { y: 3 } },
  });
  assert.deepEqual(documentDiff({ a: [1, 2] }, { a: [1, 3] }), { u: { a: [1, 3] } });
  assert.deepEqual(documentDiff({ a: 1 }, { a: '1' }), { u: { a: '1' } });
});

test('whether a diff changed a dotted path', () => {
  const diff = { u: { a: 5 }, sc: { u: { y: 3 }, sz: { d: { w: false } } } };
  assert.equal(diffChangesPath(diff, 'a'), true);
  assert.equal(diffChangesPath(diff, 'a.b'), true);
  assert.equal(diffChangesPath(diff, 'b'), false);
  assert.equal(diffChangesPath(diff, 'c.y'), true);
  assert.equal(diffChangesPath(diff, 'c.x'), false);
  assert.equal(diffChangesPath(diff, 'c.z.w'), true);
  assert.equal(diffChangesPath(diff, 'c'), true);
  assert.equal(diffChangesPath({ sc: { u: { y: 3 } } }, 'c.x.q'), false);
});
