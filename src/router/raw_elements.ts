// Just enough of BSON, read in place, for the router's byte-level paths (raw_reply.ts,
// received_command.ts): elements walked one at a time, names and values compared without decoding.

import { BOOLEAN, cstringSize, DOUBLE, INT32, INT64, valueSize } from '../bson/raw_document.js';

export { ARRAY as TYPE_ARRAY, BOOLEAN as TYPE_BOOL, DOUBLE as TYPE_DOUBLE, INT32 as TYPE_INT32, INT64 as TYPE_INT64, OBJECT as TYPE_DOCUMENT, STRING as TYPE_STRING, sameName as nameIs } from '../bson/raw_document.js';

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
  const name = cstringSize(buf, e.nameStart, end);
  if (name < 0) return false;
  e.nameEnd = e.nameStart + name - 1;
  e.valueStart = e.nameEnd + 1;
  const size = valueSize(buf, e.type, e.valueStart, end);
  e.end = e.valueStart + size;
  return size >= 0;
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

// checkOk's test (ok is 1 or true) on the raw value.
export function isOne(buf: Buffer, type: number, at: number): boolean {
  switch (type) {
    case DOUBLE: return buf.readDoubleLE(at) === 1;
    case INT32: return buf.readInt32LE(at) === 1;
    case INT64: return buf.readInt32LE(at) === 1 && buf.readInt32LE(at + 4) === 0;
    case BOOLEAN: return buf[at] === 1;
    default: return false;
  }
}
