import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Double, Long, Timestamp, type Doc } from '../../bson/values.js';
import { NOW, run } from './update_test_support.js';

interface Case { name: string; doc: Doc; update: Doc; expected: Doc; modified?: boolean; insert?: boolean }

const cases: Case[] = [
  { name: '$set replaces a value', doc: { _id: 1, a: 1 }, update: { $set: { a: 2 } }, expected: { _id: 1, a: 2 } },
  { name: '$set to an identical value is a no-op', doc: { _id: 1, a: 1 }, update: { $set: { a: 1 } }, expected: { _id: 1, a: 1 }, modified: false },
  { name: '$set to an equal value of another type is a change', doc: { _id: 1, a: 1 }, update: { $set: { a: new Double(1) } }, expected: { _id: 1, a: new Double(1) } },
  { name: '$set creates intermediate documents', doc: { _id: 1 }, update: { $set: { 'a.b.c': 1 } }, expected: { _id: 1, a: { b: { c: 1 } } } },
  { name: '$set into an array index pads with null', doc: { _id: 1, a: [1] }, update: { $set: { 'a.3': 9 } }, expected: { _id: 1, a: [1, null, null, 9] } },
  { name: '$set of a numeric part under a missing field creates a document', doc: { _id: 1 }, update: { $set: { 'a.0': 9 } }, expected: { _id: 1, a: { 0: 9 } } },
  { name: '$set appends new fields in lexicographic order', doc: { _id: 1 }, update: { $set: { b: 1, a: 1, 'c.y': 1, 'c.x': 1 } }, expected: { _id: 1, a: 1, b: 1, c: { x: 1, y: 1 } } },
  { name: '$set orders numeric parts by value', doc: { _id: 1, a: {} }, update: { $set: { 'a.10': 1, 'a.9': 1 } }, expected: { _id: 1, a: { 9: 1, 10: 1 } } },
  { name: '$set keeps an existing field in place', doc: { _id: 1, a: 1, b: 2 }, update: { $set: { a: 5 } }, expected: { _id: 1, a: 5, b: 2 } },
  { name: '$set of _id to the same value is allowed', doc: { _id: 1 }, update: { $set: { _id: 1, a: 1 } }, expected: { _id: 1, a: 1 } },
  { name: '$set allows a nested dollar-prefixed field', doc: { _id: 1 }, update: { $set: { 'a.$b': 1 } }, expected: { _id: 1, a: { $b: 1 } } },
  { name: '$unset removes a field', doc: { _id: 1, a: 1, b: 2 }, update: { $unset: { a: '' } }, expected: { _id: 1, b: 2 } },
  { name: '$unset of a missing field is a no-op', doc: { _id: 1 }, update: { $unset: { 'a.b': 1 } }, expected: { _id: 1 }, modified: false },
  { name: '$unset of an array element sets it to null', doc: { _id: 1, a: [1, 2] }, update: { $unset: { 'a.0': 1 } }, expected: { _id: 1, a: [null, 2] } },
  { name: '$unset through a scalar is a no-op', doc: { _id: 1, a: 1 }, update: { $unset: { 'a.b': 1 } }, expected: { _id: 1, a: 1 }, modified: false },
  { name: '$setOnInsert does nothing on update', doc: { _id: 1 }, update: { $setOnInsert: { a: 1 } }, expected: { _id: 1 }, modified: false },
  { name: '$setOnInsert applies on insert', doc: { _id: 1 }, update: { $setOnInsert: { a: 1 } }, expected: { _id: 1, a: 1 }, insert: true },
  { name: '$inc adds ints', doc: { _id: 1, a: 1 }, update: { $inc: { a: 2 } }, expected: { _id: 1, a: 3 } },
  { name: '$inc creates a missing field', doc: { _id: 1 }, update: { $inc: { a: 5 } }, expected: { _id: 1, a: 5 } },
  { name: '$inc by zero is a no-op', doc: { _id: 1, a: 1 }, update: { $inc: { a: 0 } }, expected: { _id: 1, a: 1 }, modified: false },
  { name: '$inc of an int past int32 widens to long', doc: { _id: 1, a: 2147483647 }, update: { $inc: { a: 1 } }, expected: { _id: 1, a: Long.fromNumber(2147483648) } },
  { name: '$inc with a double gives a double', doc: { _id: 1, a: 1 }, update: { $inc: { a: new Double(0.5) } }, expected: { _id: 1, a: new Double(1.5) } },
  { name: '$mul multiplies', doc: { _id: 1, a: 3 }, update: { $mul: { a: 4 } }, expected: { _id: 1, a: 12 } },
  { name: '$mul creates a zero of the argument type', doc: { _id: 1 }, update: { $mul: { a: Long.fromNumber(7) } }, expected: { _id: 1, a: Long.fromNumber(0) } },
  { name: '$min lowers', doc: { _id: 1, a: 5 }, update: { $min: { a: 3 } }, expected: { _id: 1, a: 3 } },
  { name: '$min keeps a smaller value', doc: { _id: 1, a: 2 }, update: { $min: { a: 3 } }, expected: { _id: 1, a: 2 }, modified: false },
  { name: '$max raises across types by canonical order', doc: { _id: 1, a: 5 }, update: { $max: { a: 'x' } }, expected: { _id: 1, a: 'x' } },
  { name: '$max creates a missing field', doc: { _id: 1 }, update: { $max: { a: 1 } }, expected: { _id: 1, a: 1 } },
  { name: '$currentDate true sets a date', doc: { _id: 1 }, update: { $currentDate: { a: true } }, expected: { _id: 1, a: NOW } },
  { name: '$currentDate $type timestamp sets a timestamp', doc: { _id: 1 }, update: { $currentDate: { a: { $type: 'timestamp' } } }, expected: { _id: 1, a: new Timestamp({ t: Math.floor(NOW.getTime() / 1000), i: 1 }) } },
  { name: '$rename moves a field to the end', doc: { _id: 1, a: 1, b: 2 }, update: { $rename: { a: 'c' } }, expected: { _id: 1, b: 2, c: 1 } },
  { name: '$rename overwrites a destination in place', doc: { _id: 1, a: 1, b: 2 }, update: { $rename: { b: 'a' } }, expected: { _id: 1, a: 2 } },
  { name: '$rename into a subdocument', doc: { _id: 1, a: 1 }, update: { $rename: { a: 'x.y' } }, expected: { _id: 1, x: { y: 1 } } },
  { name: '$rename of a missing field is a no-op', doc: { _id: 1 }, update: { $rename: { a: 'b' } }, expected: { _id: 1 }, modified: false },
  { name: '$push appends', doc: { _id: 1, a: [1] }, update: { $push: { a: 2 } }, expected: { _id: 1, a: [1, 2] } },
  { name: '$push creates an array', doc: { _id: 1 }, update: { $push: { a: { b: 1 } } }, expected: { _id: 1, a: [{ b: 1 }] } },
  { name: '$push $each $position inserts in the middle', doc: { _id: 1, a: [1, 4] }, update: { $push: { a: { $each: [2, 3], $position: 1 } } }, expected: { _id: 1, a: [1, 2, 3, 4] } },
  { name: '$push negative $position counts from the end', doc: { _id: 1, a: [1, 2, 3] }, update: { $push: { a: { $each: [9], $position: -1 } } }, expected: { _id: 1, a: [1, 2, 9, 3] } },
  { name: '$push $sort and $slice keep the top values', doc: { _id: 1, a: [5, 1] }, update: { $push: { a: { $each: [3, 9], $sort: -1, $slice: 3 } } }, expected: { _id: 1, a: [9, 5, 3] } },
  { name: '$push negative $slice keeps the tail', doc: { _id: 1, a: [1, 2, 3] }, update: { $push: { a: { $each: [4], $slice: -2 } } }, expected: { _id: 1, a: [3, 4] } },
  { name: '$push $sort by field orders subdocuments', doc: { _id: 1, a: [{ s: 2 }, { s: 3 }] }, update: { $push: { a: { $each: [{ s: 1 }], $sort: { s: 1 } } } }, expected: { _id: 1, a: [{ s: 1 }, { s: 2 }, { s: 3 }] } },
  { name: '$push empty $each on an existing array is a no-op', doc: { _id: 1, a: [1] }, update: { $push: { a: { $each: [] } } }, expected: { _id: 1, a: [1] }, modified: false },
  { name: '$addToSet adds a new value', doc: { _id: 1, a: [1] }, update: { $addToSet: { a: 2 } }, expected: { _id: 1, a: [1, 2] } },
  { name: '$addToSet skips a present value', doc: { _id: 1, a: [1, 2] }, update: { $addToSet: { a: 2 } }, expected: { _id: 1, a: [1, 2] }, modified: false },
  { name: '$addToSet $each adds each value once', doc: { _id: 1, a: [1] }, update: { $addToSet: { a: { $each: [1, 3, 3, 4] } } }, expected: { _id: 1, a: [1, 3, 4] } },
  { name: '$addToSet creates an array', doc: { _id: 1 }, update: { $addToSet: { a: { $each: [2, 2] } } }, expected: { _id: 1, a: [2] } },
  { name: '$pop 1 removes the last element', doc: { _id: 1, a: [1, 2, 3] }, update: { $pop: { a: 1 } }, expected: { _id: 1, a: [1, 2] } },
  { name: '$pop -1 removes the first element', doc: { _id: 1, a: [1, 2, 3] }, update: { $pop: { a: -1 } }, expected: { _id: 1, a: [2, 3] } },
  { name: '$pop of an empty array is a no-op', doc: { _id: 1, a: [] }, update: { $pop: { a: 1 } }, expected: { _id: 1, a: [] }, modified: false },
  { name: '$pull removes equal values', doc: { _id: 1, a: [1, 2, 1, 3] }, update: { $pull: { a: 1 } }, expected: { _id: 1, a: [2, 3] } },
  { name: '$pull with a condition removes matching values', doc: { _id: 1, a: [1, 5, 7, 2] }, update: { $pull: { a: { $gte: 5 } } }, expected: { _id: 1, a: [1, 2] } },
  { name: '$pull with a document matches subdocuments as queries', doc: { _id: 1, a: [{ x: 1, y: 1 }, { x: 2 }, 3] }, update: { $pull: { a: { x: 1 } } }, expected: { _id: 1, a: [{ x: 2 }, 3] } },
  { name: '$pull with $elemMatch-free nested condition', doc: { _id: 1, a: [{ x: 1 }, { x: 5 }] }, update: { $pull: { a: { x: { $gt: 2 } } } }, expected: { _id: 1, a: [{ x: 1 }] } },
  { name: '$pull of a missing field is a no-op', doc: { _id: 1 }, update: { $pull: { a: 1 } }, expected: { _id: 1 }, modified: false },
  { name: '$pullAll removes every listed value', doc: { _id: 1, a: [1, 2, 3, 1] }, update: { $pullAll: { a: [1, 3] } }, expected: { _id: 1, a: [2] } },
  { name: '$bit and/or/xor on ints', doc: { _id: 1, a: 13 }, update: { $bit: { a: { and: 10, or: 1, xor: 2 } } }, expected: { _id: 1, a: 11 } },
  { name: '$bit with a long widens to long', doc: { _id: 1, a: 1 }, update: { $bit: { a: { or: Long.fromNumber(2) } } }, expected: { _id: 1, a: Long.fromNumber(3) } },
  { name: '$bit creates a missing field from zero', doc: { _id: 1 }, update: { $bit: { a: { or: 5 } } }, expected: { _id: 1, a: 5 } },
  { name: 'an empty operator is a no-op', doc: { _id: 1 }, update: { $set: {} }, expected: { _id: 1 }, modified: false },
];

describe('update modifiers', () => {
  for (const c of cases) {
    it(c.name, () => {
      const before = structuredClone(c.doc);
      const { doc, modified } = run(c.doc, c.update, {}, { isUpsertInsert: c.insert ?? false });
      assert.deepStrictEqual(doc, c.expected);
      assert.deepStrictEqual(Object.keys(doc), Object.keys(c.expected));
      assert.equal(modified, c.modified ?? true);
      assert.deepStrictEqual(c.doc, before, 'the input document is not mutated');
    });
  }
});
