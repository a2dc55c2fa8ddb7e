import { Binary, Double, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { isPlainObject, toDouble, type Doc } from '../bson/values.js';

// The subset of MongoDB's KeyString (version 1, ascending) a resume token's `_data` needs, with
// MongoDB's type bytes, integer and string forms, both ways: tokens taken from docshard compare as
// MongoDB's do (byte order is value order), and their fields can be read back. A number that is
// not an integer below 2^53 is written as its double's bits under the "large magnitude" type,
// which keeps its order among such numbers but not MongoDB's bytes; no token field is one, and
// a document key holding one still gives a token that resumes (tokens are matched by their bytes).
// Numbers come back as JS numbers: MongoDB's type bits, which would say int or long, are not kept.

const T = {
  minKey: 10, undefined: 15, null: 20, negLarge: 31, neg1: 39, zero: 41, pos1: 43, posLarge: 51,
  string: 60, object: 70, array: 80, binData: 90, oid: 100, false: 110, true: 111, date: 120, timestamp: 130, maxKey: 240,
} as const;
const END = 0;
const KEY_END = 4;

export function encodeKeyString(values: readonly unknown[]): Buffer {
  const out: number[] = [];
  for (const v of values) writeValue(out, v);
  out.push(KEY_END);
  return Buffer.from(out);
}

function writeValue(out: number[], v: unknown): void {
  if (v === null) return void out.push(T.null);
  if (v === undefined) return void out.push(T.undefined);
  if (typeof v === 'boolean') return void out.push(v ? T.true : T.false);
  if (typeof v === 'string') return writeString(out, v);
  // A Timestamp is a Long to the bson package: it is asked first.
  if (v instanceof Timestamp) return writeBigEndian(out, T.timestamp, v.toBigInt() & 0xffffffffffffffffn, 8);
  if (typeof v === 'number' || v instanceof Double || v instanceof Long) return writeNumber(out, v);
  if (v instanceof Date) return writeBigEndian(out, T.date, (BigInt(v.getTime()) + (1n << 63n)) & 0xffffffffffffffffn, 8);
  if (v instanceof ObjectId) return void out.push(T.oid, ...v.id);
  if (v instanceof Binary) return writeBinary(out, v);
  if (v instanceof MinKey) return void out.push(T.minKey);
  if (v instanceof MaxKey) return void out.push(T.maxKey);
  if (Array.isArray(v)) {
    out.push(T.array);
    for (const e of v) writeValue(out, e);
    return void out.push(END);
  }
  if (isPlainObject(v)) {
    out.push(T.object);
    for (const [k, e] of Object.entries(v)) {
      if (e === undefined) continue;
      // The value's type byte, its name, then the value with its type byte again.
      const element: number[] = [];
      writeValue(element, e);
      out.push(element[0]!, ...Buffer.from(k, 'utf8'), END, ...element);
    }
    return void out.push(END);
  }
  // Any other type (regex, code, decimal) is keyed by its text: order among them is not MongoDB's.
  writeString(out, String(v));
}

function writeString(out: number[], s: string): void {
  out.push(T.string);
  for (const b of Buffer.from(s, 'utf8')) {
    out.push(b);
    if (b === 0) out.push(0xff);
  }
  out.push(END);
}

function writeBigEndian(out: number[], type: number, value: bigint, bytes: number): void {
  out.push(type);
  for (let i = bytes - 1; i >= 0; i--) out.push(Number((value >> BigInt(i * 8)) & 0xffn));
}

function writeBinary(out: number[], v: Binary): void {
  const data = v.buffer.subarray(0, v.position);
  out.push(T.binData);
  if (data.length < 0xff) out.push(data.length);
  else out.push(0xff, (data.length >>> 24) & 0xff, (data.length >>> 16) & 0xff, (data.length >>> 8) & 0xff, data.length & 0xff);
  out.push(v.sub_type, ...data);
}

function writeNumber(out: number[], v: number | Double | Long): void {
  const big = v instanceof Long ? v.toBigInt() : undefined;
  const d = big === undefined ? toDouble(v) : Number(big);
  if (big === undefined && (!Number.isInteger(d) || Math.abs(d) >= 2 ** 53 || Object.is(d, -0))) {
    if (Object.is(d, -0)) return void out.push(T.zero);
    const bits = Buffer.alloc(8);
    bits.writeDoubleBE(Math.abs(d));
    out.push(d < 0 ? T.negLarge : T.posLarge, ...(d < 0 ? bits.map((b) => 0xff - b) : bits));
    return;
  }
  const n = big ?? BigInt(d);
  if (n === 0n) return void out.push(T.zero);
  // The magnitude shifted left one bit: the low bit says a fraction follows, which integers lack.
  const magnitude = (n < 0n ? -n : n) << 1n;
  let bytes = 1;
  while (magnitude >> BigInt(bytes * 8) > 0n) bytes += 1;
  const type = n > 0n ? T.pos1 + bytes - 1 : T.neg1 - (bytes - 1);
  const start = out.length;
  writeBigEndian(out, type, magnitude, bytes);
  if (n < 0n) for (let i = start + 1; i < out.length; i++) out[i] = 0xff - out[i]!;
}

export class KeyStringDecodeError extends Error {}

// The values of a key `encodeKeyString` wrote; throws KeyStringDecodeError on bytes it did not.
export function decodeKeyString(bytes: Buffer): unknown[] {
  const r = { bytes, at: 0 };
  const out: unknown[] = [];
  for (;;) {
    const type = byte(r);
    if (type === KEY_END) {
      if (r.at !== bytes.length) throw new KeyStringDecodeError('bytes after the end of the key');
      return out;
    }
    out.push(readValue(r, type));
  }
}

interface Reader {
  bytes: Buffer;
  at: number;
}

function byte(r: Reader): number {
  if (r.at >= r.bytes.length) throw new KeyStringDecodeError('the key ends early');
  return r.bytes[r.at++]!;
}

function take(r: Reader, n: number): Buffer {
  if (r.at + n > r.bytes.length) throw new KeyStringDecodeError('the key ends early');
  const b = r.bytes.subarray(r.at, r.at + n);
  r.at += n;
  return b;
}

function readBigEndian(r: Reader, n: number): bigint {
  let v = 0n;
  for (const b of take(r, n)) v = (v << 8n) | BigInt(b);
  return v;
}

function readCString(r: Reader): string {
  const end = r.bytes.indexOf(0, r.at);
  if (end < 0) throw new KeyStringDecodeError('unterminated field name');
  const s = r.bytes.subarray(r.at, end).toString('utf8');
  r.at = end + 1;
  return s;
}

function readValue(r: Reader, type: number): unknown {
  switch (type) {
    case T.minKey: return new MinKey();
    case T.maxKey: return new MaxKey();
    case T.undefined: return undefined;
    case T.null: return null;
    case T.false: return false;
    case T.true: return true;
    case T.zero: return 0;
    case T.string: return readString(r);
    case T.timestamp: {
      const v = readBigEndian(r, 8);
      return new Timestamp({ t: Number(v >> 32n), i: Number(v & 0xffffffffn) });
    }
    case T.date: return new Date(Number(readBigEndian(r, 8) - (1n << 63n)));
    case T.oid: return new ObjectId(Buffer.from(take(r, 12)));
    case T.binData: {
      let len = byte(r);
      if (len === 0xff) len = Number(readBigEndian(r, 4));
      const sub = byte(r);
      return new Binary(Buffer.from(take(r, len)), sub);
    }
    case T.array: {
      const arr: unknown[] = [];
      for (let t = byte(r); t !== END; t = byte(r)) arr.push(readValue(r, t));
      return arr;
    }
    case T.object: {
      const doc: Doc = {};
      for (let t = byte(r); t !== END; t = byte(r)) {
        const name = readCString(r);
        if (byte(r) !== t) throw new KeyStringDecodeError(`field ${name}'s type bytes differ`);
        doc[name] = readValue(r, t);
      }
      return doc;
    }
    case T.posLarge: return take(r, 8).readDoubleBE();
    case T.negLarge: return -Buffer.from(take(r, 8).map((b) => 0xff - b)).readDoubleBE();
  }
  if (type >= T.pos1 && type < T.pos1 + 8) return integer(readBigEndian(r, type - T.pos1 + 1));
  if (type <= T.neg1 && type > T.neg1 - 8) {
    const n = T.neg1 - type + 1;
    return -integer(BigInt('0x' + Buffer.from(take(r, n).map((b) => 0xff - b)).toString('hex')));
  }
  throw new KeyStringDecodeError(`unknown type byte ${type}`);
}

function integer(shifted: bigint): number {
  if ((shifted & 1n) !== 0n) throw new KeyStringDecodeError('a number with a fraction');
  return Number(shifted >> 1n);
}

function readString(r: Reader): string {
  const bytes: number[] = [];
  for (;;) {
    const b = byte(r);
    if (b !== 0) {
      bytes.push(b);
      continue;
    }
    if (r.at < r.bytes.length && r.bytes[r.at] === 0xff) {
      r.at += 1;
      bytes.push(0);
      continue;
    }
    return Buffer.from(bytes).toString('utf8');
  }
}
