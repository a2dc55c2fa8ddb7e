import { BSONSymbol, Code, MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareValues } from './compare.js';
import { encodeKey, type Ordering } from './key_string.js';

const encodeValue = (v: unknown): Buffer => encodeKey([v]);
import { Binary, BSONRegExp, Decimal128, Double, Long, MinKey, ObjectId, Timestamp } from './values.js';

function sign(x: number): number {
  return x < 0 ? -1 : x > 0 ? 1 : 0;
}

function compareKeys(a: readonly unknown[], b: readonly unknown[], ordering: Ordering): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return ordering[i] === -1 ? -c : c;
  }
  return 0;
}

function byteOrder(a: readonly unknown[], b: readonly unknown[], ordering?: Ordering): number {
  return sign(Buffer.compare(encodeKey(a, ordering), encodeKey(b, ordering)));
}

const TWO_53 = 2 ** 53;
const edgeDoubles = [
  0, -0, 1, -1, 0.5, -0.5, 1e-300, -1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MAX_VALUE,
  Infinity, -Infinity, NaN, TWO_53, TWO_53 + 2, -TWO_53, 2 ** 63, -(2 ** 63), 2 ** 64, 1 + Number.EPSILON, 1 - Number.EPSILON / 2,
  2147483647.5, 9007199254740991.5 - 0.5, 4503599627370495.5, 0.1, 0.2, 0.30000000000000004,
];
const edgeLongs = [
  0n, 1n, -1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 53n - 1n, -(2n ** 53n) - 1n, 2n ** 62n, 2n ** 63n - 1n, -(2n ** 63n),
  2n ** 63n - 1024n, 2n ** 63n - 512n, 2147483648n, -2147483649n,
];

// The exact decimal text of n / 2^k (n × 5^k × 10^-k), a decimal equal to that double.
function dyadicText(n: number, k: number): string {
  return `${BigInt(n) * 5n ** BigInt(k)}E-${k}`;
}

const edgeDecimals = [
  '0', '-0', '1', '1.5', '-2.50', '0.1', '1E+2', 'NaN', 'Infinity', '-Infinity', '123456789.123456789', '1E-400',
  '9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807', '9223372036854775808', '-9223372036854775808',
  '-9223372036854775809', '18446744073709551615', '18446744073709551616', '0.3', '0.30000000000000004', '0.1000000000000000055511151231257827',
  '1.000000000000000000000000000000001', '0.9999999999999999999999999999999999', '1E-6176', '-1E-6176',
  '9.999999999999999999999999999999999E+6144', '4.940656458412465441765687928682213E-324', '5E-324', '2.2250738585072014E-308',
  '1.797693134862315708145274237317044E+308', '1.797693134862315708145274237317044E+309', '1E-1090', '1E-1091', '1E-330', '9.999E-329',
];

function decimalArb(): fc.Arbitrary<Decimal128> {
  return fc.oneof(
    fc.constantFrom(...edgeDecimals),
    // Any coefficient and exponent Decimal128 holds, and a denser band around ordinary values.
    fc.tuple(fc.bigInt({ min: -(10n ** 34n) + 1n, max: 10n ** 34n - 1n }), fc.integer({ min: -6176, max: 6111 })).map(([c, e]) => `${c}E${e}`),
    fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: -30, max: 10 })).map(([c, e]) => `${c}E${e}`),
    // Decimals equal to a double (or an integer): they must tie with it.
    fc.tuple(fc.integer({ min: -(2 ** 30), max: 2 ** 30 }), fc.integer({ min: 0, max: 20 })).map(([n, k]) => dyadicText(n, k)),
  ).map((text) => Decimal128.fromString(text));
}

const doubleArb = fc.oneof(
  fc.constantFrom(...edgeDoubles),
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }).map((n) => n / 8),
);
const numberArb = fc.oneof(
  fc.integer({ min: -2147483648, max: 2147483647 }),
  fc.integer({ min: -5, max: 5 }),
  doubleArb.map((d) => new Double(d)),
  fc.oneof(fc.constantFrom(...edgeLongs), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -10n, max: 10n }))
    .map((b) => Long.fromBigInt(b)),
  { weight: 3, arbitrary: decimalArb() },
);

const stringArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: fc.constantFrom('a', 'b', '\0', '\u00ff', '\uffff', '\u{10000}', '\u00e9'), maxLength: 5 }),
);

const scalarArb = fc.oneof(
  { weight: 5, arbitrary: numberArb },
  { weight: 3, arbitrary: stringArb },
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(new MinKey()),
  fc.constant(new MaxKey()),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }).map((n) => new Date(n * 1e12)),
  fc.uint8Array({ maxLength: 4 }).chain((bytes) => fc.constantFrom(0, 4, 128).map((t) => new Binary(bytes, t))),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((b) => new ObjectId(b)),
  fc.tuple(fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0xffffffff), fc.constantFrom(0, 1, 0xffffffff))
    .map(([t, i]) => new Timestamp({ t, i })),
  fc.tuple(fc.constantFrom('a', 'ab', '', 'b'), fc.constantFrom('', 'i', 'im')).map(([p, o]) => new BSONRegExp(p, o)),
  fc.constantFrom('x', 'y').map((s) => new BSONSymbol(s)),
  fc.constantFrom('f()', 'g()').map((s) => new Code(s)),
);

const { value: valueArb } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: scalarArb },
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc
    .array(fc.tuple(fc.constantFrom('a', 'b', 'a\0', '', 'é'), tie('value')), { maxLength: 3 })
    .map((entries) => Object.fromEntries(entries)),
}));

// Pairs that are close enough to exercise ties: the second is often a re-typed or tweaked copy.
function near(v: unknown): fc.Arbitrary<unknown> {
  if (typeof v === 'number') {
    const same = Number.isInteger(v) && Math.abs(v) < 1e15 ? [Decimal128.fromString(String(v))] : [];
    return fc.constantFrom(v, new Double(v), Long.fromNumber(v), v + 1, ...same);
  }
  return fc.constant(v);
}

test('single values compare as bytes exactly as compareValues orders them', () => {
  fc.assert(
    fc.property(valueArb, valueArb, (a, b) => {
      assert.equal(byteOrder([a], [b]), sign(compareValues(a, b)));
    }),
    { numRuns: 3000 },
  );
});

test('numbers of every width compare as bytes exactly as compareValues orders them', () => {
  fc.assert(
    fc.property(numberArb, numberArb, (a, b) => {
      assert.equal(byteOrder([a], [b]), sign(compareValues(a, b)));
    }),
    { numRuns: 5000 },
  );
});

test('values equal under compareValues encode to identical bytes', () => {
  fc.assert(
    fc.property(valueArb.chain((a) => fc.tuple(fc.constant(a), near(a))), ([a, b]) => {
      if (compareValues(a, b) === 0) assert.deepEqual(encodeValue(a), encodeValue(b));
    }),
  );
});

test('compound keys with mixed orderings compare as bytes element by element', () => {
  const keyPair = fc.integer({ min: 1, max: 4 }).chain((n) =>
    fc.tuple(
      fc.array(valueArb, { minLength: n, maxLength: n }),
      fc.array(valueArb, { minLength: n, maxLength: n }),
      fc.array(fc.constantFrom<1 | -1>(1, -1), { minLength: n, maxLength: n }),
      fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    ),
  );
  fc.assert(
    fc.property(keyPair, ([a, b, ordering, shared]) => {
      // Share some elements so that later elements decide the order.
      const b2 = b.map((v, i) => (shared[i] ? a[i] : v));
      assert.equal(byteOrder(a, b2, ordering), compareKeys(a, b2, ordering));
    }),
    { numRuns: 3000 },
  );
});

