import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MongoError } from '../base/errors.js';
import { compareValues } from '../bson/compare.js';
import { collationKeyOf, parseCollation } from '../bson/collation.js';
import { hashValue } from '../bson/hash.js';
import { encodeKey } from '../bson/key_string.js';
import { Double, Long, type Doc } from '../bson/values.js';
import { generateIndexKeys, orderingOf } from './index_key_generator.js';

interface Case {
  name: string;
  doc: Doc;
  pattern: Doc;
  sparse?: boolean;
  keys: unknown[][];
  multikey: boolean;
}

const cases: Case[] = [
  { name: 'a scalar field gives one key', doc: { a: 1 }, pattern: { a: 1 }, keys: [[1]], multikey: false },
  { name: 'a missing field gives null', doc: { b: 1 }, pattern: { a: 1 }, keys: [[null]], multikey: false },
  { name: 'a null field gives null', doc: { a: null }, pattern: { a: 1 }, keys: [[null]], multikey: false },
  { name: 'a compound pattern gives values in pattern order', doc: { b: 2, a: 1 }, pattern: { a: 1, b: -1 }, keys: [[1, 2]], multikey: false },
  { name: 'a dotted path reaches into embedded documents', doc: { a: { b: { c: 5 } } }, pattern: { 'a.b.c': 1 }, keys: [[5]], multikey: false },
  { name: 'a dotted path through a scalar is missing', doc: { a: 5 }, pattern: { 'a.b': 1 }, keys: [[null]], multikey: false },
  { name: 'an embedded document is indexed whole', doc: { a: { b: 1 } }, pattern: { a: 1 }, keys: [[{ b: 1 }]], multikey: false },
  { name: 'an array gives one key per element, sorted', doc: { a: [3, 1, 2] }, pattern: { a: 1 }, keys: [[1], [2], [3]], multikey: true },
  { name: 'a descending field sorts keys in descending order', doc: { a: [3, 1, 2] }, pattern: { a: -1 }, keys: [[3], [2], [1]], multikey: true },
  { name: 'keys equal under comparison are one key', doc: { a: [1, new Double(1), Long.fromNumber(1), 2] }, pattern: { a: 1 }, keys: [[1], [2]], multikey: true },
  { name: 'a one-element array makes the index multikey', doc: { a: [7] }, pattern: { a: 1 }, keys: [[7]], multikey: true },
  { name: 'an empty array gives undefined', doc: { a: [] }, pattern: { a: 1 }, keys: [[undefined]], multikey: true },
  { name: 'an empty array along a path gives null', doc: { a: [] }, pattern: { 'a.b': 1 }, keys: [[null]], multikey: true },
  { name: 'an empty array deeper along a path gives undefined', doc: { a: { b: [] } }, pattern: { 'a.b': 1 }, keys: [[undefined]], multikey: true },
  {
    name: 'an array along a path expands into its documents',
    doc: { a: [{ b: 1 }, { b: 2 }, { c: 3 }, 4] },
    pattern: { 'a.b': 1 },
    keys: [[null], [1], [2]],
    multikey: true,
  },
  { name: 'a nested array is indexed whole, not expanded', doc: { a: [[1, 2], 3] }, pattern: { a: 1 }, keys: [[3], [[1, 2]]], multikey: true },
  { name: 'a path does not reach through a nested array', doc: { a: [[{ b: 1 }]] }, pattern: { 'a.b': 1 }, keys: [[null]], multikey: true },
  {
    name: 'an array deep in a path expands at its level',
    doc: { a: { b: [{ c: 1 }, { c: 2 }] } },
    pattern: { 'a.b.c': 1 },
    keys: [[1], [2]],
    multikey: true,
  },
  {
    name: 'one array with scalar fields beside it',
    doc: { a: 1, b: [2, 3] },
    pattern: { a: 1, b: 1 },
    keys: [[1, 2], [1, 3]],
    multikey: true,
  },
  {
    name: 'two paths through the same array pair up per element, not as a product',
    doc: { a: [{ b: 1, c: 'x' }, { b: 2, c: 'y' }] },
    pattern: { 'a.b': 1, 'a.c': 1 },
    keys: [[1, 'x'], [2, 'y']],
    multikey: true,
  },
  {
    name: 'the array itself and a path inside it pair up per element',
    doc: { a: [{ b: 1 }, { b: 2 }] },
    pattern: { a: 1, 'a.b': 1 },
    keys: [[{ b: 1 }, 1], [{ b: 2 }, 2]],
    multikey: true,
  },
  { name: 'a numeric component picks an array element', doc: { a: [5, 6] }, pattern: { 'a.0': 1 }, keys: [[5]], multikey: false },
  {
    name: 'a numeric component past the end expands the array and finds nothing',
    doc: { a: [5, 6] },
    pattern: { 'a.2': 1 },
    keys: [[null]],
    multikey: true,
  },
  {
    name: 'a numeric component then a field picks into one element',
    doc: { a: [{ b: 1 }, { b: 2 }] },
    pattern: { 'a.1.b': 1 },
    keys: [[2]],
    multikey: false,
  },
  { name: 'a numeric component over a nested array takes it whole', doc: { a: [[1, 2]] }, pattern: { 'a.0': 1 }, keys: [[[1, 2]]], multikey: false },
  {
    name: 'a numeric component names a field of documents in the array',
    doc: { a: [{ 0: 'x' }, { 0: 'y' }] },
    pattern: { 'a.5': 1 },
    keys: [[null]],
    multikey: true,
  },
  { name: 'a numeric component names a field of a document', doc: { a: { 0: 'x' } }, pattern: { 'a.0': 1 }, keys: [['x']], multikey: false },
  {
    name: 'a positional field beside an expanded one keeps its single value',
    doc: { a: { b: [1, 2] } },
    pattern: { 'a.b': 1, 'a.b.0': 1 },
    keys: [[1, 1], [2, 1]],
    multikey: true,
  },
  { name: 'sparse: a document missing every field has no keys', doc: { c: 1 }, pattern: { a: 1, b: 1 }, sparse: true, keys: [], multikey: false },
  { name: 'sparse: a document with one field present is indexed', doc: { b: 1 }, pattern: { a: 1, b: 1 }, sparse: true, keys: [[null, 1]], multikey: false },
  { name: 'sparse: a null field counts as present', doc: { a: null }, pattern: { a: 1 }, sparse: true, keys: [[null]], multikey: false },
  { name: 'sparse: an empty array counts as present', doc: { a: [] }, pattern: { a: 1 }, sparse: true, keys: [[undefined]], multikey: true },
  {
    name: 'sparse: array elements missing the path give no keys',
    doc: { a: [1, { b: 2 }] },
    pattern: { 'a.b': 1 },
    sparse: true,
    keys: [[2]],
    multikey: true,
  },
  { name: 'the _id index takes _id whole', doc: { _id: { x: [1, 2] } }, pattern: { _id: 1 }, keys: [[{ x: [1, 2] }]], multikey: false },
  { name: 'the _id index gives null without an _id', doc: { a: 1 }, pattern: { _id: 1 }, keys: [[null]], multikey: false },
  { name: 'a hashed field holds the hash of its value', doc: { a: 42 }, pattern: { a: 'hashed' }, keys: [[hashValue(42)]], multikey: false },
  { name: 'a hashed missing field holds the hash of null', doc: {}, pattern: { a: 'hashed' }, keys: [[hashValue(null)]], multikey: false },
  { name: 'a hashed embedded document is hashed whole', doc: { a: { b: 1 } }, pattern: { a: 'hashed' }, keys: [[hashValue({ b: 1 })]], multikey: false },
  {
    name: 'a compound hashed pattern keeps the other fields plain',
    doc: { a: 'x', b: { c: 2 } },
    pattern: { a: 1, 'b.c': 'hashed' },
    keys: [['x', hashValue(2)]],
    multikey: false,
  },
  { name: 'sparse hashed: every field missing gives no keys', doc: { z: 1 }, pattern: { a: 'hashed', b: 1 }, sparse: true, keys: [], multikey: false },
  { name: 'sparse hashed: one field present is indexed', doc: { b: 1 }, pattern: { a: 'hashed', b: 1 }, sparse: true, keys: [[hashValue(null), 1]], multikey: false },
];

