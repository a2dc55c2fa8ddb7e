import type { Binary, BSONRegExp, Code, Decimal128, Long, ObjectId, Timestamp } from 'bson';
import { canonicalType } from './compare.js';
import { bsonTag, toDouble, type Doc } from './values.js';
import { binaryScientific, normalizedDecimal, parseDecimal, type Exact, type Special } from './exact_number.js';

// An order-preserving binary form of index keys: for lists of equal length, comparing the bytes
// (Buffer.compare) agrees with comparing the values element by element with `compareValues`, each
// element flipped where its ordering is -1. Nothing ever decodes these bytes; the values travel
// beside them. Every element's encoding is prefix-free (self-delimiting), which is what makes
// both concatenation (compound keys) and byte inversion (descending fields) preserve the order.
export type Ordering = readonly (1 | -1)[];

export function encodeKey(values: readonly unknown[], ordering?: Ordering): Buffer {
  const out = scratch.reset();
  for (let i = 0; i < values.length; i++) {
    const start = out.length;
    writeElement(out, values[i]);
    if (ordering?.[i] === -1) out.invertFrom(start);
  }
  return out.finish();
}

// Type bytes follow MongoDB's canonical type order. They start at 1 so that 0 can end objects and
// arrays: a shorter object sorts before a longer one that it prefixes.
function typeByte(v: unknown): number {
  return canonicalType(v) + 2;
}
const END = 0x00;

function writeElement(out: ByteWriter, v: unknown): void {
  out.byte(typeByte(v));
  writeValue(out, v);
}

function writeValue(out: ByteWriter, v: unknown): void {
  switch (canonicalType(v)) {
    case -1: case 0: case 5: case 127: return;
    case 10: return writeNumber(out, v);
    case 15: return writeString(out, typeof v === 'string' ? v : String((v as { value: string }).value));
    case 20: return writeObject(out, objectOf(v));
    case 25: return writeArray(out, v as unknown[]);
    case 30: return writeBinary(out, v as Binary);
    case 35: return out.bytes((v as ObjectId).id);
    case 40: return out.byte(v ? 1 : 0);
    case 45: return writeNumber(out, (v as Date).getTime());
    case 47: return writeTimestamp(out, v as Timestamp);
    case 50: {
      const re = v as BSONRegExp;
      writeString(out, re.pattern);
      return writeString(out, re.options);
    }
    case 60: case 65: return writeString(out, String((v as Code).code));
    default: return;
  }
}

function objectOf(v: unknown): Doc {
  if (bsonTag(v) === 'DBRef') return (v as { toJSON(): Doc }).toJSON();
  return v as Doc;
}

// Per field: the value's type, then the name, then the value, which is the order in which
// compareValues looks at them. Undefined fields are missing, as compareValues treats them.
function writeObject(out: ByteWriter, doc: Doc): void {
  for (const key of Object.keys(doc)) {
    const value = doc[key];
    if (value === undefined) continue;
    out.byte(typeByte(value));
    writeString(out, key);
    writeValue(out, value);
  }
  out.byte(END);
}

function writeArray(out: ByteWriter, items: readonly unknown[]): void {
  for (const item of items) writeElement(out, item);
  out.byte(END);
}

// UTF-8 bytes order strings by code point, as MongoDB compares them. An embedded NUL becomes
// 00 FF and the string ends with 00 00, so no encoding is a prefix of another and the end sorts
// below every continuation.
function writeString(out: ByteWriter, s: string): void {
  const utf8 = Buffer.from(s, 'utf8');
  let from = 0;
  for (let i = utf8.indexOf(0); i !== -1; i = utf8.indexOf(0, i + 1)) {
    out.bytes(utf8.subarray(from, i));
    out.byte(0x00);
    out.byte(0xff);
    from = i + 1;
  }
  out.bytes(utf8.subarray(from));
  out.byte(0x00);
  out.byte(0x00);
}