const cases: [string, unknown, unknown, number][] = [
  ['int, long and double 1 are equal', 1, Long.fromNumber(1), 0],
  ['double 1.0 equals int 1', new Double(1), 1, 0],
  ['-0 equals 0', new Double(-0), 0, 0],
  ['NaN equals NaN', new Double(NaN), NaN, 0],
  ['NaN is below -Infinity', NaN, -Infinity, -1],
  ['-Infinity is below the lowest long', -Infinity, Long.fromBigInt(-(2n ** 63n)), -1],
  ['+Infinity is above the highest long', Infinity, Long.fromBigInt(2n ** 63n - 1n), 1],
  ['2^53 + 1 as a long is above 2^53 as a double', Long.fromBigInt(2n ** 53n + 1n), new Double(2 ** 53), 1],
  ['2^63 - 1 as a long is below 2^63 as a double', Long.fromBigInt(2n ** 63n - 1n), new Double(2 ** 63), -1],
  ['a tiny fraction above an integer is above it', 1 + Number.EPSILON, 1, 1],
  ['the smallest subnormal is above zero', 5e-324, 0, 1],
  ['decimal 1.5 equals double 1.5', Decimal128.fromString('1.50'), 1.5, 0],
  ['decimal 0.1 is below the double 0.1 (which is 0.1000000000000000055…)', Decimal128.fromString('0.1'), 0.1, -1],
  ['decimal 0.3 is above the double 0.3 (which is 0.2999999999999999888…)', Decimal128.fromString('0.3'), 0.3, 1],
  ['decimal 2^53 + 1 equals the long', Decimal128.fromString('9007199254740993'), Long.fromBigInt(2n ** 53n + 1n), 0],
  ['decimal 2^53 + 1 is above the double 2^53', Decimal128.fromString('9007199254740993'), TWO_53, 1],
  ['decimal 2^63 is above the highest long', Decimal128.fromString('9223372036854775808'), Long.fromBigInt(2n ** 63n - 1n), 1],
  ['decimal 2^63 equals the double 2^63', Decimal128.fromString('9.223372036854775808E18'), 2 ** 63, 0],
  ['a decimal a 34th digit above 1 is above 1', Decimal128.fromString('1.000000000000000000000000000000001'), 1, 1],
  ['decimals a 34th digit apart are told apart', Decimal128.fromString('1.000000000000000000000000000000001'), Decimal128.fromString('1.000000000000000000000000000000002'), -1],
  ['the smallest decimal is above zero', Decimal128.fromString('1E-6176'), 0, 1],
  ['the smallest decimal is below the smallest double', Decimal128.fromString('1E-6176'), 5e-324, -1],
  ['a negative tiny decimal is below -0', Decimal128.fromString('-1E-6176'), -0, -1],
  ['tiny decimals keep their order', Decimal128.fromString('2E-1200'), Decimal128.fromString('1E-1100'), -1],
  ['the largest decimal is below +Infinity and above the largest double', Decimal128.fromString('9.999999999999999999999999999999999E+6144'), Infinity, -1],
  ['a decimal above the largest double is above it', Decimal128.fromString('1.8E+308'), Number.MAX_VALUE, 1],
  ['decimal NaN equals double NaN', Decimal128.fromString('NaN'), NaN, 0],
  ['decimal -Infinity equals double -Infinity', Decimal128.fromString('-Infinity'), -Infinity, 0],
  ['decimal -0 equals 0', Decimal128.fromString('-0E+5'), 0, 0],
  ['MinKey is below null', new MinKey(), null, -1],
  ['undefined is below null', undefined, null, -1],
  ['null is below numbers', null, NaN, -1],
  ['numbers are below strings', Infinity, '', -1],
  ['a string is above its prefix', 'ab', 'a', 1],
  ['an embedded NUL sorts above the end of the string', 'a\0', 'a', 1],
  ['an embedded NUL sorts below every other character', 'a\0', 'a\x01', -1],
  ['strings compare as UTF-8 bytes, not UTF-16 units', '\u{10000}', '\uffff', 1],
  ['a symbol equals the string with the same text', new BSONSymbol('x'), 'x', 0],
  ['objects compare field types before field names', { b: 1 }, { a: 'x' }, -1],
  ['objects compare field names before values', { a: 2 }, { b: 1 }, -1],
  ['a shorter object sorts before one it prefixes', { a: 1 }, { a: 1, b: MinKey }, -1],
  ['undefined fields are missing', { a: 1, b: undefined }, { a: 1 }, 0],
  ['arrays compare element by element', [1, 2], [1, 3], -1],
  ['an empty array sorts first', [], [new MinKey()], -1],
  ['objects are below arrays', { z: 1 }, [], -1],
  ['shorter binData sorts first whatever its bytes', new Binary(new Uint8Array([9]), 0), new Binary(new Uint8Array([0, 0]), 0), -1],
  ['binData subtype precedes bytes', new Binary(new Uint8Array([9]), 0), new Binary(new Uint8Array([0]), 1), -1],
  ['ObjectIds compare as bytes', new ObjectId('000000000000000000000001'), new ObjectId('ff0000000000000000000000'), -1],
  ['false is below true', false, true, -1],
  ['dates before the epoch are below it', new Date(-1), new Date(0), -1],
  ['timestamps are unsigned', new Timestamp({ t: 0x80000000, i: 0 }), new Timestamp({ t: 1, i: 0 }), 1],
  ['timestamps compare seconds before increments', new Timestamp({ t: 1, i: 5 }), new Timestamp({ t: 2, i: 0 }), -1],
  ['regexes compare patterns before options', new BSONRegExp('a', 'x'), new BSONRegExp('b', ''), -1],
  ['MaxKey is above everything', new MaxKey(), new Code('x'), 1],
];

