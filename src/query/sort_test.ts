import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey } from 'bson';
import type { Doc } from '../bson/values.js';
import { compileSort, sortKey } from './sort.js';

function order(spec: Doc, docs: Doc[]): unknown[] {
  return [...docs].sort(compileSort(spec)).map((d) => d._id);
}

test('compound sorts compare field by field with each direction', () => {
  const docs = [{ _id: 1, a: 1, b: 2 }, { _id: 2, a: 1, b: 1 }, { _id: 3, a: 0, b: 5 }];
  assert.deepEqual(order({ a: 1, b: 1 }, docs), [3, 2, 1]);
  assert.deepEqual(order({ a: -1, b: 1 }, docs), [2, 1, 3]);
  assert.deepEqual(order({ a: 1, b: -1 }, docs), [3, 1, 2]);
  assert.deepEqual(order({}, docs), [1, 2, 3]);
});

test('values of different types sort in BSON order, missing as null', () => {
  const docs = [
    { _id: 'str', a: 'x' }, { _id: 'num', a: 2 }, { _id: 'null', a: null }, { _id: 'missing' },
    { _id: 'obj', a: {} }, { _id: 'max', a: new MaxKey() }, { _id: 'min', a: new MinKey() }, { _id: 'bool', a: true },
  ];
  assert.deepEqual(order({ a: 1 }, docs), ['min', 'null', 'missing', 'num', 'str', 'obj', 'bool', 'max']);
});

test('arrays sort by their smallest element ascending and largest descending', () => {
  const docs = [{ _id: 1, a: [1, 10] }, { _id: 2, a: [5] }, { _id: 3, a: 7 }];
  assert.deepEqual(order({ a: 1 }, docs), [1, 2, 3]);
  assert.deepEqual(order({ a: -1 }, docs), [1, 3, 2]);
});

test('an empty array sorts before null and missing', () => {
  const docs = [{ _id: 'null', a: null }, { _id: 'empty', a: [] }, { _id: 'one', a: [1] }];
  assert.deepEqual(order({ a: 1 }, docs), ['empty', 'null', 'one']);
  assert.deepEqual(order({ a: -1 }, docs), ['one', 'null', 'empty']);
});

test('dotted sort paths reach into arrays of documents', () => {
  assert.equal(sortKey({ a: [{ b: 3 }, { b: 1 }] }, ['a', 'b'], 1), 1);
  assert.equal(sortKey({ a: [{ b: 3 }, { b: [1, 9] }] }, ['a', 'b'], -1), 9);
  assert.equal(sortKey({ a: [{ b: 3 }, { c: 1 }] }, ['a', 'b'], 1), null);
  assert.equal(sortKey({ a: { b: 2 } }, ['a', 'b'], 1), 2);
  assert.equal(sortKey({ a: [4, 5] }, ['a', '1'], 1), 5);
  assert.deepEqual(sortKey({ a: [[2], 1] }, ['a'], -1), [2]);
});

test('sort values other than 1 and -1 are rejected', () => {
  assert.throws(() => compileSort({ a: 2 }), { code: 15975, message: '$sort key ordering must be 1 (for ascending) or -1 (for descending)' });
  assert.throws(() => compileSort({ a: 'asc' }), { code: 15974 });
  assert.throws(() => compileSort({ a: { $meta: 'randVal' } }), { code: 17312 });
  assert.throws(() => compileSort({ a: { $meta: 'textScore' } }), { code: 40218, message: 'query requires text score metadata, but it is not available' });
  assert.doesNotThrow(() => compileSort({ a: 1.0, b: -1 }));
});

test('a textScore sort orders by the score the plan gives, highest first, then by the next field', () => {
  const scores = new Map<object, number>();
  const docs = [{ _id: 1, s: 0.5 }, { _id: 2, s: 2 }, { _id: 3, s: 0.5 }, { _id: 0, s: 1 }];
  for (const d of docs) scores.set(d, d.s);
  const sorted = [...docs].sort(compileSort({ score: { $meta: 'textScore' }, _id: -1 }, (d) => scores.get(d)));
  assert.deepEqual(sorted.map((d) => d._id), [2, 0, 3, 1]);
});

test('a comparator also orders non-document values, which sort by their missing fields', () => {
  const cmp = compileSort({ a: 1 }) as (x: unknown, y: unknown) => number;
  assert.equal(cmp(5, { a: 1 }) < 0, true);
});
