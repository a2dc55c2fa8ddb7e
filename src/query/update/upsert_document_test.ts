import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { compileUpdate, upsertDocument } from './update_driver.js';
import { assertMongoError } from './update_test_support.js';

interface Case { name: string; query: Doc; update: Doc | Doc[]; expected: Doc }

const cases: Case[] = [
  { name: 'equality fields seed the document', query: { a: 1, b: { $eq: 2 } }, update: { $set: { c: 3 } }, expected: { a: 1, b: 2, c: 3 } },
  { name: 'dotted equalities create subdocuments', query: { 'x.y': 1 }, update: { $inc: { n: 1 } }, expected: { x: { y: 1 }, n: 1 } },
  { name: 'equalities inside $and count', query: { $and: [{ a: 1 }, { b: 2 }] }, update: { $set: { c: 1 } }, expected: { a: 1, b: 2, c: 1 } },
  { name: 'ranges, $or and multi-value $in do not count', query: { a: { $gt: 1 }, $or: [{ b: 1 }, { c: 1 }], d: { $in: [1, 2] } }, update: { $set: { e: 1 } }, expected: { e: 1 } },
  { name: '$setOnInsert applies', query: { _id: 7 }, update: { $setOnInsert: { a: 1 }, $set: { b: 1 } }, expected: { _id: 7, a: 1, b: 1 } },
  { name: 'the _id comes first', query: { a: 1, _id: 5 }, update: { $set: { b: 1 } }, expected: { _id: 5, a: 1, b: 1 } },
  { name: 'a replacement keeps only the query _id', query: { _id: 3, a: 1 }, update: { b: 2 }, expected: { _id: 3, b: 2 } },
  { name: 'a replacement without a query _id has none', query: { a: 1 }, update: { b: 2 }, expected: { b: 2 } },
  { name: 'a DBRef-shaped equality is a value to seed', query: { ref: { $ref: 'foo', $id: 7 } }, update: { $set: { b: 1 } }, expected: { ref: { $ref: 'foo', $id: 7 }, b: 1 } },
  { name: 'an update may set _id when the query has none', query: { a: 1 }, update: { $set: { _id: 9 } }, expected: { _id: 9, a: 1 } },
];

describe('upsert documents', () => {
  for (const c of cases) {
    it(c.name, () => {
      const doc = upsertDocument(c.query, compileUpdate(c.update));
      assert.deepStrictEqual(doc, c.expected);
      assert.deepStrictEqual(Object.keys(doc), Object.keys(c.expected));
    });
  }

  it('rejects a path matched twice', () => {
    assertMongoError(() => upsertDocument({ $and: [{ a: 1 }, { a: 2 }] }, compileUpdate({ $set: { b: 1 } })), ErrorCodes.NotSingleValueField, "cannot infer query fields to set, path 'a' is matched twice");
  });

  it('rejects an update that changes the query _id', () => {
    assertMongoError(() => upsertDocument({ _id: 1 }, compileUpdate({ $set: { _id: 2 } })), ErrorCodes.ImmutableField);
  });

  it('rejects a positional update, which has no match to use', () => {
    assertMongoError(() => upsertDocument({ 'a.b': 1 }, compileUpdate({ $set: { 'a.$': 1 } })), ErrorCodes.BadValue, 'The positional operator did not find the match needed from the query.');
  });
});

describe("an upsert's '$'-prefixed fields", () => {
  it('are allowed at the top level of the document an upsert inserts, as an insert allows them', () => {
    assert.deepStrictEqual(upsertDocument({ _id: 1 }, compileUpdate({ $set: { $myKey: 1, 'a.$b': 2 } })), { _id: 1, $myKey: 1, a: { $b: 2 } });
    assert.deepStrictEqual(upsertDocument({ _id: 1 }, compileUpdate({ a: 1, $myKey: 1 })), { _id: 1, a: 1, $myKey: 1 });
  });

  it('are refused when the same update changes a stored document, and inside _id', () => {
    assertMongoError(() => compileUpdate({ $set: { $myKey: 1 } }).apply({ _id: 1 }, { isUpsertInsert: false }), ErrorCodes.DollarPrefixedFieldName);
    assertMongoError(() => compileUpdate({ a: 1, $myKey: 1 }).apply({ _id: 1 }, { isUpsertInsert: false }), ErrorCodes.DollarPrefixedFieldName);
    assertMongoError(() => compileUpdate({ $inc: { $myKey: 1 } }).apply({ _id: 1, $myKey: 1 }, { isUpsertInsert: false }), ErrorCodes.DollarPrefixedFieldName);
    assert.deepStrictEqual(compileUpdate({ $unset: { $myKey: 1 } }).apply({ _id: 1, $myKey: 1 }, { isUpsertInsert: false }).doc, { _id: 1 });
    assertMongoError(() => upsertDocument({}, compileUpdate({ $set: { _id: { $x: 1 } } })), ErrorCodes.DollarPrefixedFieldName);
  });
});
