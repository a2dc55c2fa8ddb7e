import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Doc } from '../../bson/values.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { assertMongoError, run } from './update_test_support.js';

interface Case { name: string; doc: Doc; update: Doc; arrayFilters?: Doc[]; matched?: string; expected: Doc }

const cases: Case[] = [
  { name: 'the positional $ updates the matched element', doc: { _id: 1, a: [1, 2, 3] }, update: { $set: { 'a.$': 9 } }, matched: '1', expected: { _id: 1, a: [1, 9, 3] } },
  { name: 'the positional $ reaches into a matched subdocument', doc: { _id: 1, a: [{ b: 1 }, { b: 2 }] }, update: { $inc: { 'a.$.b': 10 } }, matched: '1', expected: { _id: 1, a: [{ b: 1 }, { b: 12 }] } },
  { name: 'the positional $ merges with an explicit index', doc: { _id: 1, a: [{ b: 1 }, { b: 2 }] }, update: { $set: { 'a.$.b': 5, 'a.0.c': 1 } }, matched: '0', expected: { _id: 1, a: [{ b: 5, c: 1 }, { b: 2 }] } },
  { name: 'all-positional $[] updates every element', doc: { _id: 1, a: [1, 2, 3] }, update: { $inc: { 'a.$[]': 1 } }, expected: { _id: 1, a: [2, 3, 4] } },
  { name: 'all-positional $[] creates fields in each subdocument', doc: { _id: 1, a: [{}, { x: 1 }] }, update: { $set: { 'a.$[].y': 0 } }, expected: { _id: 1, a: [{ y: 0 }, { x: 1, y: 0 }] } },
  { name: 'nested $[] reaches arrays of arrays', doc: { _id: 1, a: [[1], [2, 3]] }, update: { $mul: { 'a.$[].$[]': 2 } }, expected: { _id: 1, a: [[2], [4, 6]] } },
  { name: 'a filtered $[i] updates matching elements only', doc: { _id: 1, a: [1, 5, 8] }, update: { $set: { 'a.$[i]': 0 } }, arrayFilters: [{ i: { $gte: 5 } }], expected: { _id: 1, a: [1, 0, 0] } },
  { name: 'a filtered $[i] matches subdocument fields', doc: { _id: 1, a: [{ k: 'x', v: 1 }, { k: 'y', v: 1 }] }, update: { $inc: { 'a.$[e].v': 1 } }, arrayFilters: [{ 'e.k': 'y' }], expected: { _id: 1, a: [{ k: 'x', v: 1 }, { k: 'y', v: 2 }] } },
  { name: 'two identifiers may touch different fields of one element', doc: { _id: 1, a: [{ b: 1, c: 1 }] }, update: { $set: { 'a.$[i].b': 2, 'a.$[j].c': 3 } }, arrayFilters: [{ 'i.b': 1 }, { 'j.c': 1 }], expected: { _id: 1, a: [{ b: 2, c: 3 }] } },
  { name: 'nested filtered identifiers combine', doc: { _id: 1, a: [{ b: [1, 7] }, { b: [9] }] }, update: { $set: { 'a.$[x].b.$[y]': 0 } }, arrayFilters: [{ 'x.b': 9 }, { y: { $gt: 5 } }], expected: { _id: 1, a: [{ b: [1, 7] }, { b: [0] }] } },
  { name: 'a numeric path part indexes an array', doc: { _id: 1, a: [{ b: 1 }, { b: 2 }] }, update: { $set: { 'a.1.b': 5 } }, expected: { _id: 1, a: [{ b: 1 }, { b: 5 }] } },
];

describe('update paths', () => {
  for (const c of cases) {
    it(c.name, () => {
      const { doc } = run(c.doc, c.update, { arrayFilters: c.arrayFilters }, { matchDetails: c.matched === undefined ? undefined : { elemMatchKey: c.matched } });
      assert.deepStrictEqual(doc, c.expected);
    });
  }

  it('a positional $ without a match from the query is an error', () => {
    assertMongoError(() => run({ _id: 1, a: [1] }, { $set: { 'a.$': 1 } }), ErrorCodes.BadValue, 'The positional operator did not find the match needed from the query.');
  });

  it('a positional $ that resolves to the same leaf as an explicit index conflicts', () => {
    assertMongoError(() => run({ _id: 1, a: [1] }, { $set: { 'a.$': 1, 'a.0': 2 } }, {}, { matchDetails: { elemMatchKey: '0' } }), ErrorCodes.ConflictingUpdateOperators, "Update created a conflict at 'a.0'");
  });

  it('array updates need the array to exist', () => {
    assertMongoError(() => run({ _id: 1 }, { $set: { 'a.$[]': 1 } }), ErrorCodes.BadValue, "The path 'a' must exist in the document in order to apply array updates.");
  });

  it('array updates need an array', () => {
    assertMongoError(() => run({ _id: 1, a: 5 }, { $set: { 'a.$[]': 1 } }), ErrorCodes.BadValue, 'Cannot apply array updates to non-array element a: 5');
  });

  it('creating a field inside a scalar is not viable', () => {
    assertMongoError(() => run({ _id: 1, a: 5 }, { $set: { 'a.b': 1 } }), ErrorCodes.PathNotViable, "Cannot create field 'b' in element {a: 5}");
  });

  it('creating a named field inside an array is not viable', () => {
    assertMongoError(() => run({ _id: 1, a: [1] }, { $set: { 'a.b': 1 } }), ErrorCodes.PathNotViable, "Cannot create field 'b' in element {a: [ 1 ]}");
  });

  it('$pop through a scalar is not viable', () => {
    assertMongoError(() => run({ _id: 1, a: 5 }, { $pop: { 'a.b': 1 } }), ErrorCodes.PathNotViable, 'Cannot use the part (b) of (a.b) to traverse the element ({a: 5})');
  });

  it('$rename out of an array element is rejected', () => {
    assertMongoError(() => run({ _id: 1, a: [{ b: 1 }] }, { $rename: { 'a.0.b': 'c' } }), ErrorCodes.BadValue, "The source field cannot be an array element, 'a.0.b' in doc with _id: 1 has an array field called 'a'");
  });

  it('$rename into an array element is rejected', () => {
    assertMongoError(() => run({ _id: 1, a: 1, b: [{}] }, { $rename: { a: 'b.0.c' } }), ErrorCodes.BadValue, "The destination field cannot be an array element, 'b.0.c' in doc with _id: 1 has an array field called 'b'");
  });
});
