import { BSON, Binary, BSONRegExp, Code, Decimal128, Double, Int32, Long, MinKey, ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// How BSON values live in memory here, chosen so that a document survives a read-modify-write
// with every type intact (the `bson` package's default promotion would turn a double 1.0 into an
// int32 1):
//   int32   -> JS number (always an integer in int32 range)
//   double  -> bson Double (a plain non-int32 JS number is also read as a double)
//   int64   -> bson Long, decimal -> bson Decimal128
//   regex   -> bson BSONRegExp (JS RegExp cannot hold every BSON flag)
//   missing -> undefined (never stored)
export type Doc = Record<string, unknown>;

export { Binary, BSONRegExp, Decimal128, Double, Int32, Long, MinKey, ObjectId, Timestamp };

const deserializeOptions = { promoteValues: false, bsonRegExp: true, validation: { utf8: true } } as const;

// Decodes a reply whose named array fields hold documents to be passed on as they are (a
// migration's clone batches): those arrays come back as each document's bytes, views into `bytes`
// rather than copies, so nothing decodes and re-encodes them.
export function deserializeWithRawArrays(bytes: Uint8Array, fields: readonly string[]): Doc {
  try {
    return BSON.deserialize(bytes, { ...deserializeOptions, fieldsAsRaw: Object.fromEntries(fields.map((f) => [f, true])) }) as Doc;
  } catch (err) {
    throw new MongoError(ErrorCodes.InvalidBSON, `invalid BSON: ${(err as Error).message}`);
  }
}

export function deserializeDocument(bytes: Uint8Array): Doc {
  let doc: Doc;
  try {
    doc = BSON.deserialize(bytes, deserializeOptions) as Doc;
  } catch (err) {
    throw new MongoError(ErrorCodes.InvalidBSON, `invalid BSON: ${(err as Error).message}`);
  }
  const found = { dbRef: false };
  const normalized = normalizeInPlace(doc, found) as Doc;
  return found.dbRef ? decodeAsDocuments(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, false) as Doc : normalized;
}

// `bson` turns every {$ref, $id[, $db]} subdocument into a DBRef object, with no option to keep
// it a document. MongoDB sees such a subdocument as a document like any other (queries and updates
// follow paths into it), and the DBRef object would lose its field order, split a dotted $ref
// into $db and $ref, and move extra fields: so a document holding one is decoded again here,
// every subdocument becoming a plain object. Rare, hence not the fast path. The bytes were already
// checked by the first decoding.
function decodeAsDocuments(b: Buffer, start: number, isArray: boolean): Doc | unknown[] {
  const out: Doc | unknown[] = isArray ? [] : {};
  for (const [type, nameAt, nameLength, at, length] of BSON.onDemand.parseToElements(b, start)) {
    let value: unknown;
    if (type === OBJECT_TYPE || type === ARRAY_TYPE) {
      value = decodeAsDocuments(b, at, type === ARRAY_TYPE);
    } else if (type === CODE_WITH_SCOPE_TYPE) {
      const scopeAt = at + 8 + b.readInt32LE(at + 4);
      value = new Code(b.toString('utf8', at + 8, scopeAt - 1), decodeAsDocuments(b, scopeAt, false) as Doc);
    } else {
      value = decodeScalar(b, nameAt - 1, at + length);
    }
    if (Array.isArray(out)) {
      out.push(value);
      continue;
    }
    const name = b.toString('utf8', nameAt, nameAt + nameLength);
    if (name === '__proto__') Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
    else out[name] = value;
  }
  return out;
}

const OBJECT_TYPE = 0x03;
const ARRAY_TYPE = 0x04;
const CODE_WITH_SCOPE_TYPE = 0x0f;

// The element in b[start, end) decoded by `bson` from a one-element document.
function decodeScalar(b: Buffer, start: number, end: number): unknown {
  const one = Buffer.allocUnsafe(4 + (end - start) + 1);
  one.writeInt32LE(one.length, 0);
  b.copy(one, 4, start, end);
  one[one.length - 1] = 0;
  const doc = BSON.deserialize(one, deserializeOptions) as Doc;
  return normalizeInPlace(doc[Object.keys(doc)[0]!], { dbRef: false });
}

export function serializeDocument(doc: Doc): Buffer {
  return Buffer.from(BSON.serialize(doc, { checkKeys: false, ignoreUndefined: true }));
}

function normalizeInPlace(value: unknown, found: { dbRef: boolean }): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = normalizeInPlace(value[i], found);
    return value;
  }
  const tag = (value as { _bsontype?: string })._bsontype;
  if (tag === 'Int32') return (value as Int32).value;
  if (tag === 'DBRef') found.dbRef = true;
  if (tag !== undefined || value instanceof Date) return value;
  const obj = value as Doc;
  for (const key of Object.keys(obj)) obj[key] = normalizeInPlace(obj[key], found);
  return obj;
}

