import type { Binary, BSONRegExp, Code, Long, ObjectId, Timestamp } from 'bson';
import { bsonTag, isNumber, toDouble, type Doc } from './values.js';
import { activeStringComparator } from './collation.js';
import { compareExact, exactOf } from './exact_number.js';

// MongoDB's canonical type order (BSONElement::canonicalType): values of different canonical
// types compare by this number alone; numbers of every width share one bracket.
export function canonicalType(v: unknown): number {
  if (v === undefined) return 0;
  if (v === null) return 5;
  switch (typeof v) {
    case 'number': return 10;
    case 'string': return 15;
    case 'boolean': return 40;
    case 'bigint': return 10;
    default: break;
  }
  if (Array.isArray(v)) return 25;
  if (v instanceof Date) return 45;
  switch (bsonTag(v)) {
    case undefined: return 20;
    case 'MinKey': return -1;
    case 'MaxKey': return 127;
    case 'Double': case 'Int32': case 'Long': case 'Decimal128': return 10;
    case 'BSONSymbol': return 15;
    case 'Binary': return 30;
    case 'ObjectId': case 'ObjectID': return 35;
    case 'Timestamp': return 47;
    case 'BSONRegExp': return 50;
    case 'DBRef': return 20;
    case 'Code': return (v as Code).scope ? 65 : 60;
    default: return 20;
  }
}

// Code-point order of two strings, which is the byte order of their UTF-8 encodings (MongoDB
// compares strings as bytes under the simple collation). JS `<` compares UTF-16 units, which
// disagrees only where a surrogate meets a unit in U+E000..U+FFFF.
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function sign(x: number): number {
  return x < 0 ? -1 : x > 0 ? 1 : 0;
}

const TWO_53 = 2 ** 53;

// Numbers compare by value across int/long/double/decimal; NaN is below every other number.
export function compareNumbers(a: unknown, b: unknown): number {
  const ta = bsonTag(a);
  const tb = bsonTag(b);
  if (ta === 'Long' && tb === 'Long') return (a as Long).compare(b as Long);
  if (ta === 'Decimal128' || tb === 'Decimal128') return compareExact(exactOf(a), exactOf(b));
  if (ta === 'Long' || tb === 'Long') {
    const da = toDouble(a);
    const db = toDouble(b);
    if (Number.isNaN(da) || Number.isNaN(db)) return compareDoubles(da, db);
    if (Math.abs(da) < TWO_53 && Math.abs(db) < TWO_53) return compareDoubles(da, db);
    if (!Number.isFinite(da) || !Number.isFinite(db)) return compareDoubles(da, db);
    if (ta === 'Long') return compareBigDouble((a as Long).toBigInt(), db);
    return -compareBigDouble((b as Long).toBigInt(), da);
  }
  return compareDoubles(toDouble(a), toDouble(b));
}

// A long against a double of magnitude >= 2^53: compare the long with the double exactly, since
// converting the long to a double would round it.
function compareBigDouble(x: bigint, d: number): number {
  const fl = Math.floor(d);
  const big = BigInt(fl);
  if (x < big) return -1;
  if (x > big) return 1;
  return fl === d ? 0 : -1;
}

function compareDoubles(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return sign(Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
}

function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]!];
    const vb = b[kb[i]!];
    const t = canonicalType(va) - canonicalType(vb);
    if (t !== 0) return sign(t);
    const f = compareStrings(ka[i]!, kb[i]!);
    if (f !== 0) return f;
    const c = compareValues(va, vb);
    if (c !== 0) return c;
  }
  return sign(ka.length - kb.length);
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

// MongoDB's total order of BSON values (BSONElement::compareElements under the simple collation).
export function compareValues(a: unknown, b: unknown): number {
  const ca = canonicalType(a);
  const cb = canonicalType(b);
  if (ca !== cb) return ca < cb ? -1 : 1;
  switch (ca) {
    case -1: case 0: case 5: case 127: return 0;
    case 10: return isNumber(a) && isNumber(b) ? compareNumbers(a, b) : 0;
    case 15: return (activeStringComparator() ?? compareStrings)(stringOf(a), stringOf(b));
    case 20: return compareObjects(objectOf(a), objectOf(b));
    case 25: return compareArrays(a as unknown[], b as unknown[]);
    case 30: {
      const x = a as Binary;
      const y = b as Binary;
      if (x.position !== y.position) return x.position < y.position ? -1 : 1;
      if (x.sub_type !== y.sub_type) return x.sub_type < y.sub_type ? -1 : 1;
      return compareBytes(x.buffer.subarray(0, x.position), y.buffer.subarray(0, y.position));
    }
    case 35: return compareBytes((a as ObjectId).id, (b as ObjectId).id);
    case 40: return a === b ? 0 : a ? 1 : -1;
    case 45: return compareDoubles((a as Date).getTime(), (b as Date).getTime());
    case 47: return sign((a as Timestamp).compare(b as Timestamp));
    case 50: {
      const x = a as BSONRegExp;
      const y = b as BSONRegExp;
      return compareStrings(x.pattern, y.pattern) || compareStrings(x.options, y.options);
    }
    case 60: case 65: return compareStrings(String((a as Code).code), String((b as Code).code));
    default: return 0;
  }
}

function stringOf(v: unknown): string {
  return typeof v === 'string' ? v : String((v as { value: string }).value);
}

function objectOf(v: unknown): Doc {
  if (bsonTag(v) === 'DBRef') return (v as { toJSON(): Doc }).toJSON();
  return v as Doc;
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  return compareValues(a, b) === 0;
}

// $type names and numbers, as MongoDB spells them.
export function bsonTypeName(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number': return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 && !Object.is(v, -0) ? 'int' : 'double';
    case 'string': return 'string';
    case 'boolean': return 'bool';
    default: break;
  }
  if (Array.isArray(v)) return 'array';
  if (v instanceof Date) return 'date';
  switch (bsonTag(v)) {
    case undefined: return 'object';
    case 'Double': return 'double';
    case 'Int32': return 'int';
    case 'Long': return 'long';
    case 'Decimal128': return 'decimal';
    case 'Binary': return 'binData';
    case 'ObjectId': case 'ObjectID': return 'objectId';
    case 'Timestamp': return 'timestamp';
    case 'BSONRegExp': return 'regex';
    case 'MinKey': return 'minKey';
    case 'MaxKey': return 'maxKey';
    case 'BSONSymbol': return 'symbol';
    case 'Code': return (v as Code).scope ? 'javascriptWithScope' : 'javascript';
    case 'DBRef': return 'object';
    default: return 'object';
  }
}

export const bsonTypeNumbers: Record<string, number> = {
  double: 1, string: 2, object: 3, array: 4, binData: 5, undefined: 6, objectId: 7, bool: 8, date: 9,
  null: 10, regex: 11, dbPointer: 12, javascript: 13, symbol: 14, javascriptWithScope: 15, int: 16,
  timestamp: 17, long: 18, decimal: 19, minKey: -1, maxKey: 127,
};
