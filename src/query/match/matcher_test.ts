import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, BSONRegExp, Decimal128, Double, Long, MaxKey, MinKey, ObjectId } from 'bson';
import type { Doc } from '../../bson/values.js';
import { compileFilter, type MatchDetails } from './matcher.js';

type Case = [filter: Doc, doc: Doc, expected: boolean];

function check(cases: Case[]): void {
  for (const [filter, doc, expected] of cases) {
    const actual = compileFilter(filter).matches(doc);
    assert.equal(actual, expected, `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`);
  }
}

function keyOf(filter: Doc, doc: Doc): string | undefined {
  const details: MatchDetails = {};
  assert.ok(compileFilter(filter).matches(doc, details), `${JSON.stringify(filter)} should match`);
  return details.elemMatchKey;
}

function rejects(filter: Doc, code: number, message?: RegExp): void {
  assert.throws(() => compileFilter(filter), (err: { code: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('equality matches scalars, embedded documents with field order, and arrays', () => {
  check([
    [{ a: 1 }, { a: 1 }, true],
    [{ a: 1 }, { a: new Double(1) }, true],
    [{ a: 1 }, { a: Long.fromNumber(1) }, true],
    [{ a: 1 }, { a: Decimal128.fromString('1.0') }, true],
    [{ a: 1 }, { a: '1' }, false],
    [{ a: { b: 1, c: 2 } }, { a: { b: 1, c: 2 } }, true],
    [{ a: { b: 1, c: 2 } }, { a: { c: 2, b: 1 } }, false],
    [{ a: { b: 1 } }, { a: { b: 1, c: 2 } }, false],
    [{ a: [1, 2] }, { a: [1, 2] }, true],
    [{ a: [1, 2] }, { a: [2, 1] }, false],
    [{ a: [1, 2] }, { a: [[1, 2], 3] }, true],
    [{ a: 2 }, { a: [1, 2, 3] }, true],
    [{ a: [] }, { a: [] }, true],
    [{ a: [] }, { a: [[]] }, true],
    [{ a: { $eq: [1] } }, { a: [1] }, true],
    [{ a: { $eq: 1 } }, { a: [[1]] }, false],
    [{}, { a: 1 }, true],
  ]);
});

test('null matches null, missing, and arrays containing null', () => {
  check([
    [{ a: null }, {}, true],
    [{ a: null }, { a: null }, true],
    [{ a: null }, { a: [1, null] }, true],
    [{ a: null }, { a: [1] }, false],
    [{ a: null }, { a: 0 }, false],
    [{ 'a.b': null }, { a: 1 }, true],
    [{ 'a.b': null }, { a: { c: 1 } }, true],
    [{ 'a.b': null }, { a: [{ c: 1 }] }, true],
    [{ 'a.b': null }, { a: [{ b: 1 }] }, false],
    [{ 'a.b': null }, { a: [1, 2] }, false],
    [{ 'a.b': null }, { a: [] }, false],
    [{ a: { $ne: null } }, {}, false],
    [{ a: { $ne: null } }, { a: [null, 1] }, false],
    [{ a: { $ne: null } }, { a: 0 }, true],
    [{ a: { $gte: null } }, {}, true],
    [{ a: { $lte: null } }, { a: null }, true],
    [{ a: { $gt: null } }, { a: null }, false],
    [{ a: { $lt: null } }, {}, false],
    [{ a: { $in: [null, 5] } }, {}, true],
    [{ a: { $nin: [null] } }, {}, false],
  ]);
});

test('comparisons only match values of the same canonical type', () => {
  check([
    [{ a: { $gt: 1 } }, { a: 2 }, true],
    [{ a: { $gt: 1 } }, { a: 'x' }, false],
    [{ a: { $lt: 'b' } }, { a: 'a' }, true],
    [{ a: { $lt: 'b' } }, { a: 1 }, false],
    [{ a: { $gt: 1 } }, { a: [0, 5] }, true],
    [{ a: { $gt: 1, $lt: 3 } }, { a: [0, 5] }, true],
    [{ a: { $gte: new Date(0) } }, { a: new Date(5) }, true],
    [{ a: { $gte: new Date(0) } }, { a: 5 }, false],
    [{ a: { $gt: [1] } }, { a: [2] }, true],
    [{ a: { $gt: {} } }, { a: { x: 1 } }, true],
    [{ a: { $gt: Long.fromNumber(1) } }, { a: 1.5 }, true],
    [{ a: { $lt: new MaxKey() } }, { a: 'anything' }, true],
    [{ a: { $lt: new MaxKey() } }, {}, true],
    [{ a: { $gt: new MinKey() } }, { a: null }, true],
    [{ a: { $gte: new MinKey() } }, { a: new MinKey() }, true],
    [{ a: { $eq: new MaxKey() } }, { a: 1 }, false],
    [{ a: { $lte: NaN } }, { a: NaN }, true],
    [{ a: { $lt: 1 } }, { a: NaN }, false],
    [{ a: { $gt: NaN } }, { a: 1 }, false],
    [{ a: NaN }, { a: NaN }, true],
  ]);
});

test('dotted paths traverse arrays and use numeric components as index and field name', () => {
  check([
    [{ 'a.b': 1 }, { a: { b: 1 } }, true],
    [{ 'a.b': 1 }, { a: [{ b: 2 }, { b: 1 }] }, true],
    [{ 'a.b': 2 }, { a: [{ b: [1, 2] }] }, true],
    [{ 'a.b.c': 1 }, { a: [{ b: [{ c: 1 }] }] }, true],
    [{ 'a.b': 1 }, { a: [[{ b: 1 }]] }, false],
    [{ 'a.0': 5 }, { a: [5, 6] }, true],
    [{ 'a.1': 5 }, { a: [5, 6] }, false],
    [{ 'a.0': 5 }, { a: { 0: 5 } }, true],
    [{ 'a.0': 5 }, { a: [{ 0: 5 }] }, true],
    [{ 'a.0.b': 1 }, { a: [{ b: 1 }] }, true],
    [{ 'a.0.b': 1 }, { a: [[{ b: 1 }]] }, true],
    [{ 'a.00': 5 }, { a: [5] }, false],
    [{ 'a.1.b': 1 }, { a: [{ b: 1 }, { b: 2 }] }, false],
  ]);
});

test('the elemMatchKey reports the position in the outermost array', () => {
  assert.equal(keyOf({ a: 3 }, { a: [1, 2, 3] }), '2');
  assert.equal(keyOf({ 'a.b': 5 }, { a: [{ b: 1 }, { b: [4, 5] }] }), '1');
  assert.equal(keyOf({ a: { $elemMatch: { $gt: 1 } } }, { a: [0, 2] }), '1');
  assert.equal(keyOf({ a: { $elemMatch: { x: 1 } } }, { a: [{ x: 0 }, { x: 1 }] }), '1');
  assert.equal(keyOf({ a: [1, 2] }, { a: [1, 2] }), undefined);
  assert.equal(keyOf({ 'a.1': 2 }, { a: [1, 2] }), undefined);
  assert.equal(keyOf({ b: 1, a: { $gte: 2 } }, { b: 1, a: [1, 2] }), '1');
  assert.equal(keyOf({ $or: [{ a: 2 }] }, { a: [1, 2] }), undefined);
  assert.equal(keyOf({ $and: [{ a: 2 }] }, { a: [1, 2] }), '1');
});

test('$in, $nin and regexes inside $in', () => {
  check([
    [{ a: { $in: [1, 2] } }, { a: 2 }, true],
    [{ a: { $in: [1, 2] } }, { a: [3, 2] }, true],
    [{ a: { $in: [] } }, { a: 1 }, false],
    [{ a: { $in: [[1, 2]] } }, { a: [1, 2] }, true],
    [{ a: { $in: [new BSONRegExp('^ab')] } }, { a: 'abc' }, true],
    [{ a: { $in: [/^AB/i, 5] } }, { a: 'abc' }, true],
    [{ a: { $nin: [1, 2] } }, { a: 3 }, true],
    [{ a: { $nin: [1, 2] } }, { a: [3, 1] }, false],
    [{ a: { $nin: [1] } }, {}, true],
  ]);
  rejects({ a: { $in: 1 } }, 2, /\$in needs an array/);
  rejects({ a: { $in: [{ $gt: 1 }] } }, 2, /cannot nest \$ under \$in/);
});

test('logical operators combine filters', () => {
  check([
    [{ $and: [{ a: 1 }, { b: 2 }] }, { a: 1, b: 2 }, true],
    [{ $and: [{ a: 1 }, { b: 2 }] }, { a: 1 }, false],
    [{ $or: [{ a: 1 }, { b: 2 }] }, { b: 2 }, true],
    [{ $nor: [{ a: 1 }, { b: 2 }] }, { c: 1 }, true],
    [{ $nor: [{ a: 1 }] }, { a: [1] }, false],
    [{ a: { $not: { $gt: 5 } } }, { a: 3 }, true],
    [{ a: { $not: { $gt: 5 } } }, {}, true],
    [{ a: { $not: { $gt: 5 } } }, { a: [3, 6] }, false],
    [{ a: { $not: /^x/ } }, { a: 'yx' }, true],
    [{ a: { $not: { $regex: '^x' } } }, { a: 'xy' }, false],
    [{ $alwaysTrue: 1 }, {}, true],
    [{ $alwaysFalse: 1 }, {}, false],
    [{ $comment: 'why', a: 1 }, { a: 1 }, true],
  ]);
  rejects({ $and: [] }, 2, /nonempty array/);
  rejects({ $or: {} }, 2, /must be an array/);
  rejects({ $or: [1] }, 2, /full objects/);
  rejects({ a: { $not: 5 } }, 2, /\$not needs a regex or a document/);
  rejects({ a: { $not: {} } }, 2, /\$not cannot be empty/);
});

test('$exists, $type and $size', () => {
  check([
    [{ a: { $exists: true } }, { a: null }, true],
    [{ a: { $exists: true } }, {}, false],
    [{ a: { $exists: false } }, {}, true],
    [{ a: { $exists: 0 } }, { a: 1 }, false],
    [{ 'a.b': { $exists: true } }, { a: [{ c: 1 }, { b: 1 }] }, true],
    [{ 'a.b': { $exists: true } }, { a: [1] }, false],
    [{ 'a.b': { $exists: false } }, { a: [1] }, true],
    [{ a: { $exists: true } }, { a: [] }, true],
    [{ a: { $type: 'string' } }, { a: 'x' }, true],
    [{ a: { $type: 2 } }, { a: 'x' }, true],
    [{ a: { $type: 'number' } }, { a: Long.fromNumber(3) }, true],
    [{ a: { $type: 'double' } }, { a: 1.5 }, true],
    [{ a: { $type: 'int' } }, { a: 1 }, true],
    [{ a: { $type: 'double' } }, { a: 1 }, false],
    [{ a: { $type: ['string', 'int'] } }, { a: 1 }, true],
    [{ a: { $type: 'array' } }, { a: [1] }, true],
    [{ a: { $type: 'array' } }, { a: 1 }, false],
    [{ a: { $type: 'int' } }, { a: ['x', 1] }, true],
    [{ a: { $type: 'null' } }, {}, false],
    [{ a: { $type: 'objectId' } }, { a: new ObjectId() }, true],
    [{ a: { $size: 2 } }, { a: [1, 2] }, true],
    [{ a: { $size: 1 } }, { a: [[1, 2]] }, true],
    [{ a: { $size: 0 } }, { a: [] }, true],
    [{ a: { $size: 0 } }, {}, false],
    [{ 'a.b': { $size: 1 } }, { a: [{ b: [1] }] }, true],
  ]);
  rejects({ a: { $type: 'foo' } }, 2, /Unknown type name alias: foo/);
  rejects({ a: { $type: 99 } }, 2, /Invalid numerical type code/);
  rejects({ a: { $type: [] } }, 2, /at least one type/);
  rejects({ a: { $size: 'x' } }, 2, /\$size needs a number/);
  rejects({ a: { $size: 1.5 } }, 2);
  rejects({ a: { $size: -1 } }, 2);
});

test('$all, including with $elemMatch', () => {
  check([
    [{ a: { $all: [1, 2] } }, { a: [2, 3, 1] }, true],
    [{ a: { $all: [1, 2] } }, { a: [1] }, false],
    [{ a: { $all: [1] } }, { a: 1 }, true],
    [{ a: { $all: [] } }, { a: [] }, false],
    [{ a: { $all: [[1, 2]] } }, { a: [1, 2] }, true],
    [{ a: { $all: [[1, 2]] } }, { a: [[1, 2], 3] }, true],
    [{ a: { $all: [/^a/, /b$/] } }, { a: ['ab'] }, true],
    [{ a: { $all: [{ $elemMatch: { x: 1 } }, { $elemMatch: { y: 2 } }] } }, { a: [{ x: 1 }, { y: 2 }] }, true],
    [{ a: { $all: [{ $elemMatch: { x: 1, y: 2 } }] } }, { a: [{ x: 1 }, { y: 2 }] }, false],
  ]);
  rejects({ a: { $all: 1 } }, 2, /\$all needs an array/);
  rejects({ a: { $all: [{ $elemMatch: { x: 1 } }, 1] } }, 2, /consistent/);
  rejects({ a: { $all: [1, { $gt: 1 }] } }, 2, /no \$ expressions in \$all/);
});

test('$elemMatch in value and object forms', () => {
  check([
    [{ a: { $elemMatch: { $gt: 1, $lt: 3 } } }, { a: [0, 2] }, true],
    [{ a: { $elemMatch: { $gt: 1, $lt: 3 } } }, { a: [0, 5] }, false],
    [{ a: { $elemMatch: { $gt: 1 } } }, { a: 5 }, false],
    [{ a: { $elemMatch: { $gt: 1 } } }, { a: [[5]] }, false],
    [{ a: { $elemMatch: { b: 1, c: 2 } } }, { a: [{ b: 1 }, { c: 2 }] }, false],
    [{ a: { $elemMatch: { b: 1, c: 2 } } }, { a: [{ b: 1, c: 2 }] }, true],
    [{ a: { $elemMatch: { b: { $gt: 1 } } } }, { a: [{ b: [0, 5] }] }, true],
    [{ a: { $elemMatch: { $or: [{ b: 1 }, { c: 1 }] } } }, { a: [{ c: 1 }] }, true],
    [{ a: { $elemMatch: { 0: 1 } } }, { a: [[1]] }, true],
    [{ a: { $elemMatch: {} } }, { a: [{}] }, true],
    [{ a: { $elemMatch: {} } }, { a: [1] }, false],
    [{ a: { $elemMatch: { $elemMatch: { $eq: 1 } } } }, { a: [[1]] }, true],
    [{ a: { $elemMatch: { $ne: 1 } } }, { a: [1, 2] }, true],
    [{ 'a.b': { $elemMatch: { c: 1 } } }, { a: [{ b: [{ c: 1 }] }] }, true],
  ]);
  rejects({ a: { $elemMatch: 1 } }, 2, /\$elemMatch needs an Object/);
});

test('regular expressions honour the i m s x u flags and PCRE anchors', () => {
  check([
    [{ a: /^ab/ }, { a: 'abc' }, true],
    [{ a: new BSONRegExp('^AB', 'i') }, { a: 'abc' }, true],
    [{ a: { $regex: '^AB', $options: 'i' } }, { a: 'abc' }, true],
    [{ a: { $options: 'i', $regex: '^AB' } }, { a: 'abc' }, true],
    [{ a: { $regex: /^AB/i } }, { a: 'abc' }, true],
    [{ a: { $regex: '^b' } }, { a: 'a\nb' }, false],
    [{ a: { $regex: '^b', $options: 'm' } }, { a: 'a\nb' }, true],
    [{ a: { $regex: 'a.b' } }, { a: 'a\nb' }, false],
    [{ a: { $regex: 'a.b', $options: 's' } }, { a: 'a\nb' }, true],
    [{ a: { $regex: 'a b # comment\n c', $options: 'x' } }, { a: 'abc' }, true],
    [{ a: { $regex: 'a\\ b', $options: 'x' } }, { a: 'a b' }, true],
    [{ a: { $regex: 'é', $options: 'u' } }, { a: 'café' }, true],
    [{ a: { $regex: 'a$' } }, { a: 'ba\n' }, true],
    [{ a: { $regex: '\\Aab\\z' } }, { a: 'ab' }, true],
    [{ a: { $regex: '\\-\\"' } }, { a: '-"' }, true],
    [{ a: { $regex: '(?i)ab' } }, { a: 'AB' }, true],
    [{ a: { $regex: '^.$' } }, { a: '😀' }, true],
    [{ a: { $regex: '[[:digit:]]+' } }, { a: 'x12' }, true],
    [{ a: /b/ }, { a: ['a', 'b'] }, true],
    [{ a: /b/ }, { a: 5 }, false],
    [{ a: new BSONRegExp('x', 'i') }, { a: new BSONRegExp('x', 'i') }, true],
    [{ a: { $eq: new BSONRegExp('x') } }, { a: 'x' }, false],
    [{ a: { $eq: new BSONRegExp('x') } }, { a: new BSONRegExp('x') }, true],
  ]);
  rejects({ a: { $regex: 'a', $options: 'z' } }, 51108);
  rejects({ a: { $regex: '(' } }, 51091);
  rejects({ a: { $options: 'i' } }, 2, /\$options needs a \$regex/);
  rejects({ a: { $regex: 5 } }, 2, /\$regex has to be a string/);
  rejects({ a: { $regex: /x/i, $options: 'm' } }, 2, /options set in both/);
  rejects({ a: { $ne: /x/ } }, 2);
});

test('$mod divides with truncation and rejects malformed arguments', () => {
  check([
    [{ a: { $mod: [4, 1] } }, { a: 5 }, true],
    [{ a: { $mod: [4, 1] } }, { a: 5.9 }, true],
    [{ a: { $mod: [4, -1] } }, { a: -5 }, true],
    [{ a: { $mod: [4, 0] } }, { a: Long.fromString('8000000000') }, true],
    [{ a: { $mod: [4, 0] } }, { a: 'x' }, false],
    [{ a: { $mod: [4, 0] } }, { a: NaN }, false],
    [{ a: { $mod: [2.5, 0] } }, { a: 4 }, true],
  ]);
  rejects({ a: { $mod: 4 } }, 2, /needs to be an array/);
  rejects({ a: { $mod: [4] } }, 2, /not enough elements/);
  rejects({ a: { $mod: [4, 1, 2] } }, 2, /too many elements/);
  rejects({ a: { $mod: ['x', 1] } }, 2, /divisor not a number/);
  rejects({ a: { $mod: [0, 1] } }, 2, /divisor cannot be 0/);
  rejects({ a: { $mod: [NaN, 1] } }, 2);
});

test('bitwise operators test numbers as 64-bit two\'s complement and BinData bytes', () => {
  check([
    [{ a: { $bitsAllSet: [0, 1] } }, { a: 3 }, true],
    [{ a: { $bitsAllSet: 3 } }, { a: 2 }, false],
    [{ a: { $bitsAnySet: [1, 5] } }, { a: 2 }, true],
    [{ a: { $bitsAllClear: [0] } }, { a: 2 }, true],
    [{ a: { $bitsAnyClear: [0, 1] } }, { a: 3 }, false],
    [{ a: { $bitsAllSet: [100] } }, { a: -1 }, true],
    [{ a: { $bitsAllSet: [0] } }, { a: 1.5 }, false],
    [{ a: { $bitsAllSet: [0] } }, { a: 'x' }, false],
    [{ a: { $bitsAllSet: [0, 9] } }, { a: new Binary(Buffer.from([1, 2])) }, true],
    [{ a: { $bitsAnySet: new Binary(Buffer.from([4])) } }, { a: 4 }, true],
  ]);
  rejects({ a: { $bitsAllSet: 'x' } }, 2);
  rejects({ a: { $bitsAllSet: [-1] } }, 2);
  rejects({ a: { $bitsAllSet: -1 } }, 2);
});

test('$expr evaluates an aggregation expression against the document', () => {
  check([
    [{ $expr: { $gt: ['$a', '$b'] } }, { a: 2, b: 1 }, true],
    [{ $expr: { $gt: ['$a', '$b'] } }, { a: 1, b: 2 }, false],
    [{ $expr: '$a' }, { a: 0 }, false],
    [{ $expr: '$a' }, {}, false],
    [{ $expr: '$a' }, { a: 'x' }, true],
  ]);
  assert.equal(compileFilter({ $expr: { $eq: ['$a', '$$x'] } }, { variables: { x: 3 } }).matches({ a: 3 }), true);
});

test('unknown and unsupported operators are rejected with MongoDB\'s errors', () => {
  rejects({ a: { $foo: 1 } }, 2, /^unknown operator: \$foo$/);
  rejects({ $foo: 1 }, 2, /^unknown top level operator: \$foo/);
  rejects({ a: { $gt: 1, b: 1 } }, 2, /unknown operator: b/);
  rejects({ a: { $near: [0, 0] } }, 2, /not allowed in this context/);
  rejects({ $text: { $search: 'x' } }, 27);
  rejects({ a: { $elemMatch: { $expr: { $eq: [1, 1] } } } }, 2);
});

test('$where runs its function on each document, and is refused where MongoDB refuses it', () => {
  check([
    [{ $where: 'this.a > 1' }, { a: 2 }, true],
    [{ $where: 'this.a > 1' }, { a: 1 }, false],
    [{ $where: 'function() { return obj.a.length == 2; }' }, { a: [1, 2] }, true],
    [{ b: 1, $where: 'return this.a == 3' }, { a: 3, b: 1 }, true],
    [{ $or: [{ b: 2 }, { $where: 'this.a == 3' }] }, { a: 4, b: 1 }, false],
  ]);
  rejects({ $where: 5 }, 2, /^\$where got bad type$/);
  rejects({ a: { $elemMatch: { $where: 'true' } } }, 2, /^\$elemMatch cannot contain \$where expression$/);
  assert.throws(() => compileFilter({ $where: 'true' }, { javascript: false }), /\$where is not allowed in this context/);
});

test('objects that only look like operators are compared as values', () => {
  check([
    [{ a: { b: { $gt: 1 } } }, { a: { b: { $gt: 1 } } }, true],
    [{ a: { $ref: 'c', $id: 1 } }, { a: { $ref: 'c', $id: 1 } }, true],
  ]);
});

test('DBRef fields are field names under $elemMatch and as a filter of their own, operators elsewhere', () => {
  const doc = { one: { $ref: 'foo', $id: 7 }, members: [{ $ref: 'foo', $id: 7, $db: 'd' }] };
  check([
    [{ 'one.$id': 7 }, doc, true],
    [{ 'one.$ref': 'foo' }, doc, true],
    [{ 'one.$id': { $exists: true } }, doc, true],
    [{ one: { $ref: 'foo', $id: 7 } }, doc, true],
    [{ members: { $elemMatch: { $id: 7 } } }, doc, true],
    [{ members: { $elemMatch: { $id: 8 } } }, doc, false],
    [{ members: { $elemMatch: { $db: 'd', $ref: 'foo' } } }, doc, true],
    // As in MongoDB, a DBRef field's value is compared whole, never read as operators.
    [{ members: { $elemMatch: { $id: { $gt: 6 } } } }, doc, false],
    [{ members: { $elemMatch: { $id: { $gt: 6 } } } }, { members: [{ $id: { $gt: 6 } }] }, true],
    [{ $id: 7 }, { $id: 7 }, true],
  ]);
  rejects({ one: { $id: 7 } }, 2, /unknown operator: \$id/);
});