for (const c of cases) {
  test(c.name, () => {
    const { encoded, ...result } = generateIndexKeys(c.doc, c.pattern, { sparse: c.sparse });
    assert.deepEqual(result, { keys: c.keys, multikey: c.multikey });
    assert.deepEqual(encoded, c.keys.map((k) => encodeKey(k, orderingOf(c.pattern))));
  });
}

interface ErrorCase {
  name: string;
  doc: Doc;
  pattern: Doc;
  code: number;
  message: string;
}

const errorCases: ErrorCase[] = [
  {
    name: 'two arrays in a compound pattern cannot be indexed, naming the later first',
    doc: { a: [1, 2], b: [3, 4] },
    pattern: { a: 1, b: 1 },
    code: 171,
    message: 'cannot index parallel arrays [b] [a]',
  },
  {
    name: 'parallel arrays are found below the first expanded array',
    doc: { a: [{ b: [1], c: [2] }] },
    pattern: { 'a.b': 1, 'a.c': 1 },
    code: 171,
    message: 'cannot index parallel arrays [c] [b]',
  },
  {
    name: 'parallel arrays along dotted paths name the array fields',
    doc: { x: { a: [1] }, y: { b: [] } },
    pattern: { 'x.a': 1, 'y.b': 1 },
    code: 171,
    message: 'cannot index parallel arrays [b] [a]',
  },
  {
    name: 'a hashed field cannot hold an array',
    doc: { a: [1, 2] },
    pattern: { a: 'hashed' },
    code: 16766,
    message: 'Error: hashed indexes do not currently support array values. Found array at path: a',
  },
  {
    name: 'a hashed path cannot pass through an array',
    doc: { a: { b: [{ c: 1 }] } },
    pattern: { 'a.b.c': 'hashed' },
    code: 16766,
    message: 'Error: hashed indexes do not currently support array values. Found array at path: a.b',
  },
  {
    name: 'no field of a compound hashed pattern may hold an array',
    doc: { a: 1, b: [] },
    pattern: { a: 'hashed', b: 1 },
    code: 16766,
    message: 'Error: hashed indexes do not currently support array values. Found array at path: b',
  },
  {
    name: 'a position that is also a field name of the array element is ambiguous',
    doc: { a: [{ 0: 1 }] },
    pattern: { 'a.0': 1 },
    code: 16746,
    message:
      "Ambiguous field name found in array (do not use numeric field names in embedded elements in an array), field: '0' for array: { 0: { 0: 1 } }",
  },
];

