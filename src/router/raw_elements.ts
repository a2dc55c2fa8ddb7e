// Just enough of BSON, read in place, for the router's byte-level paths (raw_reply.ts,
// received_command.ts): elements walked one at a time, names and values compared without decoding.

export const TYPE_DOUBLE = 0x01;
export const TYPE_STRING = 0x02;
export const TYPE_DOCUMENT = 0x03;
export const TYPE_ARRAY = 0x04;
export const TYPE_BOOL = 0x08;
export const TYPE_INT32 = 0x10;
export const TYPE_INT64 = 0x12;

// One element of a document, as readElement finds it.
export interface Element {
  type: number;
  nameStart: number;
  // The NUL ending the name; the value starts after it.
  nameEnd: number;
  valueStart: number;
  end: number;
}

export function newElement(): Element {
  return { type: 0, nameStart: 0, nameEnd: 0, valueStart: 0, end: 0 };
}

// Reads the element at `pos` of a document whose terminator is at `end` into `e`; false when its
// bytes do not hold together (or its type is unknown).
export function readElement(buf: Buffer, pos: number, end: number, e: Element): boolean {
  e.type = buf[pos]!;
  e.nameStart = pos + 1;
  e.nameEnd = cstringEnd(buf, e.nameStart, end);
  if (e.nameEnd < 0) return false;
  e.valueStart = e.nameEnd + 1;
  const size = valueSize(buf, e.type, e.valueStart, end);
  e.end = e.valueStart + size;
  return size >= 0;
}

// Index of the NUL ending the cstring at `start`, or -1 when there is none before `end`.
export function cstringEnd(buf: Buffer, start: number, end: number): number {
  for (let i = start; i < end; i++) if (buf[i] === 0) return i;
  return -1;
}

// The UTF-8 bytes [start, end) spell `s` (compared per char while it is ASCII).
export function stringIs(buf: Buffer, start: number, end: number, s: string): boolean {
  if (end - start !== s.length) return end - start > s.length && buf.toString('utf8', start, end) === s;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return buf.toString('utf8', start, end) === s;
    if (buf[start + i] !== c) return false;
  }
  return true;
}

export function nameIs(buf: Buffer, start: number, end: number, name: Buffer): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (buf[start + i] !== name[i]) return false;
  return true;
}

// checkOk's test (ok is 1 or true) on the raw value.
export function isOne(buf: Buffer, type: number, at: number): boolean {
  switch (type) {
    case TYPE_DOUBLE: return buf.readDoubleLE(at) === 1;
    case TYPE_INT32: return buf.readInt32LE(at) === 1;
    case TYPE_INT64: return buf.readInt32LE(at) === 1 && buf.readInt32LE(at + 4) === 0;
    case TYPE_BOOL: return buf[at] === 1;
    default: return false;
  }
}

// Bytes of the value of a `type` element starting at `at`; -1 when unknown or past `end`.
export function valueSize(buf: Buffer, type: number, at: number, end: number): number {
  let size: number;
  switch (type) {
    case 0x06: case 0x0a: case 0x7f: case 0xff: size = 0; break; // undefined, null, MaxKey, MinKey
    case TYPE_BOOL: size = 1; break;
    case TYPE_INT32: size = 4; break;
    case TYPE_DOUBLE: case 0x09: case 0x11: case TYPE_INT64: size = 8; break; // double, date, timestamp, int64
    case 0x07: size = 12; break; // ObjectId
    case 0x13: size = 16; break; // decimal
    case TYPE_STRING: case 0x0d: case 0x0e: // string, code, symbol
      if (at + 4 > end) return -1;
      size = 4 + buf.readInt32LE(at);
      if (size < 5) return -1;
      break;
    case TYPE_DOCUMENT: case TYPE_ARRAY: case 0x0f: // document, array, code with scope
      if (at + 4 > end) return -1;
      size = buf.readInt32LE(at);
      if (size < 5) return -1;
      break;
    case 0x05: // binary
      if (at + 4 > end) return -1;
      size = 5 + buf.readInt32LE(at);
      if (size < 5) return -1;
      break;
    case 0x0b: { // regex: two cstrings
      const first = buf.indexOf(0, at);
      const second = first < 0 ? -1 : buf.indexOf(0, first + 1);
      if (second < 0) return -1;
      size = second + 1 - at;
      break;
    }
    case 0x0c: // DBPointer
      if (at + 4 > end) return -1;
      size = 4 + buf.readInt32LE(at) + 12;
      if (size < 17) return -1;
      break;
    default:
      return -1;
  }
  return at + size <= end ? size : -1;
}