// compareValues orders binData by length, then subtype, then bytes: a fixed-size header first.
function writeBinary(out: ByteWriter, bin: Binary): void {
  const header = Buffer.allocUnsafe(5);
  header.writeUInt32BE(bin.position, 0);
  header.writeUInt8(bin.sub_type, 4);
  out.bytes(header);
  out.bytes(bin.buffer.subarray(0, bin.position));
}

function writeTimestamp(out: ByteWriter, ts: Timestamp): void {
  const b = Buffer.allocUnsafe(8);
  b.writeUInt32BE(ts.high >>> 0, 0);
  b.writeUInt32BE(ts.low >>> 0, 4);
  out.bytes(b);
}

// Numbers of every width share one scale, exact for int64 beyond 2^53 and for every double:
//   NaN < -Infinity < negatives < zero < positives < +Infinity
// A finite non-zero magnitude is 2^E * 1.m; it is written as E (2 bytes, biased) and the bits of m
// left-aligned in 8 bytes. Doubles have at most 52 bits after the leading one and int64 at most
// 62, so the 10 bytes are exact and of fixed length; negatives are the inverted magnitude.
// Both leave the last two of the 64 mantissa bits zero. A Decimal128 on that grid (every decimal
// equal to a double or an int64 is) is written the same way, so equal values of any type have one
// key. Any other decimal lies between two grid points: it is written as the lower one with the
// last bit set, then its decimal digits (decimalSuffix), which puts it above the lower point,
// below the next one, and in order among the decimals between them. Decimals below 2^-1090, under
// every double, share the exponent field 0 and are ordered by their digits alone.
const NUM_NAN = 0x01;
const NUM_NEG_INF = 0x02;
const NUM_NEG = 0x03;
const NUM_ZERO = 0x04;
const NUM_POS = 0x05;
const NUM_POS_INF = 0x06;
const EXPONENT_BIAS = 1100;
const MAGNITUDE_BYTES = 10;

function writeNumber(out: ByteWriter, v: unknown): void {
  const tag = bsonTag(v);
  if (tag === 'Long') return writeBigInt(out, (v as Long).toBigInt());
  if (tag === 'Decimal128') return writeDecimal(out, parseDecimal((v as Decimal128).toString()));
  const d = toDouble(v);
  if (Number.isNaN(d)) return out.byte(NUM_NAN);
  if (d === Infinity) return out.byte(NUM_POS_INF);
  if (d === -Infinity) return out.byte(NUM_NEG_INF);
  if (d === 0) return out.byte(NUM_ZERO);
  out.byte(d < 0 ? NUM_NEG : NUM_POS);
  const start = out.length;
  writeDoubleMagnitude(out, Math.abs(d));
  if (d < 0) out.invertFrom(start);
}

const TINY_EXPONENT = -1090;
const MANTISSA_BITS = 64n;
const OFF_GRID = 1n;
const POINT_BIAS = 7000;

function writeDecimal(out: ByteWriter, x: Exact | Special): void {
  if (x === 'nan') return out.byte(NUM_NAN);
  if (x === 'inf') return out.byte(NUM_POS_INF);
  if (x === '-inf') return out.byte(NUM_NEG_INF);
  if (x.n === 0n) return out.byte(NUM_ZERO);
  out.byte(x.negative ? NUM_NEG : NUM_POS);
  const start = out.length;
  const { exponent, fraction, exact } = binaryScientific(x, Number(MANTISSA_BITS));
  if (exponent < TINY_EXPONENT) {
    out.bytes(magnitude(-EXPONENT_BIAS, OFF_GRID));
    writeDecimalSuffix(out, x);
  } else if (exact && (fraction & 3n) === 0n) {
    out.bytes(magnitude(exponent, fraction));
  } else {
    out.bytes(magnitude(exponent, (fraction & ~3n) | OFF_GRID));
    writeDecimalSuffix(out, x);
  }
  if (x.negative) out.invertFrom(start);
}

