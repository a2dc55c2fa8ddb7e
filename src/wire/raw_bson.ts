import { BSON, type Double, type Long } from 'bson';

// Builds reply documents around BSON bytes already in hand (documents read from the store), so a
// find reply does not decode and re-encode every document. The `bson` package cannot embed raw
// bytes, hence this small writer; values it has no fast path for go through `bson`.
export class RawDocument {
  constructor(readonly bytes: Buffer) {}
}

// A whole BSON array (length prefix and terminator included), written verbatim.
export class RawArray {
  constructor(readonly bytes: Buffer) {}
}

// Builds a RawArray of documents out of buffers that do not stay valid (a store's read buffer):
// each document is copied once, into the array, with no object per document.
export class RawArrayBuilder {
  private buf: Buffer;
  private pos = 4;
  private count = 0;

  constructor(expectedBytes: number) {
    this.buf = Buffer.allocUnsafe(expectedBytes + 1024);
  }

  get length(): number {
    return this.count;
  }

  push(doc: Uint8Array): void {
    // The element's name is its index in decimal: at most 10 digits.
    const need = this.pos + 12 + doc.byteLength + 1;
    if (need > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, need));
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
    this.buf[this.pos++] = 0x03;
    this.writeIndex(this.count);
    this.buf[this.pos++] = 0;
    this.buf.set(doc, this.pos);
    this.pos += doc.byteLength;
    this.count += 1;
  }

  private writeIndex(n: number): void {
    if (n >= 10) this.writeIndex(Math.floor(n / 10));
    this.buf[this.pos++] = 0x30 + (n % 10);
  }

  finish(): RawArray {
    this.buf[this.pos++] = 0;
    this.buf.writeInt32LE(this.pos, 0);
    return new RawArray(this.buf.subarray(0, this.pos));
  }
}

const serializeOptions = { checkKeys: false, ignoreUndefined: true } as const;

// Every reply is written into one growing scratch buffer and copied out once, into a buffer that
// already has room for the message header: one allocation and one copy per reply. Nothing here
// calls back into the writer, so a single scratch buffer serves every reply. Any `reserve` may
// put a larger buffer in `buf`'s place: no write may use a `buf` read before one.
const SCRATCH_KEEP = 1 << 20;
let buf = Buffer.allocUnsafe(64 * 1024);
let pos = 0;

function reserve(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

// A UTF-8 string has at most 3 bytes per UTF-16 unit, so reserving that much lets `write` encode
// in place without measuring first. Short ASCII strings (field names, namespaces) are copied
// here: cheaper than a call into the native encoder.
const SHORT = 32;

function writeUtf8(s: string): number {
  reserve(s.length * 3 + 1);
  if (s.length <= SHORT) {
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[pos + i] = c;
    }
    if (i === s.length) {
      pos += i;
      return i;
    }
  }
  const n = buf.write(s, pos, 'utf8');
  pos += n;
  return n;
}

function header(type: number, name: string): void {
  reserve(1);
  buf[pos++] = type;
  writeUtf8(name);
  buf[pos++] = 0;
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
    && (value as { _bsontype?: string })._bsontype === undefined && !(value instanceof RawDocument) && !(value instanceof RawArray);
}

function writeDouble(name: string, value: number): void {
  header(0x01, name);
  reserve(8);
  pos = buf.writeDoubleLE(value, pos);
}

function writeElement(name: string, value: unknown): void {
  if (value === undefined) return;
  if (value instanceof RawDocument || value instanceof RawArray) {
    header(value instanceof RawDocument ? 0x03 : 0x04, name);
    reserve(value.bytes.length);
    pos += value.bytes.copy(buf, pos);
  } else if (Array.isArray(value)) {
    header(0x04, name);
    writeArray(value);
  } else if (isPlain(value)) {
    header(0x03, name);
    writeDocument(value);
  } else if (typeof value === 'string') {
    header(0x02, name);
    reserve(4);
    const at = pos;
    pos += 4;
    // Measured before `buf` is read: writing the string may move the scratch to a larger buffer,
    // and a prefix written into the one left behind would be lost.
    const length = writeUtf8(value) + 1;
    buf.writeInt32LE(length, at);
    buf[pos++] = 0;
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -2147483648 && value <= 2147483647 && !Object.is(value, -0)) {
      header(0x10, name);
      reserve(4);
      pos = buf.writeInt32LE(value, pos);
    } else {
      writeDouble(name, value);
    }
  } else if (typeof value === 'boolean') {
    header(0x08, name);
    reserve(1);
    buf[pos++] = value ? 1 : 0;
  } else if (value === null) {
    header(0x0a, name);
  } else if ((value as { _bsontype?: string })._bsontype === 'Long') {
    header(0x12, name);
    reserve(8);
    pos = buf.writeInt32LE((value as Long).low, pos);
    pos = buf.writeInt32LE((value as Long).high, pos);
  } else if ((value as { _bsontype?: string })._bsontype === 'Double') {
    writeDouble(name, (value as Double).value);
  } else {
    const one = BSON.serialize({ [name]: value }, serializeOptions);
    reserve(one.length);
    buf.set(one.subarray(4, one.length - 1), pos);
    pos += one.length - 5;
  }
}

function writeDocument(doc: Record<string, unknown>): void {
  reserve(4);
  const start = pos;
  pos += 4;
  for (const key of Object.keys(doc)) writeElement(key, doc[key]);
  reserve(1);
  buf[pos++] = 0;
  buf.writeInt32LE(pos - start, start);
}

function writeArray(items: unknown[]): void {
  reserve(4);
  const start = pos;
  pos += 4;
  for (let i = 0; i < items.length; i++) writeElement(String(i), items[i]);
  reserve(1);
  buf[pos++] = 0;
  buf.writeInt32LE(pos - start, start);
}

// Serialises `doc`, where any RawDocument value (at any depth) is written verbatim, after
// `headerSize` bytes left for the caller to fill (a message header).
export function serializeWithRaw(doc: Record<string, unknown>, headerSize = 0): Buffer {
  pos = 0;
  try {
    writeDocument(doc);
    const out = Buffer.allocUnsafe(headerSize + pos);
    buf.copy(out, headerSize, 0, pos);
    return out;
  } finally {
    if (buf.length > SCRATCH_KEEP) buf = Buffer.allocUnsafe(64 * 1024);
  }
}
