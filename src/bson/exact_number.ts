import type { Decimal128, Long } from 'bson';
import { bsonTag, toDouble } from './values.js';

// Exact arithmetic for comparing Decimal128 with the other numeric types. MongoDB compares a
// decimal with a double, an int64 or another decimal by exact value (NumberDecimal("0.1") is not
// the double 0.1), which going through a double cannot do. Only values that involve a decimal
// come here; the rest stay on the fast double and int64 paths.

// A finite value: (-1)^negative × n × 2^twos × 10^tens, n ≥ 0.
export interface Exact {
  negative: boolean;
  n: bigint;
  twos: number;
  tens: number;
}

export type Special = 'nan' | '-inf' | 'inf';

const float64 = new Float64Array(1);
const float64Words = new Uint32Array(float64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function exactOf(v: unknown): Exact | Special {
  const tag = bsonTag(v);
  if (tag === 'Decimal128') return parseDecimal((v as Decimal128).toString());
  if (tag === 'Long') {
    const x = (v as Long).toBigInt();
    return { negative: x < 0n, n: x < 0n ? -x : x, twos: 0, tens: 0 };
  }
  return exactOfDouble(toDouble(v));
}

function exactOfDouble(d: number): Exact | Special {
  if (Number.isNaN(d)) return 'nan';
  if (d === Infinity) return 'inf';
  if (d === -Infinity) return '-inf';
  float64[0] = d;
  const hi = float64Words[LITTLE_ENDIAN ? 1 : 0]!;
  const lo = float64Words[LITTLE_ENDIAN ? 0 : 1]!;
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const n = biased === 0 ? fraction : fraction | (1n << 52n);
  return { negative: hi >>> 31 === 1, n, twos: (biased === 0 ? 1 : biased) - 1075, tens: 0 };
}

// Decimal128.toString's forms: "NaN", "Infinity", "-Infinity", "-1.50", "1.5E+3", "-0E-10".
export function parseDecimal(text: string): Exact | Special {
  if (text === 'NaN' || text === '-NaN') return 'nan';
  if (text === 'Infinity') return 'inf';
  if (text === '-Infinity') return '-inf';
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const e = body.search(/[eE]/);
  const mantissa = e < 0 ? body : body.slice(0, e);
  const exponent = e < 0 ? 0 : Number(body.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const tens = exponent - (dot < 0 ? 0 : mantissa.length - dot - 1);
  return { negative, n: BigInt(digits), twos: 0, tens };
}

function rank(x: Exact | Special): number {
  if (x === 'nan') return 0;
  if (x === '-inf') return 1;
  if (x === 'inf') return 3;
  return 2;
}

// NaN < -Infinity < finite < +Infinity, and finite values by exact value (-0 equals 0).
export function compareExact(a: Exact | Special, b: Exact | Special): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb || ra !== 2) return Math.sign(ra - rb);
  const x = a as Exact;
  const y = b as Exact;
  const sx = x.n === 0n ? 0 : x.negative ? -1 : 1;
  const sy = y.n === 0n ? 0 : y.negative ? -1 : 1;
  if (sx !== sy || sx === 0) return Math.sign(sx - sy);
  const magnitude = compareMagnitudes(x, y);
  return sx < 0 ? -magnitude : magnitude;
}

// Both scaled by the same 2^-min(twos) × 10^-min(tens), which leaves integers to compare.
function compareMagnitudes(x: Exact, y: Exact): number {
  const twos = Math.min(x.twos, y.twos);
  const tens = Math.min(x.tens, y.tens);
  const a = scaleUp(x.n, x.twos - twos, x.tens - tens);
  const b = scaleUp(y.n, y.twos - twos, y.tens - tens);
  return a < b ? -1 : a > b ? 1 : 0;
}

function scaleUp(n: bigint, twos: number, tens: number): bigint {
  return (n << BigInt(twos)) * 10n ** BigInt(tens);
}

// For key strings: |x| = 2^E × (1 + f) with 0 ≤ f < 1, and f's first `bits` bits (floor), and
// whether those bits hold f exactly. x must be finite and non-zero.
export function binaryScientific(x: Exact, bits: number): { exponent: number; fraction: bigint; exact: boolean } {
  // |x| = num / den with integers.
  let num = x.n;
  let den = 1n;
  if (x.twos >= 0) num <<= BigInt(x.twos);
  else den <<= BigInt(-x.twos);
  if (x.tens >= 0) num *= 10n ** BigInt(x.tens);
  else den *= 10n ** BigInt(-x.tens);
  // The largest E with 2^E ≤ num/den: start from the bit lengths and correct by one.
  let exponent = bitLength(num) - bitLength(den);
  if (!atLeastPowerOfTwo(num, den, exponent)) exponent -= 1;
  // (num/den) / 2^E × 2^bits = 2^bits + fraction bits (floor).
  const shift = bits - exponent;
  const scaledNum = shift >= 0 ? num << BigInt(shift) : num;
  const scaledDen = shift >= 0 ? den : den << BigInt(-shift);
  const whole = scaledNum / scaledDen;
  return { exponent, fraction: whole - (1n << BigInt(bits)), exact: whole * scaledDen === scaledNum };
}

function atLeastPowerOfTwo(num: bigint, den: bigint, exponent: number): boolean {
  return exponent >= 0 ? num >= den << BigInt(exponent) : num << BigInt(-exponent) >= den;
}

function bitLength(x: bigint): number {
  return x.toString(2).length;
}

// The decimal's value as 0.D1D2…Dk × 10^point with D1 ≠ 0 and Dk ≠ 0: a form whose (point, digits)
// order, digits compared as strings with a shorter prefix first, is the order of the values.
export function normalizedDecimal(x: Exact): { point: number; digits: string } {
  let digits = x.n.toString();
  let tens = x.tens;
  const trimmed = digits.replace(/0+$/, '');
  tens += digits.length - trimmed.length;
  digits = trimmed;
  return { point: tens + digits.length, digits };
}