// 0.D1…Dk × 10^point as point (2 bytes, biased) and each digit plus one, then 0: a shorter
// digit string that is a prefix of a longer one ends first and sorts first, as its value does.
function writeDecimalSuffix(out: ByteWriter, x: Exact): void {
  const { point, digits } = normalizedDecimal(x);
  out.uint16(point + POINT_BIAS);
  for (let i = 0; i < digits.length; i++) out.byte(digits.charCodeAt(i) - 0x2f);
  out.byte(0);
}

function writeBigInt(out: ByteWriter, x: bigint): void {
  if (x === 0n) return out.byte(NUM_ZERO);
  const abs = x < 0n ? -x : x;
  const lead = abs.toString(2).length - 1;
  writeSigned(out, x < 0n, magnitude(lead, (abs - (1n << BigInt(lead))) << BigInt(64 - lead)));
}

// Every index write and _id lookup encodes a number, so normal doubles are taken apart with 32-bit
// integer arithmetic on the IEEE bits (hi = sign, 11 exponent bits, 20 fraction bits; lo = the
// other 32); only subnormals take the BigInt path.
const float64 = new Float64Array(1);
const float64Words = new Uint32Array(float64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Written in place: a number is part of nearly every key, and a buffer per magnitude showed.
function writeDoubleMagnitude(out: ByteWriter, d: number): void {
  float64[0] = d;
  const hi = float64Words[LITTLE_ENDIAN ? 1 : 0]!;
  const lo = float64Words[LITTLE_ENDIAN ? 0 : 1]!;
  const biasedExponent = (hi >>> 20) & 0x7ff;
  if (biasedExponent !== 0) {
    out.uint16(biasedExponent - 1023 + EXPONENT_BIAS);
    out.uint32((((hi & 0xfffff) << 12) | (lo >>> 20)) >>> 0);
    out.uint32((lo << 12) >>> 0);
    return;
  }
  // Subnormal: the value is fraction * 2^-1074 with fewer than 52 significant bits.
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const lead = fraction.toString(2).length - 1;
  out.bytes(magnitude(lead - 1074, (fraction - (1n << BigInt(lead))) << BigInt(64 - lead)));
}

function magnitude(exponent: number, mantissa64: bigint): Buffer {
  const b = Buffer.allocUnsafe(MAGNITUDE_BYTES);
  b.writeUInt16BE(exponent + EXPONENT_BIAS, 0);
  b.writeBigUInt64BE(mantissa64 & 0xffffffffffffffffn, 2);
  return b;
}

function writeSigned(out: ByteWriter, negative: boolean, mag: Buffer): void {
  out.byte(negative ? NUM_NEG : NUM_POS);
  const start = out.length;
  out.bytes(mag);
  if (negative) out.invertFrom(start);
}

class ByteWriter {
  private buf = Buffer.allocUnsafe(64);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.length++] = b;
  }

  uint16(n: number): void {
    this.reserve(2);
    this.buf[this.length++] = n >>> 8;
    this.buf[this.length++] = n & 0xff;
  }

  uint32(n: number): void {
    this.reserve(4);
    this.buf[this.length++] = n >>> 24;
    this.buf[this.length++] = (n >>> 16) & 0xff;
    this.buf[this.length++] = (n >>> 8) & 0xff;
    this.buf[this.length++] = n & 0xff;
  }

  bytes(src: Uint8Array): void {
    this.reserve(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  invertFrom(start: number): void {
    for (let i = start; i < this.length; i++) this.buf[i] = ~this.buf[i]! & 0xff;
  }

  reset(): this {
    this.length = 0;
    return this;
  }

  // Most keys are a few bytes (a number, a short string), for which a loop costs less than a call
  // into the native copy.
  finish(): Buffer {
    const n = this.length;
    const out = Buffer.allocUnsafe(n);
    if (n > 64) this.buf.copy(out, 0, 0, n);
    else for (let i = 0; i < n; i++) out[i] = this.buf[i]!;
    return out;
  }
}

// encodeKey never re-enters itself, so one growing buffer serves every call; finish() copies out.
const scratch = new ByteWriter();