export function bsonTag(v: unknown): string | undefined {
  return v !== null && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
}

export function isPlainObject(v: unknown): v is Doc {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Date) return false;
  return bsonTag(v) === undefined;
}

export function isNumber(v: unknown): boolean {
  if (typeof v === 'number') return true;
  const tag = bsonTag(v);
  return tag === 'Double' || tag === 'Long' || tag === 'Decimal128' || tag === 'Int32';
}

export type NumberKind = 'int' | 'long' | 'double' | 'decimal';

export function numberKind(v: unknown): NumberKind {
  if (typeof v === 'number') return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 && !Object.is(v, -0) ? 'int' : 'double';
  switch (bsonTag(v)) {
    case 'Int32': return 'int';
    case 'Long': return 'long';
    case 'Decimal128': return 'decimal';
    default: return 'double';
  }
}

export function toDouble(v: unknown): number {
  if (typeof v === 'number') return v;
  switch (bsonTag(v)) {
    case 'Double': return (v as Double).value;
    case 'Int32': return (v as Int32).value;
    case 'Long': return (v as Long).toNumber();
    case 'Decimal128': return Number((v as Decimal128).toString());
    default: return NaN;
  }
}

export function toBigIntExact(v: unknown): bigint | undefined {
  if (bsonTag(v) === 'Long') return (v as Long).toBigInt();
  const d = toDouble(v);
  return Number.isInteger(d) ? BigInt(d) : undefined;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function widestKind(a: NumberKind, b: NumberKind): NumberKind {
  const rank: Record<NumberKind, number> = { int: 0, long: 1, double: 2, decimal: 3 };
  return rank[a] >= rank[b] ? a : b;
}

// Integer results that overflow widen (int -> long -> double), as MongoDB's $inc and $add do.
function integerResult(r: bigint, kind: 'int' | 'long'): unknown {
  if (kind === 'int' && r >= BigInt(INT32_MIN) && r <= BigInt(INT32_MAX)) return Number(r);
  if (r >= INT64_MIN && r <= INT64_MAX) return Long.fromBigInt(r);
  return new Double(Number(r));
}

export function numericAdd(a: unknown, b: unknown): unknown {
  return arith(a, b, (x, y) => x + y, (x, y) => x + y);
}
export function numericSubtract(a: unknown, b: unknown): unknown {
  return arith(a, b, (x, y) => x - y, (x, y) => x - y);
}
export function numericMultiply(a: unknown, b: unknown): unknown {
  return arith(a, b, (x, y) => x * y, (x, y) => x * y);
}

function arith(a: unknown, b: unknown, onInt: (x: bigint, y: bigint) => bigint, onDouble: (x: number, y: number) => number): unknown {
  const kind = widestKind(numberKind(a), numberKind(b));
  if (kind === 'int' || kind === 'long') return integerResult(onInt(toBigIntExact(a)!, toBigIntExact(b)!), kind);
  const r = onDouble(toDouble(a), toDouble(b));
  if (kind === 'decimal') return Decimal128.fromString(String(r));
  return new Double(r);
}

export function cloneValue<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(cloneValue) as T;
  if (!isPlainObject(v)) return v;
  const out: Doc = {};
  for (const key of Object.keys(v)) out[key] = cloneValue((v as Doc)[key]);
  return out as T;
}
