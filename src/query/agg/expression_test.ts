import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bsonTypeName, valuesEqual } from '../../bson/compare.js';
import { BSONRegExp, Decimal128, Double, Long, ObjectId, type Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { systemClock } from '../../base/clock.js';
import { withOperationClock } from '../../base/operation_clock.js';
import { compileExpression } from './expression.js';

const doc: Doc = {
  _id: 1,
  i: 5,
  n: null,
  d: new Double(2.5),
  l: Long.fromNumber(10),
  s: 'Hello',
  arr: [1, 2, 3],
  subs: [{ x: 1 }, { x: 2 }, { y: 3 }, 7, [{ x: 4 }]],
  obj: { a: 1, b: { c: 'deep' } },
  date: new Date('2024-03-05T14:07:09.123Z'),
  t: true,
};

function run(expr: unknown, vars?: Record<string, unknown>): unknown {
  return compileExpression(expr, { variables: vars })(doc, vars);
}

// [expression, expected value, expected BSON type name]
type Case = [unknown, unknown, string];

function table(title: string, cases: Case[]): void {
  describe(title, () => {
    for (const [expr, expected, type] of cases) {
      it(`evaluates ${JSON.stringify(expr)} to ${type} ${String(expected)}`, () => {
        const got = run(expr);
        assert.equal(bsonTypeName(got), type, `type of ${String(got)}`);
        assert.ok(valuesEqual(got, expected), `got ${JSON.stringify(got)}`);
      });
    }
  });
}

function fails(title: string, cases: [unknown, number][]): void {
  describe(title, () => {
    for (const [expr, code] of cases) {
      it(`rejects ${JSON.stringify(expr)} with code ${code}`, () => {
        assert.throws(() => run(expr), (err: unknown) => err instanceof MongoError && err.code === code);
      });
    }
  });
}

table('field paths and variables', [
  ['$i', 5, 'int'],
  ['$obj.b.c', 'deep', 'string'],
  ['$subs.x', [1, 2, [4]], 'array'],
  ['$missing', undefined, 'missing'],
  ['$$ROOT.s', 'Hello', 'string'],
  ['$$CURRENT.i', 5, 'int'],
  ['$$REMOVE', undefined, 'missing'],
  [{ $literal: '$i' }, '$i', 'string'],
  [{ a: '$i', b: '$missing' }, { a: 5 }, 'object'],
  [['$i', '$missing'], [5, null], 'array'],
  [{ $let: { vars: { x: 2 }, in: { $multiply: ['$$x', '$i'] } } }, 10, 'int'],
]);

table('arithmetic keeps MongoDB result types', [
  [{ $add: [1, 2] }, 3, 'int'],
  [{ $add: [2147483647, 1] }, Long.fromNumber(2147483648), 'long'],
  [{ $add: ['$i', '$d'] }, 7.5, 'double'],
  [{ $add: ['$i', '$l'] }, Long.fromNumber(15), 'long'],
  [{ $add: [1, null] }, null, 'null'],
  [{ $add: [1, '$missing'] }, null, 'null'],
  [{ $add: ['$date', 1000] }, new Date('2024-03-05T14:07:10.123Z'), 'date'],
  [{ $subtract: ['$date', new Date('2024-03-05T14:07:09.000Z')] }, Long.fromNumber(123), 'long'],
  [{ $subtract: [10, 4] }, 6, 'int'],
  [{ $multiply: [3, '$d'] }, 7.5, 'double'],
  [{ $divide: [10, 4] }, 2.5, 'double'],
  [{ $divide: [10, 5] }, 2, 'double'],
  [{ $mod: [10, 3] }, 1, 'int'],
  [{ $mod: [-10, 3] }, -1, 'int'],
  [{ $abs: -5 }, 5, 'int'],
  [{ $abs: -2147483648 }, Long.fromNumber(2147483648), 'long'],
  [{ $ceil: new Double(1.2) }, 2, 'double'],
  [{ $floor: -1.5 }, -2, 'double'],
  [{ $floor: 3 }, 3, 'int'],
  [{ $round: [2.675, 2] }, 2.68, 'double'],
  [{ $round: [new Double(2.5)] }, 2, 'double'],
  [{ $round: [new Double(3.5)] }, 4, 'double'],
  [{ $round: [1234, -2] }, 1200, 'int'],
  [{ $trunc: [7.89, 1] }, 7.8, 'double'],
  [{ $sqrt: 16 }, 4, 'double'],
  [{ $pow: [2, 10] }, 1024, 'int'],
  [{ $pow: [2, -1] }, 0.5, 'double'],
  [{ $exp: 0 }, 1, 'double'],
  [{ $ln: 1 }, 0, 'double'],
  [{ $log: [100, 10] }, 2, 'double'],
  [{ $log10: 1000 }, 3, 'double'],
  [{ $abs: null }, null, 'null'],
]);

fails('arithmetic errors', [
  [{ $add: ['a', 1] }, 16554],
  [{ $divide: [1, 0] }, 16608],
  [{ $mod: [1, 0] }, 16610],
  [{ $sqrt: -1 }, 28714],
  [{ $abs: 'x' }, 28765],
  [{ $abs: [1, 2] }, 16020],
  [{ $foo: 1 }, 168],
]);

table('comparison, boolean and conditional operators', [
  [{ $eq: ['$i', 5] }, true, 'bool'],
  [{ $eq: ['$missing', null] }, false, 'bool'],
  [{ $gt: ['$s', 5] }, true, 'bool'],
  [{ $lte: [new Double(5), '$i'] }, true, 'bool'],
  [{ $cmp: ['a', 'b'] }, -1, 'int'],
  [{ $and: [1, 'x', []] }, true, 'bool'],
  [{ $and: [1, 0] }, false, 'bool'],
  [{ $or: [null, '$missing'] }, false, 'bool'],
  [{ $not: [0] }, true, 'bool'],
  [{ $cond: [{ $gt: ['$i', 3] }, 'big', 'small'] }, 'big', 'string'],
  [{ $cond: { if: '$n', then: 1, else: 2 } }, 2, 'int'],
  [{ $ifNull: ['$missing', '$n', 'fallback'] }, 'fallback', 'string'],
  [{ $switch: { branches: [{ case: false, then: 1 }, { case: true, then: 2 }] } }, 2, 'int'],
  [{ $switch: { branches: [{ case: false, then: 1 }], default: 'd' } }, 'd', 'string'],
]);

fails('conditional errors', [
  [{ $switch: { branches: [{ case: false, then: 1 }] } }, 40066],
  [{ $cond: { if: true, then: 1 } }, 17082],
]);

table('string operators', [
  [{ $concat: ['a', '-', '$s'] }, 'a-Hello', 'string'],
  [{ $concat: ['a', '$missing'] }, null, 'null'],
  [{ $toLower: '$s' }, 'hello', 'string'],
  [{ $toUpper: 5 }, '5', 'string'],
  [{ $toLower: null }, '', 'string'],
  [{ $substr: ['$s', 1, 3] }, 'ell', 'string'],
  [{ $substrBytes: ['héllo', 0, 3] }, 'hé', 'string'],
  [{ $substrCP: ['héllo', 1, 2] }, 'él', 'string'],
  [{ $strLenBytes: 'é' }, 2, 'int'],
  [{ $strLenCP: 'é' }, 1, 'int'],
  [{ $split: ['a,b,c', ','] }, ['a', 'b', 'c'], 'array'],
  [{ $split: [null, ','] }, null, 'null'],
  [{ $trim: { input: '  x  ' } }, 'x', 'string'],
  [{ $ltrim: { input: 'xxaxx', chars: 'x' } }, 'axx', 'string'],
  [{ $rtrim: { input: 'xxaxx', chars: 'x' } }, 'xxa', 'string'],
  [{ $indexOfBytes: ['hello', 'l'] }, 2, 'int'],
  [{ $indexOfCP: ['héllo', 'l', 3] }, 3, 'int'],
  [{ $indexOfCP: ['hello', 'z'] }, -1, 'int'],
  [{ $strcasecmp: ['ABC', 'abc'] }, 0, 'int'],
  [{ $replaceOne: { input: 'aXbXc', find: 'X', replacement: '-' } }, 'a-bXc', 'string'],
  [{ $replaceAll: { input: 'aXbXc', find: 'X', replacement: '-' } }, 'a-b-c', 'string'],
  [{ $regexMatch: { input: '$s', regex: '^h', options: 'i' } }, true, 'bool'],
  [{ $regexMatch: { input: '$s', regex: new BSONRegExp('^h') } }, false, 'bool'],
  [{ $regexFind: { input: 'abc123', regex: '([a-z]+)(\\d+)' } }, { match: 'abc123', idx: 0, captures: ['abc', '123'] }, 'object'],
  [{ $regexFindAll: { input: 'a1b2', regex: '\\d' } }, [{ match: '1', idx: 1, captures: [] }, { match: '2', idx: 3, captures: [] }], 'array'],
  [{ $regexFind: { input: null, regex: 'a' } }, null, 'null'],
]);

fails('string errors', [
  [{ $concat: ['a', 1] }, 16702],
  [{ $strLenCP: 5 }, 34471],
  [{ $split: ['a', ''] }, 40087],
  [{ $substrBytes: ['é', 1, 1] }, 28656],
]);

table('array operators', [
  [{ $size: '$arr' }, 3, 'int'],
  [{ $arrayElemAt: ['$arr', -1] }, 3, 'int'],
  [{ $arrayElemAt: ['$arr', 5] }, undefined, 'missing'],
  [{ $first: '$arr' }, 1, 'int'],
  [{ $last: '$arr' }, 3, 'int'],
  [{ $concatArrays: ['$arr', [4]] }, [1, 2, 3, 4], 'array'],
  [{ $filter: { input: '$arr', as: 'v', cond: { $gt: ['$$v', 1] } } }, [2, 3], 'array'],
  [{ $filter: { input: '$arr', cond: { $gt: ['$$this', 1] }, limit: 1 } }, [2], 'array'],
  [{ $map: { input: '$arr', in: { $multiply: ['$$this', 2] } } }, [2, 4, 6], 'array'],
  [{ $reduce: { input: '$arr', initialValue: 0, in: { $add: ['$$value', '$$this'] } } }, 6, 'int'],
  [{ $in: [2, '$arr'] }, true, 'bool'],
  [{ $indexOfArray: ['$arr', 3] }, 2, 'int'],
  [{ $isArray: '$arr' }, true, 'bool'],
  [{ $range: [0, 10, 3] }, [0, 3, 6, 9], 'array'],
  [{ $range: [5, 0, -2] }, [5, 3, 1], 'array'],
  [{ $reverseArray: '$arr' }, [3, 2, 1], 'array'],
  [{ $slice: ['$arr', -2] }, [2, 3], 'array'],
  [{ $slice: ['$arr', 1, 1] }, [2], 'array'],
  [{ $zip: { inputs: [[1, 2], ['a']] } }, [[1, 'a']], 'array'],
  [{ $zip: { inputs: [[1, 2], ['a']], useLongestLength: true, defaults: [0, 'z'] } }, [[1, 'a'], [2, 'z']], 'array'],
  [{ $sortArray: { input: [3, 1, 2], sortBy: -1 } }, [3, 2, 1], 'array'],
  [{ $sortArray: { input: [{ a: 2 }, { a: 1 }], sortBy: { a: 1 } } }, [{ a: 1 }, { a: 2 }], 'array'],
  [{ $arrayToObject: [[['a', 1], ['b', 2]]] }, { a: 1, b: 2 }, 'object'],
  [{ $arrayToObject: [[{ k: 'a', v: 1 }]] }, { a: 1 }, 'object'],
  [{ $objectToArray: { a: 1 } }, [{ k: 'a', v: 1 }], 'array'],
  [{ $maxN: { n: 2, input: [3, null, 7, 1] } }, [7, 3], 'array'],
  [{ $minN: { n: 2, input: [3, null, 7, 1] } }, [1, 3], 'array'],
  [{ $first: '$missing' }, undefined, 'missing'],
  [{ $reverseArray: null }, null, 'null'],
]);

fails('array errors', [
  [{ $size: '$missing' }, 17124],
  [{ $arrayElemAt: ['x', 0] }, 28689],
  [{ $in: [1, 'x'] }, 40081],
  [{ $range: [0, 5, 0] }, 34449],
]);

table('set operators', [
  [{ $setUnion: [[1, 2], [2, 3]] }, [1, 2, 3], 'array'],
  [{ $setIntersection: [[1, 2, 3], [2, 3, 4]] }, [2, 3], 'array'],
  [{ $setDifference: [[1, 2, 3], [2]] }, [1, 3], 'array'],
  [{ $setEquals: [[1, 2], [2, 1, 1]] }, true, 'bool'],
  [{ $setIsSubset: [[1], [1, 2]] }, true, 'bool'],
  [{ $allElementsTrue: [[1, true, 'x']] }, true, 'bool'],
  [{ $anyElementTrue: [[0, false, null]] }, false, 'bool'],
  [{ $setUnion: [[1], null] }, null, 'null'],
]);

table('type operators', [
  [{ $type: '$d' }, 'double', 'string'],
  [{ $type: '$missing' }, 'missing', 'string'],
  [{ $isNumber: '$l' }, true, 'bool'],
  [{ $toInt: '42' }, 42, 'int'],
  [{ $toInt: new Double(4.9) }, 4, 'int'],
  [{ $toLong: 5 }, Long.fromNumber(5), 'long'],
  [{ $toDouble: '1.5' }, 1.5, 'double'],
  [{ $toDecimal: 1 }, Decimal128.fromString('1'), 'decimal'],
  [{ $toString: 5 }, '5', 'string'],
  [{ $toString: '$date' }, '2024-03-05T14:07:09.123Z', 'string'],
  [{ $toBool: 0 }, false, 'bool'],
  [{ $toBool: '' }, true, 'bool'],
  [{ $toDate: '2024-01-02T03:04:05Z' }, new Date('2024-01-02T03:04:05Z'), 'date'],
  [{ $toObjectId: '0123456789abcdef01234567' }, new ObjectId('0123456789abcdef01234567'), 'objectId'],
  [{ $toInt: null }, null, 'null'],
  [{ $convert: { input: 'abc', to: 'int', onError: -1 } }, -1, 'int'],
  [{ $convert: { input: null, to: 'int', onNull: 0 } }, 0, 'int'],
  [{ $convert: { input: '7', to: 16 } }, 7, 'int'],
]);

fails('conversion errors', [
  [{ $toInt: 'abc' }, 241],
  [{ $toInt: Long.fromString('9999999999') }, 241],
  [{ $convert: { input: 1, to: 'nope' } }, 2],
]);

table('date operators', [
  [{ $year: '$date' }, 2024, 'int'],
  [{ $month: '$date' }, 3, 'int'],
  [{ $dayOfMonth: '$date' }, 5, 'int'],
  [{ $hour: '$date' }, 14, 'int'],
  [{ $minute: '$date' }, 7, 'int'],
  [{ $second: '$date' }, 9, 'int'],
  [{ $millisecond: '$date' }, 123, 'int'],
  [{ $dayOfWeek: '$date' }, 3, 'int'],
  [{ $dayOfYear: '$date' }, 65, 'int'],
  [{ $week: '$date' }, 9, 'int'],
  [{ $hour: { date: '$date', timezone: '+02:00' } }, 16, 'int'],
  [{ $hour: { date: '$date', timezone: 'America/New_York' } }, 9, 'int'],
  [{ $year: null }, null, 'null'],
  [{ $dateToString: { date: '$date' } }, '2024-03-05T14:07:09.123Z', 'string'],
  [{ $dateToString: { date: '$date', format: '%Y/%m/%d %j %%' } }, '2024/03/05 065 %', 'string'],
  [{ $dateToString: { date: '$missing', onNull: 'none' } }, 'none', 'string'],
  [{ $dateFromString: { dateString: '2024-03-05T10:00:00+0100' } }, new Date('2024-03-05T09:00:00Z'), 'date'],
  [{ $dateFromString: { dateString: '05/03/2024', format: '%d/%m/%Y' } }, new Date('2024-03-05T00:00:00Z'), 'date'],
  [{ $dateFromString: { dateString: 'garbage', onError: 'bad' } }, 'bad', 'string'],
  [{ $dateAdd: { startDate: new Date('2024-01-31T00:00:00Z'), unit: 'month', amount: 1 } }, new Date('2024-02-29T00:00:00Z'), 'date'],
  [{ $dateSubtract: { startDate: '$date', unit: 'hour', amount: 2 } }, new Date('2024-03-05T12:07:09.123Z'), 'date'],
  [{ $dateDiff: { startDate: new Date('2023-12-31T23:00:00Z'), endDate: new Date('2024-01-01T01:00:00Z'), unit: 'year' } }, Long.fromNumber(1), 'long'],
  [{ $dateDiff: { startDate: new Date('2024-01-01T00:00:00Z'), endDate: new Date('2024-01-03T12:00:00Z'), unit: 'day' } }, Long.fromNumber(2), 'long'],
  [{ $dateTrunc: { date: '$date', unit: 'day' } }, new Date('2024-03-05T00:00:00Z'), 'date'],
  [{ $dateToParts: { date: '$date' } }, { year: 2024, month: 3, day: 5, hour: 14, minute: 7, second: 9, millisecond: 123 }, 'object'],
  [{ $dateFromParts: { year: 2024, month: 2, day: 30 } }, new Date('2024-03-01T00:00:00Z'), 'date'],
]);

fails('date errors', [
  [{ $year: 'x' }, 16006],
  [{ $dateToString: { date: '$date', format: '%Q' } }, 18536],
]);

table('object operators', [
  [{ $mergeObjects: [{ a: 1 }, null, { b: 2, a: 3 }] }, { a: 3, b: 2 }, 'object'],
  [{ $getField: 's' }, 'Hello', 'string'],
  [{ $getField: { field: 'a', input: '$obj' } }, 1, 'int'],
  [{ $getField: { field: 'a', input: '$missing' } }, null, 'null'],
  [{ $setField: { field: 'z', input: { a: 1 }, value: 2 } }, { a: 1, z: 2 }, 'object'],
  [{ $unsetField: { field: 'a', input: { a: 1, b: 2 } } }, { b: 2 }, 'object'],
]);

fails('object errors', [
  [{ $mergeObjects: [1] }, 40400],
  [{ $getField: { field: '$x', input: {} } }, 5648200],
]);

describe('variables', () => {
  it('reads user variables passed to the compiled expression', () => {
    const evaluate = compileExpression({ $add: ['$$x', 1] }, { variables: { x: 0 } });
    assert.equal(evaluate({}, { x: 41 }), 42);
  });

  it('rejects a reference to an undefined variable when compiling', () => {
    assert.throws(() => compileExpression('$$nope'), (err: unknown) => err instanceof MongoError && err.code === 17276);
  });

  it('uses the NOW variable that was passed in', () => {
    const now = new Date('2020-01-01T00:00:00Z');
    assert.deepEqual(compileExpression('$$NOW')({}, { NOW: now }), now);
  });

  it('without a NOW given, reads the clock of the command it was compiled in, once, when first evaluated', () => {
    let ms = Date.UTC(2020, 0, 1);
    const clock = { ...systemClock, now: () => ms };
    const evaluate = withOperationClock(clock, () => compileExpression({ $add: ['$$NOW', 1] }));
    ms += 1000;
    assert.deepEqual(evaluate({}), new Date(Date.UTC(2020, 0, 1) + 1001));
    ms += 1000;
    assert.deepEqual(evaluate({}), new Date(Date.UTC(2020, 0, 1) + 1001));
    assert.equal(compileExpression({ $add: [1, 2] })({}), 3, 'an expression without $$NOW needs no clock');
    assert.throws(() => compileExpression('$$NOW')({}), (err: unknown) => err instanceof MongoError && err.code === 1);
  });

  it('produces a double from $rand between 0 and 1', () => {
    const v = compileExpression({ $rand: {} })({});
    assert.equal(bsonTypeName(v), 'double');
  });
});
