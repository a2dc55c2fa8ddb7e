import { isUtf8 } from 'node:buffer';
import { Double, Long, ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, type Doc } from './values.js';

// Reading a BSON document from its bytes without decoding all of it: the write path needs only
// `_id` and the indexed fields of a document it stores as received.

export const DOUBLE = 0x01;
export const STRING = 0x02;
export const OBJECT = 0x03;
export const ARRAY = 0x04;
const BINARY = 0x05;
const UNDEFINED = 0x06;
const OBJECT_ID = 0x07;
export const BOOLEAN = 0x08;
const DATE = 0x09;
const NULL = 0x0a;
const REGEX = 0x0b;
const CODE = 0x0d;
const SYMBOL = 0x0e;
export const INT32 = 0x10;
const TIMESTAMP = 0x11;
export const INT64 = 0x12;
const DECIMAL = 0x13;
const MIN_KEY = 0xff;
const MAX_KEY = 0x7f;
const BINARY_OLD = 0x02;
const DOLLAR = 0x24;

// Deeper documents take the decoding path; no real document comes near.
const MAX_FAST_DEPTH = 100;

// Bytes from `at` to the end of the cstring there, its NUL included; -1 when unterminated before `limit`.
export function cstringSize(b: Buffer, at: number, limit: number): number {
  const nul = b.indexOf(0, at);
  return nul < 0 || nul >= limit ? -1 : nul - at + 1;
}

// Size of the value of an element of `type` that starts at `at`, or -1 when the bytes before
// `limit` cannot hold it (or the type is unknown).
export function valueSize(b: Buffer, type: number, at: number, limit: number): number {
  let size: number;
  switch (type) {
    case DOUBLE: case DATE: case TIMESTAMP: case INT64: size = 8; break;
    case INT32: size = 4; break;
    case OBJECT_ID: size = 12; break;
    case DECIMAL: size = 16; break;
    case BOOLEAN: size = 1; break;
    case UNDEFINED: case NULL: case MIN_KEY: case MAX_KEY: size = 0; break;
    case STRING: case CODE: case SYMBOL: {
      if (at + 4 > limit) return -1;
      const n = b.readInt32LE(at);
      if (n < 1 || at + 4 + n > limit || b[at + 4 + n - 1] !== 0) return -1;
      size = 4 + n;
      break;
    }
    case OBJECT: case ARRAY:
      if (at + 4 > limit) return -1;
      size = b.readInt32LE(at);
      if (size < 5) return -1;
      break;
    case BINARY:
      if (at + 4 > limit) return -1;
      size = b.readInt32LE(at);
      if (size < 0) return -1;
      size += 5;
      break;
    case REGEX: {
      const pattern = cstringSize(b, at, limit);
      const options = pattern < 0 ? -1 : cstringSize(b, at + pattern, limit);
      if (options < 0) return -1;
      size = pattern + options;
      break;
    }
    default: return -1;
  }
  return at + size <= limit ? size : -1;
}

// A document that readPlainDocument accepted, with its top-level `_id` elements (a document may
// hold a name twice), found on the way.
export interface PlainDocument {
  bytes: Buffer;
  ids: ElementSpan[];
  // The top-level elements named as readPlainDocument's `also` asked (none when it did not).
  named: ElementSpan[];
}

// The document when `bytes` is exactly one BSON document that deserializeDocument accepts, using
// only types this file knows, and with no '$'-prefixed field name at any depth (those may be
// DBRefs, which decoding turns into other objects). Undefined proves nothing: the caller decodes
// to find out, so decoding stays the judge of what is valid and of the error message.
export function readPlainDocument(bytes: Buffer, also?: Buffer): PlainDocument | undefined {
  if (bytes.length < 5 || bytes.readInt32LE(0) !== bytes.length) return undefined;
  const top: PlainDocument = { bytes, ids: [], named: [] };
  return validDocument(bytes, 0, bytes.length, false, 0, top, also) ? top : undefined;
}

const ID = Buffer.from('_id');

