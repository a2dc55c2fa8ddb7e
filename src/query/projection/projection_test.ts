import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Double } from 'bson';
import type { Doc } from '../../bson/values.js';
import { compileFilter, type MatchDetails } from '../match/matcher.js';
import { compileProjection } from './projection.js';

type Case = [spec: Doc, doc: Doc, expected: Doc];

function check(cases: Case[]): void {
  for (const [spec, doc, expected] of cases) {
    const before = structuredClone(doc);
    const actual = compileProjection(spec).apply(doc);
    assert.deepEqual(actual, expected, `${JSON.stringify(spec)} on ${JSON.stringify(doc)}`);
    assert.deepEqual(Object.keys(actual), Object.keys(expected), `field order of ${JSON.stringify(spec)}`);
    assert.deepEqual(doc, before, 'the input document is not mutated');
  }
}

function rejects(spec: Doc, code: number, filter?: Doc): void {
  assert.throws(() => compileProjection(spec, { filter }), (err: { code: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    return true;
  });
}

function positional(filter: Doc, spec: Doc, doc: Doc): Doc {
  const details: MatchDetails = {};
  assert.ok(compileFilter(filter).matches(doc, details));
  return compileProjection(spec, { filter }).apply(doc, details);
}

const doc = { _id: 1, a: 1, b: { c: 2, d: 3 }, e: [{ f: 1, g: 2 }, { f: 3 }, 4, [{ f: 5, g: 6 }]] };

test('inclusion keeps the named fields in document order and _id by default', () => {
  check([
    [{ a: 1 }, doc, { _id: 1, a: 1 }],
    [{ b: true, a: 1 }, doc, { _id: 1, a: 1, b: { c: 2, d: 3 } }],
    [{ _id: 0, a: 1 }, doc, { a: 1 }],
    [{ _id: 1 }, doc, { _id: 1 }],
    [{ 'b.c': 1 }, doc, { _id: 1, b: { c: 2 } }],
    [{ b: { c: 1 } }, doc, { _id: 1, b: { c: 2 } }],
    [{ 'e.f': 1 }, doc, { _id: 1, e: [{ f: 1 }, { f: 3 }, [{ f: 5 }]] }],
    [{ 'a.x': 1 }, doc, { _id: 1 }],
    [{ missing: 1 }, doc, { _id: 1 }],
    [{ 'b.c': 1, a: 1 }, { b: { c: 1, d: 2 }, a: 0 }, { b: { c: 1 }, a: 0 }],
  ]);
});

test('exclusion removes the named fields, through arrays, keeping everything else', () => {
  check([
    [{ a: 0 }, doc, { _id: 1, b: { c: 2, d: 3 }, e: doc.e }],
    [{ _id: 0 }, { _id: 1, a: 1 }, { a: 1 }],
    [{ 'b.c': 0, a: false }, doc, { _id: 1, b: { d: 3 }, e: doc.e }],
    [{ 'e.f': 0, a: 0, b: 0 }, doc, { _id: 1, e: [{ g: 2 }, {}, 4, [{ g: 6 }]] }],
    [{ 'a.x': 0 }, { a: 1 }, { a: 1 }],
  ]);
});

test('mixing inclusion and exclusion is an error, except for _id', () => {
  rejects({ a: 1, b: 0 }, 31254);
  rejects({ a: 0, b: 1 }, 31253);
  rejects({ a: 0, b: { $add: [1, 2] } }, 31252);
  rejects({ a: 0, b: 'x' }, 31310);
  rejects({ a: 1, 'a.b': 1 }, 31249);
  rejects({ 'a.b': 1, a: 1 }, 31250);
  rejects({ a: { $foo: 1 } }, 31325);
  rejects({ 'a..b': 1 }, 15998);
  check([[{ a: 1, _id: 0 }, { _id: 1, a: 2 }, { a: 2 }], [{ _id: 1, a: 0 }, { _id: 1, a: 2, b: 3 }, { _id: 1, b: 3 }]]);
});

test('expressions and literals compute fields after the included ones', () => {
  check([
    [{ x: { $add: ['$a', 1] } }, { _id: 1, a: 1 }, { _id: 1, x: 2 }],
    [{ x: '$b.c', a: 1 }, doc, { _id: 1, a: 1, x: 2 }],
    [{ x: { $literal: 1 } }, { _id: 1 }, { _id: 1, x: 1 }],
    [{ x: 'text', _id: 0 }, { _id: 1 }, { x: 'text' }],
    [{ x: null, _id: 0 }, { _id: 1 }, { x: null }],
    [{ x: [1, '$a'], _id: 0 }, { a: 2 }, { x: [1, 2] }],
    [{ x: '$missing', _id: 0 }, { a: 2 }, {}],
    [{ 'a.b': { $literal: 1 }, _id: 0 }, { a: 5 }, { a: { b: 1 } }],
    [{ 'a.b': { $literal: 1 }, _id: 0 }, { a: { c: 1 } }, { a: { b: 1 } }],
    [{ 'a.b': { $literal: 1 }, 'a.c': 1, _id: 0 }, { a: [{ c: 1 }, 2] }, { a: [{ c: 1, b: 1 }] }],
  ]);
});

test('$slice takes the first, the last, or a window of an array', () => {
  const arr = { _id: 1, a: [1, 2, 3, 4, 5], b: 1 };
  check([
    [{ a: { $slice: 2 } }, arr, { _id: 1, a: [1, 2], b: 1 }],
    [{ a: { $slice: -2 } }, arr, { _id: 1, a: [4, 5], b: 1 }],
    [{ a: { $slice: [1, 2] } }, arr, { _id: 1, a: [2, 3], b: 1 }],
    [{ a: { $slice: [-2, 5] } }, arr, { _id: 1, a: [4, 5], b: 1 }],
    [{ a: { $slice: [10, 2] } }, arr, { _id: 1, a: [], b: 1 }],
    [{ a: { $slice: 2 }, b: 1 }, { b: 1, a: [1, 2, 3], c: 1 }, { b: 1, a: [1, 2] }],
    [{ a: { $slice: 1 }, _id: 1 }, arr, { _id: 1, a: [1] }],
    [{ b: { $slice: 1 } }, arr, arr],
    [{ 'x.y': { $slice: 1 } }, { x: [{ y: [1, 2] }, { y: [3, 4] }] }, { x: [{ y: [1] }, { y: [3] }] }],
    [{ a: { $slice: ['$a', 1] }, _id: 0 }, arr, { a: [1] }],
  ]);
  assert.throws(() => compileProjection({ a: { $slice: 'x' } }), /did not match the find\(\) syntax because :: Location31273/);
  assert.equal(compileProjection({ a: { $slice: 1 } }).isInclusion, false);
  assert.equal(compileProjection({ a: { $slice: 1 }, b: 1 }).isInclusion, true);
});

test('$elemMatch projects the first matching element after the included fields', () => {
  const d = { _id: 1, a: [{ x: 1 }, { x: 2, y: 1 }, { x: 2 }], b: 1 };
  check([
    [{ a: { $elemMatch: { x: 2 } } }, d, { _id: 1, a: [{ x: 2, y: 1 }] }],
    [{ a: { $elemMatch: { x: 2 } }, b: 1 }, d, { _id: 1, b: 1, a: [{ x: 2, y: 1 }] }],
    [{ a: { $elemMatch: { x: 9 } } }, d, { _id: 1 }],
    [{ a: { $elemMatch: { $gt: 1 } } }, { _id: 1, a: [1, 5, 7] }, { _id: 1, a: [5] }],
    [{ b: { $elemMatch: { x: 1 } } }, d, { _id: 1 }],
  ]);
  assert.equal(compileProjection({ a: { $elemMatch: { x: 1 } } }).isInclusion, true);
  rejects({ 'a.b': { $elemMatch: { x: 1 } } }, 31275);
  rejects({ a: { $elemMatch: { $jsonSchema: {} } } }, 224);
  rejects({ a: { $elemMatch: { $or: [{ $jsonSchema: { required: ['x'] } }] } } }, 224);
  rejects({ a: { $elemMatch: 1 } }, 31274);
});

test('the positional operator keeps the array element the query matched', () => {
  const d = { _id: 1, a: [{ x: 1, y: 1 }, { x: 2, y: 2 }], b: 3 };
  assert.deepEqual(positional({ 'a.x': 2 }, { 'a.$': 1 }, d), { _id: 1, a: [{ x: 2, y: 2 }] });
  assert.deepEqual(positional({ 'a.x': 2 }, { 'a.$': 1, b: 1 }, d), { _id: 1, a: [{ x: 2, y: 2 }], b: 3 });
  assert.deepEqual(positional({ 'c.d': 5 }, { 'c.d.$': 1 }, { c: { d: [4, 5] } }), { c: { d: [5] } });
  assert.deepEqual(positional({ a: { $elemMatch: { y: 2 } } }, { 'a.$': 1, _id: 0 }, d), { a: [{ x: 2, y: 2 }] });
  assert.throws(() => positional({ b: 3 }, { 'b.$': 1 }, d), { code: 51246 });
  rejects({ 'a.$': 1 }, 31277, { b: 1 });
  rejects({ 'a.$': 1, 'b.$': 1 }, 31276, { a: 1, b: 1 });
  rejects({ 'a.$': 0 }, 16410, { a: 1 });
  rejects({ 'a.$': 1, c: { $elemMatch: { x: 1 } } }, 31255, { a: 1 });
  rejects({ 'a.$.b.$': 1 }, 31287, { a: 1 });
  rejects({ 'a.$': 'x' }, 31308, { a: 1 });
});

test('$meta shows what the plan knows, in inclusion and exclusion projections, without deciding their type', () => {
  const meta = { indexKey: { a: 30, b: 'z' }, recordId: 7, sortKey: [30] };
  const row = { _id: 3, a: 30, b: 'z' };
  const cases: Case[] = [
    [{ _id: 0, a: 1, c: { $meta: 'indexKey' } }, row, { a: 30, c: { a: 30, b: 'z' } }],
    [{ _id: 0, a: 0, c: { $meta: 'indexKey' } }, row, { b: 'z', c: { a: 30, b: 'z' } }],
    [{ _id: 1, c: { $meta: 'indexKey' } }, row, { _id: 3, c: { a: 30, b: 'z' } }],
    // Alone, or with {_id: 0}, $meta leaves an exclusion: the whole document and the field.
    [{ _id: 0, c: { $meta: 'indexKey' } }, row, { a: 30, b: 'z', c: { a: 30, b: 'z' } }],
    [{ c: { $meta: 'recordId' } }, row, { _id: 3, a: 30, b: 'z', c: 7 }],
    [{ 'x.y': { $meta: 'sortKey' } }, row, { _id: 3, a: 30, b: 'z', x: { y: [30] } }],
    [{ a: 1, $recordId: { $meta: 'recordId' } }, row, { _id: 3, a: 30, $recordId: 7 }],
  ];
  for (const [spec, input, expected] of cases) {
    const actual = compileProjection(spec).apply(input, {}, meta);
    assert.deepEqual(actual, expected, JSON.stringify(spec));
    assert.deepEqual(Object.keys(actual), Object.keys(expected), `field order of ${JSON.stringify(spec)}`);
  }
});

test('$meta a plan does not have leaves its field out', () => {
  const row = { _id: 1, a: 1 };
  assert.deepEqual(compileProjection({ k: { $meta: 'indexKey' } }).apply(row, {}, {}), row);
  assert.deepEqual(compileProjection({ a: 1, s: { $meta: 'searchScore' } }).apply(row, {}, {}), row);
  assert.deepEqual([...compileProjection({ a: { $meta: 'indexKey' }, b: { $meta: 'sortKey' } }).metas].sort(), ['indexKey', 'sortKey']);
});

test('a textScore $meta shows the score the plan gives, and keeps the other fields', () => {
  const projection = compileProjection({ m: { $meta: 'textScore' } });
  assert.deepEqual([...projection.metas], ['textScore']);
  assert.deepEqual(projection.apply({ _id: 1, a: 1 }, {}, { textScore: new Double(1) }), { _id: 1, a: 1, m: new Double(1) });
});

test('$meta arguments are checked as mongod checks them', () => {
  rejects({ m: { $meta: 1 } }, 17307);
  rejects({ m: { $meta: 'bogus' } }, 17308);
  // Only $recordId and $sortKey, the names mongod gives the fields it adds, may start with '$', at
  // the top level.
  rejects({ $other: { $meta: 'recordId' } }, 16410);
  rejects({ a: { $recordId: { $meta: 'recordId' } } }, 31325);
});

test('returnKey keeps the index key and only the projection\'s sortKey fields', () => {
  const projector = compileProjection({ b: 1, c: { $meta: 'sortKey' }, a: { $meta: 'recordId' }, 'd.e': { $meta: 'sortKey' } });
  assert.deepEqual(projector.keyOnly({ indexKey: { a: 3 }, sortKey: [1], recordId: 9 }), { a: 3, c: [1], d: { e: [1] } });
  assert.deepEqual(compileProjection({ b: 1 }).keyOnly({}), {});
});
