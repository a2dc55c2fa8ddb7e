import type { Binary, BSONRegExp, Decimal128, Long } from 'bson';
import { bsonTag, isNumber, toDouble } from '../../bson/values.js';
import { bsonTypeName, bsonTypeNumbers, canonicalType, compareValues } from '../../bson/compare.js';

// Predicates on one value reached by a path: the leaves of a match expression tree.
export type Predicate = (value: unknown) => boolean;

export type ComparisonOp = '$eq' | '$lt' | '$lte' | '$gt' | '$gte';

const CANONICAL_MISSING = 0;
const CANONICAL_NULL = 5;

function isNaNValue(v: unknown): boolean {
  const tag = bsonTag(v);
  if (typeof v === 'number' || tag === 'Double') return Number.isNaN(toDouble(v));
  if (tag === 'Decimal128') return (v as Decimal128).toString() === 'NaN';
  return false;
}

// ComparisonMatchExpression: values of another canonical type never match, except that null
// and missing stand for each other and that MinKey/MaxKey bound everything.
export function comparison(op: ComparisonOp, rhs: unknown): Predicate {
  const rhsType = canonicalType(rhs);
  const rhsTag = bsonTag(rhs);
  const rhsNaN = isNaNValue(rhs);
  return (value) => {
    const valueType = canonicalType(value);
    if (valueType !== rhsType) {
      if (valueType + rhsType === CANONICAL_MISSING + CANONICAL_NULL) return op === '$eq' || op === '$lte' || op === '$gte';
      if (op === '$lt' || op === '$lte') return rhsTag === 'MaxKey';
      if (op === '$gt' || op === '$gte') return rhsTag === 'MinKey';
      return false;
    }
    if (op !== '$eq' && (rhsNaN || isNaNValue(value))) {
      return (op === '$lte' || op === '$gte') && rhsNaN && isNaNValue(value);
    }
    const c = compareValues(value, rhs);
    switch (op) {
      case '$eq': return c === 0;
      case '$lt': return c < 0;
      case '$lte': return c <= 0;
      case '$gt': return c > 0;
      case '$gte': return c >= 0;
    }
  };
}

// RegexMatchExpression: strings and symbols are searched; a stored regex matches only an
// identical pattern with identical flags.
export function regexMatch(pattern: string, flags: string, re: RegExp): Predicate {
  return (value) => {
    if (typeof value === 'string') return re.test(value);
    const tag = bsonTag(value);
    if (tag === 'BSONSymbol') return re.test(String((value as { value: string }).value));
    if (tag === 'BSONRegExp') return (value as BSONRegExp).pattern === pattern && (value as BSONRegExp).options === flags;
    return false;
  };
}

// InMatchExpression: equality to any listed value (a null also matches missing), or any regex.
export function inList(values: unknown[], regexes: Predicate[]): Predicate {
  const hasNull = values.some((v) => v === null);
  return (value) => {
    if (hasNull && value === undefined) return true;
    for (const v of values) if (compareValues(value, v) === 0) return true;
    for (const r of regexes) if (r(value)) return true;
    return false;
  };
}

export function exists(): Predicate {
  return (value) => value !== undefined;
}

// $type: numbers name BSON types; the alias "number" covers every numeric type.
export function typeIn(names: ReadonlySet<string>): Predicate {
  return (value) => {
    if (value === undefined) return false;
    if (names.has('number') && isNumber(value)) return true;
    return names.has(bsonTypeName(value));
  };
}

export function typeNameOfCode(code: number): string | undefined {
  for (const [name, n] of Object.entries(bsonTypeNumbers)) if (n === code) return name;
  return undefined;
}

const INT64_MIN = -(2n ** 63n);
const TWO_63 = 2 ** 63;

// A numeric value as an exact 64-bit integer where MongoDB would use one, else undefined.
function truncatedInt64(value: unknown): bigint | undefined {
  const tag = bsonTag(value);
  if (tag === 'Long') return (value as Long).toBigInt();
  const d = toDouble(value);
  if (!Number.isFinite(d)) return undefined;
  const t = Math.trunc(d);
  if (t >= TWO_63 || t < -TWO_63) return undefined;
  return BigInt(t);
}

// $mod: the dividend is truncated toward zero; the remainder takes the dividend's sign.
export function mod(divisor: bigint, remainder: bigint): Predicate {
  return (value) => {
    if (!isNumber(value)) return false;
    const dividend = truncatedInt64(value);
    if (dividend === undefined) return false;
    if (divisor === -1n) return remainder === 0n;
    return dividend % divisor === remainder;
  };
}

export type BitTest = '$bitsAllSet' | '$bitsAllClear' | '$bitsAnySet' | '$bitsAnyClear';

// Bit tests see numbers as sign-extended 64-bit two's complement, BinData as little-endian bytes.
export function bitTest(op: BitTest, positions: number[]): Predicate {
  let mask = 0n;
  for (const p of positions) mask |= 1n << BigInt(Math.min(p, 63));
  const fromInt = (x: bigint): boolean => {
    const v = BigInt.asUintN(64, x);
    const m = BigInt.asUintN(64, mask);
    switch (op) {
      case '$bitsAllSet': return (v & m) === m;
      case '$bitsAllClear': return (v & m) === 0n;
      case '$bitsAnySet': return (v & m) !== 0n;
      case '$bitsAnyClear': return (v & m) !== m;
    }
  };
  const fromBytes = (bytes: Uint8Array): boolean => {
    const set = (p: number): boolean => p < bytes.length * 8 && (bytes[p >> 3]! & (1 << (p & 7))) !== 0;
    switch (op) {
      case '$bitsAllSet': return positions.every(set);
      case '$bitsAllClear': return positions.every((p) => !set(p));
      case '$bitsAnySet': return positions.some(set);
      case '$bitsAnyClear': return positions.some((p) => !set(p));
    }
  };
  return (value) => {
    const tag = bsonTag(value);
    if (tag === 'Binary') {
      const bin = value as Binary;
      return fromBytes(bin.buffer.subarray(0, bin.position));
    }
    if (!isNumber(value)) return false;
    if (tag === 'Long') return fromInt((value as Long).toBigInt());
    const d = toDouble(value);
    if (Number.isNaN(d) || d >= TWO_63 || d < -TWO_63 || !Number.isInteger(d)) return false;
    const n = BigInt(d);
    return n < INT64_MIN ? false : fromInt(n);
  };
}

export function arraySize(n: number): Predicate {
  return (value) => Array.isArray(value) && value.length === n;
}
