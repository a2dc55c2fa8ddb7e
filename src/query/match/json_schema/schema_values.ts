import type { Decimal128, Long } from 'bson';
import { compareValues } from '../../../bson/compare.js';
import { bsonTag, isPlainObject, toDouble } from '../../../bson/values.js';

// enum and uniqueItems compare as MongoDB's UnorderedFieldsBSONElementComparator: embedded
// documents are equal when they hold the same fields with equal values, in any order.
export function unorderedEqual(a: unknown, b: unknown): boolean {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && unorderedEqual(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => unorderedEqual(x, b[i]));
  }
  if (isPlainObject(a) || isPlainObject(b) || Array.isArray(a) || Array.isArray(b)) return false;
  return compareValues(a, b) === 0;
}

// A number as an exact decimal, coefficient × 10^exponent. MongoDB's multipleOf works in Decimal128,
// converting a double to its 15-significant-digit decimal, so that 0.3 is a multiple of 0.1.
interface Exact {
  coefficient: bigint;
  exponent: number;
}

function exactOf(value: unknown): Exact | undefined {
  const tag = bsonTag(value);
  if (tag === 'Long') return { coefficient: (value as Long).toBigInt(), exponent: 0 };
  const text = tag === 'Decimal128' ? (value as Decimal128).toString() : toDouble(value).toPrecision(15);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return undefined;
  const fraction = m[3] ?? '';
  return { coefficient: BigInt(`${m[1]}${m[2]}${fraction}`), exponent: Number(m[4] ?? 0) - fraction.length };
}

export function isMultipleOf(value: unknown, divisor: unknown): boolean {
  const v = exactOf(value);
  const d = exactOf(divisor);
  if (v === undefined || d === undefined || d.coefficient === 0n) return false;
  const exponent = Math.min(v.exponent, d.exponent);
  const scaled = (x: Exact): bigint => x.coefficient * 10n ** BigInt(x.exponent - exponent);
  return scaled(v) % scaled(d) === 0n;
}