function validDocument(b: Buffer, start: number, end: number, isArray: boolean, depth: number, top?: PlainDocument, also?: Buffer): boolean {
  if (depth > MAX_FAST_DEPTH || b[end - 1] !== 0) return false;
  const last = end - 1;
  let i = start + 4;
  while (i < last) {
    const type = b[i]!;
    const name = cstringSize(b, i + 1, last);
    if (name < 0 || (!isArray && b[i + 1] === DOLLAR)) return false;
    const at = i + 1 + name;
    const size = valueSize(b, type, at, last);
    if (size < 0) return false;
    switch (type) {
      case STRING: case CODE: case SYMBOL:
        if (!validUtf8(b, at + 4, at + size - 1)) return false;
        break;
      case OBJECT: case ARRAY:
        if (!validDocument(b, at, at + size, type === ARRAY, depth + 1)) return false;
        break;
      case BOOLEAN:
        if (b[at]! > 1) return false;
        break;
      // Old binary nests a second length; bson's regular expressions check their flags; an
      // undefined value is dropped when re-encoded. All rare: decoding handles them.
      case BINARY:
        if (b[at + 4] === BINARY_OLD) return false;
        break;
      case REGEX: case UNDEFINED:
        return false;
    }
    if (top !== undefined) {
      if (sameName(b, i + 1, at - 1, ID)) top.ids.push({ type, start: i, value: at, end: at + size });
      else if (also !== undefined && sameName(b, i + 1, at - 1, also)) top.named.push({ type, start: i, value: at, end: at + size });
    }
    i = at + size;
  }
  return i === last;
}

// Short ASCII strings (most field values) are checked here, cheaper than a call into native code.
const ASCII_CHECK_MAX = 64;

function validUtf8(b: Buffer, start: number, end: number): boolean {
  if (end - start <= ASCII_CHECK_MAX) {
    let i = start;
    while (i < end && b[i]! < 0x80) i++;
    if (i === end) return true;
  }
  return isUtf8(b.subarray(start, end));
}

// The documents laid end to end in b[start, end): an array's elements (`keyed`: each a document
// behind its type byte and key) or a document sequence's; each a view into `b`. Undefined when
// one is not a document or does not fit (sizes only: the documents' contents are not checked).
export function embeddedDocuments(b: Buffer, start: number, end: number, keyed: boolean): Buffer[] | undefined {
  const documents: Buffer[] = [];
  let pos = start;
  while (pos < end) {
    let at = pos;
    if (keyed) {
      const name = b[pos] === OBJECT ? cstringSize(b, pos + 1, end) : -1;
      if (name < 0) return undefined;
      at = pos + 1 + name;
    }
    if (at + 4 > end) return undefined;
    const size = b.readInt32LE(at);
    if (size < 5 || at + size > end) return undefined;
    documents.push(b.subarray(at, at + size));
    pos = at + size;
  }
  return pos === end ? documents : undefined;
}

// One top-level element: where it starts (its type byte), where its value starts, where it ends.
export interface ElementSpan {
  type: number;
  start: number;
  value: number;
  end: number;
}

type Visit = (type: number, nameAt: number, nameEnd: number, value: number, end: number) => void;

function walk(b: Buffer, visit: Visit): void {
  const last = b.length - 1;
  let i = 4;
  while (i < last) {
    const type = b[i]!;
    const name = cstringSize(b, i + 1, last);
    const at = i + 1 + name;
    const size = name < 0 ? -1 : valueSize(b, type, at, last);
    if (size < 0) throw invalid(b);
    visit(type, i + 1, at - 1, at, at + size);
    i = at + size;
  }
}

// The error decoding gives, for bytes the walk cannot follow.
function invalid(b: Buffer): MongoError {
  deserializeDocument(b);
  return new MongoError(ErrorCodes.InvalidBSON, 'invalid BSON: element runs past the end of the document');
}

// Field names as bytes, kept for the names the write path asks for again and again (`_id` and
// indexed fields); the bound keeps a stream of distinct names from growing it without end.
const NAME_CACHE_MAX = 1024;
const nameCache = new Map<string, Buffer>();

export function nameBytes(name: string): Buffer {
  let bytes = nameCache.get(name);
  if (bytes === undefined) {
    bytes = Buffer.from(name, 'utf8');
    if (nameCache.size < NAME_CACHE_MAX) nameCache.set(name, bytes);
  }
  return bytes;
}

export function sameName(b: Buffer, at: number, end: number, name: Buffer): boolean {
  if (end - at !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[at + k] !== name[k]) return false;
  return true;
}

