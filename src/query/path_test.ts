import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arrayIndexOf, getPath, splitPath } from './path.js';

test('splitPath splits on every dot', () => {
  assert.deepEqual(splitPath('a.b.0'), ['a', 'b', '0']);
  assert.deepEqual(splitPath('a'), ['a']);
  assert.deepEqual(splitPath('a..b'), ['a', '', 'b']);
});

test('arrayIndexOf accepts only canonical non-negative integers', () => {
  assert.equal(arrayIndexOf('0'), 0);
  assert.equal(arrayIndexOf('12'), 12);
  assert.equal(arrayIndexOf('01'), undefined);
  assert.equal(arrayIndexOf('-1'), undefined);
  assert.equal(arrayIndexOf('a'), undefined);
});

test('getPath looks up fields and array positions without traversing arrays', () => {
  const doc = { a: { b: [10, { c: 1 }] }, d: [{ e: 1 }] };
  assert.equal(getPath(doc, 'a.b.0'), 10);
  assert.equal(getPath(doc, 'a.b.1.c'), 1);
  assert.equal(getPath(doc, 'd.e'), undefined);
  assert.equal(getPath(doc, 'a.x.y'), undefined);
  assert.deepEqual(getPath(doc, 'a'), doc.a);
  assert.equal(getPath({ a: { '0': 5 } }, 'a.0'), 5);
});