for (const c of errorCases) {
  test(c.name, () => {
    assert.throws(
      () => generateIndexKeys(c.doc, c.pattern),
      (err: unknown) => err instanceof MongoError && err.code === c.code && err.message === c.message,
    );
  });
}

test('orderingOf reads directions of any numeric type and treats hashed as ascending', () => {
  assert.deepEqual(orderingOf({ a: 1, b: -1, c: new Double(-1), d: Long.fromNumber(-1), e: 'hashed' }), [1, -1, -1, -1, 1]);
});

test('the document is not modified', () => {
  const doc = { a: [{ b: 1 }, { b: 2 }], c: [] };
  const before = structuredClone(doc);
  generateIndexKeys(doc, { 'a.b': 1 });
  generateIndexKeys(doc, { c: 1 });
  assert.deepEqual(doc, before);
});

// A model of the simplest rule, one field over scalars and one level of arrays, to check the
// generator against on many documents.
function modelKeys(v: unknown): unknown[] {
  if (v === undefined) return [null];
  if (!Array.isArray(v)) return [v];
  if (v.length === 0) return [undefined];
  const unique: unknown[] = [];
  for (const item of v) if (!unique.some((u) => compareValues(u, item) === 0)) unique.push(item);
  return unique.sort(compareValues);
}

test('a single field gives the distinct elements of an array in order, or the value itself', () => {
  const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'y', null, true), fc.double().map((d) => new Double(d)));
  const value = fc.oneof(fc.constant(undefined), scalar, fc.array(fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })), { maxLength: 5 }));
  fc.assert(
    fc.property(value, fc.constantFrom(1, -1), (v, direction) => {
      const doc: Doc = v === undefined ? {} : { a: v };
      const { keys, multikey } = generateIndexKeys(doc, { a: direction });
      const expected = modelKeys(v);
      if (direction === -1) expected.reverse();
      assert.equal(keys.length, expected.length);
      keys.forEach((k, i) => assert.equal(compareValues(k[0], expected[i]), 0));
      assert.equal(multikey, Array.isArray(v));
    }),
  );
});

test('under a collation, key strings hold collation keys: equal strings are one key, nested ones too', () => {
  const collationKey = collationKeyOf(parseCollation({ locale: 'en', strength: 2 })!);
  const a = generateIndexKeys({ n: 'Ada', m: 3 }, { n: 1, m: -1 }, { collationKey });
  const b = generateIndexKeys({ n: 'aDA', m: 3 }, { n: 1, m: -1 }, { collationKey });
  assert.deepEqual(a.encoded, b.encoded);
  assert.deepEqual(a.keys, [['Ada', 3]], 'the values stay as the document has them');
  assert.notDeepEqual(generateIndexKeys({ n: 'Adà' }, { n: 1 }, { collationKey }).encoded, generateIndexKeys({ n: 'Ada' }, { n: 1 }, { collationKey }).encoded);
  const multi = generateIndexKeys({ n: ['Ada', 'ada', 'Bob'] }, { n: 1 }, { collationKey });
  assert.equal(multi.encoded.length, 2);
  assert.deepEqual(generateIndexKeys({ n: { first: 'ADA' } }, { n: 1 }, { collationKey }).encoded, generateIndexKeys({ n: { first: 'ada' } }, { n: 1 }, { collationKey }).encoded);
  assert.deepEqual(generateIndexKeys({ n: 'ADA' }, { n: 'hashed' }, { collationKey }).encoded, generateIndexKeys({ n: 'ada' }, { n: 'hashed' }, { collationKey }).encoded);
  assert.deepEqual(generateIndexKeys({ n: 7 }, { n: 1 }, { collationKey }).encoded, generateIndexKeys({ n: 7 }, { n: 1 }).encoded, 'numbers are as without a collation');
});