// `bytes` with the element at `span` moved to the front, the others in their order (MongoDB stores
// `_id` first).
export function moveToFront(bytes: Buffer, span: ElementSpan): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let at = 4;
  at += bytes.copy(out, at, span.start, span.end);
  at += bytes.copy(out, at, 4, span.start);
  bytes.copy(out, at, span.end);
  out.writeInt32LE(out.length, 0);
  return out;
}

// `bytes` with an ObjectId element named `name` in front.
export function prependObjectId(bytes: Buffer, name: string, id: ObjectId): Buffer {
  const key = nameBytes(name);
  const element = 1 + key.length + 1 + 12;
  const out = Buffer.allocUnsafe(bytes.length + element);
  out.writeInt32LE(out.length, 0);
  out[4] = OBJECT_ID;
  key.copy(out, 5);
  out[5 + key.length] = 0;
  out.set(id.id, 6 + key.length);
  bytes.copy(out, 4 + element, 4);
  return out;
}

export function decodeElement(b: Buffer, span: ElementSpan): unknown {
  return decodeValue(b, span.type, span.start, span.value, span.end);
}

// The value of one element as deserializeDocument would give it. Common scalar types are read
// here; anything else is decoded by `bson` from a one-element document.
function decodeValue(b: Buffer, type: number, start: number, value: number, end: number): unknown {
  switch (type) {
    case INT32: return b.readInt32LE(value);
    case OBJECT_ID: return new ObjectId(b.subarray(value, value + 12));
    case STRING: return b.toString('utf8', value + 4, end - 1);
    case DOUBLE: return new Double(b.readDoubleLE(value));
    case INT64: return Long.fromBits(b.readInt32LE(value), b.readInt32LE(value + 4));
    case BOOLEAN: return b[value] === 1;
    case NULL: return null;
    case DATE: return new Date(b.readInt32LE(value + 4) * 0x100000000 + b.readUInt32LE(value));
  }
  const one = Buffer.allocUnsafe(4 + (end - start) + 1);
  one.writeInt32LE(one.length, 0);
  b.copy(one, 4, start, end);
  one[one.length - 1] = 0;
  const doc = deserializeDocument(one);
  return doc[Object.keys(doc)[0]!];
}

// BSON bytes as a Buffer over the same memory (documents arrive as either).
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const ID_PATH = ['_id'];

// A stored document's `_id`, decoding nothing else.
export function idOfBytes(bytes: Uint8Array): unknown {
  return new LazyDocument(asBuffer(bytes)).fields(ID_PATH)._id;
}

// A document stored as received, read on demand: top-level fields are decoded when first asked
// for, the whole document only if someone needs it.
export class LazyDocument {
  private decoded: Doc | undefined;
  private readonly picked: Doc = {};
  private readonly looked: string[] = [];

  constructor(readonly bytes: Buffer) {}

  // A document holding at least the top-level fields that `paths` start with ('a.b' needs 'a'),
  // each as decoding the whole document would give it. Shared: callers must not change it.
  fields(paths: readonly string[]): Doc {
    if (this.decoded !== undefined) return this.decoded;
    let missing: string[] | undefined;
    for (const path of paths) {
      const dot = path.indexOf('.');
      const top = dot === -1 ? path : path.slice(0, dot);
      if (this.looked.includes(top)) continue;
      this.looked.push(top);
      (missing ??= []).push(top);
    }
    if (missing !== undefined) this.read(missing);
    return this.picked;
  }

  // Records a value known without reading it (an `_id` just generated).
  know(name: string, value: unknown): void {
    this.looked.push(name);
    this.picked[name] = value;
  }

  whole(): Doc {
    return (this.decoded ??= deserializeDocument(this.bytes));
  }

  private read(names: string[]): void {
    const b = this.bytes;
    const wanted = names.map(nameBytes);
    // A name held twice decodes to its last value, as in `bson`.
    walk(b, (type, nameAt, nameEnd, value, end) => {
      for (let k = 0; k < wanted.length; k++) {
        if (sameName(b, nameAt, nameEnd, wanted[k]!)) this.picked[names[k]!] = decodeValue(b, type, nameAt - 1, value, end);
      }
    });
  }
}
