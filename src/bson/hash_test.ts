import { BSONSymbol, Code, MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashValue } from './hash.js';
import { Binary, BSONRegExp, Decimal128, Double, Long, MinKey, ObjectId, Timestamp } from './values.js';

// Expected hashes are MongoDB's own test vectors (src/mongo/db/hasher_test.cpp), which its
// comments describe as determined experimentally and fixed across platforms and versions. Its
// date vector 0x5566778811223344 lies outside the range of a JS Date and is left out.
const vectors: [string, unknown, bigint][] = [
  ['int 42', 42, -944302157085130861n],
  ['double 42.123, truncated to 42', new Double(42.123), -944302157085130861n],
  ['long 42', Long.fromNumber(42), -944302157085130861n],
  ['int 0', 0, 4854801880128277513n],
  ['double 0.456', 0.456, 4854801880128277513n],
  ['NaN, treated as 0', NaN, 4854801880128277513n],
  ['int 1', 1, 5902408780260971510n],
  ['double 1.987', 1.987, 5902408780260971510n],
  ['int -1', -1, 1140205862565771219n],
  ['double -1.789', -1.789, 1140205862565771219n],
  ['int32 min', -2147483648, 6165898260261354870n],
  ['int32 min as a double', new Double(-2147483648), 6165898260261354870n],
  ['int32 max as a long', Long.fromNumber(2147483647), 1143184177162245883n],
  ['the largest double, clamped to int64 max', Number.MAX_VALUE, 921523596458303250n],
  ['int64 max', Long.MAX_VALUE, 921523596458303250n],
  ['the most negative double, clamped to int64 min', -Number.MAX_VALUE, 4532067210535695462n],
  ['int64 min', Long.MIN_VALUE, 4532067210535695462n],
  ['MinKey', new MinKey(), 7961148599568647290n],
  ['MaxKey', new MaxKey(), 5504842513779440750n],
  ['undefined', undefined, 40158834000849533n],
  ['null', null, 2338878944348059895n],
  ['a string', 'abc', 8478485326885698097n],
  ['a symbol, hashed as its string', new BSONSymbol('abc'), 8478485326885698097n],
  ['the empty string', '', 2049396243249673340n],
  ['an object', { a: 'abc', b: Long.fromNumber(123) }, 4771603801758380216n],
  ['the empty object', {}, 7980500913326740417n],
  ['an array', ['bar', 'baz', 'qux'], -2938911267422831539n],
  ['the empty array', [], 8849948234993459283n],
  ['binData subtype 0', new Binary(new Uint8Array([0, 1, 2, 3, 4, 6]), 0), 7252465090394235301n],
  ['binData subtype 128', new Binary(new Uint8Array([0, 1, 2, 3, 4, 6]), 128), 5736670452907618262n],
  ['a UUID', new Binary(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]), 4), 6084661258071355978n],
  ['an ObjectId', new ObjectId('010203040506070809101112'), -5588663249627035708n],
  ['the zero ObjectId', new ObjectId('000000000000000000000000'), -4293118519463489418n],
  ['true', true, 6405873908747105701n],
  ['false', false, 6289544573401934092n],
  ['the epoch', new Date(0), -1178696894582842035n],
  ['a timestamp', new Timestamp({ t: 0x55667788, i: 0x11223344 }), 4873046866288452390n],
  ['the zero timestamp', new Timestamp({ t: 0, i: 0 }), -7867208682377458672n],
  ['a regex', new BSONRegExp('mongodb', ''), -7275792090268217043n],
  ['a regex with options', new BSONRegExp('.*', 'i'), 7095855029187981886n],
  ['code', new Code('func f() { return 1; }'), 6861638109178014270n],
  ['code with scope', new Code('func f() { return 1; }', { c: true }), 501342939894575968n],
];

for (const [name, value, expected] of vectors) {
  test(`hashes ${name} as MongoDB does`, () => {
    assert.equal(hashValue(value).toBigInt(), expected);
  });
}

test('a non-zero seed changes the hash as MongoDB does', () => {
  assert.equal(hashValue(42, 40513).toBigInt(), 4302929669663179197n);
  assert.equal(hashValue(['sunflower', 'sesame', 'mustard'], 40513).toBigInt(), -9222615859251096151n);
});

test('numbers nested in objects and arrays are squashed to int64 too', () => {
  assert.equal(hashValue({ x: { a: 3, b: [3.1, { c: 3 }] } }).toBigInt(), hashValue({ x: { a: 3.1, b: [3, { c: new Double(3) }] } }).toBigInt());
});

test('an object and an array with the same numeric field names hash differently', () => {
  assert.notEqual(hashValue({ 0: 0, 1: 1 }).toBigInt(), hashValue([0, 1]).toBigInt());
});

test('sub-document grouping matters', () => {
  assert.notEqual(hashValue({ a: {}, b: 1 }).toBigInt(), hashValue({ a: { b: 1 } }).toBigInt());
});

test('a double of exactly 2^63 hashes as int64 min, keeping an old overflow', () => {
  assert.equal(hashValue(2 ** 63).toBigInt(), hashValue(Long.MIN_VALUE).toBigInt());
  assert.equal(hashValue(2 ** 64).toBigInt(), hashValue(Long.MAX_VALUE).toBigInt());
});

test('decimals round half to even before hashing', () => {
  assert.equal(hashValue(Decimal128.fromString('2.5')).toBigInt(), hashValue(2).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('3.5')).toBigInt(), hashValue(4).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('-2.7')).toBigInt(), hashValue(-3).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('4.2E+1')).toBigInt(), hashValue(42).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('NaN')).toBigInt(), hashValue(0).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('1E+30')).toBigInt(), hashValue(Long.MAX_VALUE).toBigInt());
  assert.equal(hashValue(Decimal128.fromString('-Infinity')).toBigInt(), hashValue(Long.MIN_VALUE).toBigInt());
});

test('undefined fields of an object are missing', () => {
  assert.equal(hashValue({ a: 1, b: undefined }).toBigInt(), hashValue({ a: 1 }).toBigInt());
});