for (const [name, a, b, expected] of cases) {
  test(name, () => {
    assert.equal(byteOrder([a], [b]), expected);
    assert.equal(sign(compareValues(a, b)), expected);
  });
}

test('a descending field reverses that field only', () => {
  assert.equal(byteOrder([1, 'b'], [2, 'a'], [1, -1]), -1);
  assert.equal(byteOrder([1, 'b'], [1, 'a'], [1, -1]), -1);
  assert.equal(byteOrder(['a', 5], ['ab', 0], [-1, 1]), 1);
});

test('every element encoding is prefix-free, so a string ending never ties with a longer one', () => {
  // Descending 'a' then MinKey against descending 'a\0': without self-delimiting strings the
  // inverted terminator could tie with the next element's type byte.
  assert.equal(byteOrder(['a', new MinKey()], ['a\0', new MinKey()], [-1, 1]), 1);
  assert.equal(byteOrder([[1], new MaxKey()], [[1, 2], new MinKey()], [-1, 1]), 1);
  // Inside an object a field name is followed by raw value bytes, which may be anything.
  const high = new ObjectId('ffffffffffffffffffffffff');
  const low = new ObjectId('000000000000000000000000');
  assert.equal(byteOrder([{ a: high }], [{ 'a\0': low }]), -1);
});

// Doubles that differ in a single bit of the mantissa: every bit must reach the bytes.
test('tells apart and orders doubles that differ in any one mantissa bit', () => {
  const plus = (x: number, bit: number): number => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    view.setBigUint64(0, view.getBigUint64(0) + (1n << BigInt(bit)));
    return view.getFloat64(0);
  };
  for (const x of [1, Math.PI, 1e300, 123456789.123, 2 ** -1000, 5e-324, -7.25, -(2 ** 60)]) {
    for (let bit = 0; bit < 52; bit++) {
      const y = plus(x, bit);
      if (!Number.isFinite(y)) continue;
      assert.equal(sign(Buffer.compare(encodeValue(x), encodeValue(y))), compareValues(x, y), `${x} against ${y}`);
      assert.equal(sign(Buffer.compare(encodeKey([x], [-1]), encodeKey([y], [-1]))), -compareValues(x, y), `${x} against ${y}, descending`);
    }
  }
});
