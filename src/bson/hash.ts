import { createHash, hash, type Hash } from 'node:crypto';
import { Long, type Binary, type BSONRegExp, type Code, type Decimal128, type ObjectId, type Timestamp } from 'bson';
import { canonicalType } from './compare.js';
import { bsonTag, toDouble, type Doc } from './values.js';

// MongoDB's hash of a value for hashed indexes and hashed shard keys (BSONElementHasher::hash64):
// md5 over the seed and a canonical walk of the value, of which the first 8 bytes, read as a
// little-endian int64, are the hash. Chunk ranges of hashed shard keys are ranges of these
// numbers, so they must match MongoDB's bit for bit.
export function hashValue(v: unknown, seed = 0): Long {
  // A number, what most hashed keys hold, in one call: a Hash object per value costs more than
  // its digest (resharding to a hashed key hashes every document's key twice).
  if (canonicalType(v) === 10) {
    const bytes = Buffer.allocUnsafe(16);
    bytes.writeInt32LE(seed, 0);
    bytes.writeInt32LE(10, 4);
    bytes.writeBigInt64LE(numberForHash(v), 8);
    return Long.fromBigInt(hash('md5', bytes, 'buffer').readBigInt64LE(0));
  }
  const md5 = createHash('md5');
  md5.update(int32(seed));
  hashElement(md5, v, undefined);
  return Long.fromBigInt(md5.digest().readBigInt64LE(0));
}

// Per element: its canonical type (as a 32-bit int), its field name when inside an object or
// array (NUL-terminated), then its value. Numbers of every width become the same int64, so equal
// numbers hash alike (and so do numbers with the same integer part).
function hashElement(md5: Hash, v: unknown, fieldName: string | undefined): void {
  md5.update(int32(canonicalType(v)));
  if (fieldName !== undefined) md5.update(cstring(fieldName));
  switch (canonicalType(v)) {
    case 10: return void md5.update(int64(numberForHash(v)));
    case 15: return void md5.update(bsonString(typeof v === 'string' ? v : String((v as { value: string }).value)));
    case 20: return hashFields(md5, Object.entries(objectOf(v)));
    case 25: return hashFields(md5, (v as unknown[]).map((item, i) => [String(i), item]));
    case 30: return void md5.update(binaryValue(v as Binary));
    case 35: return void md5.update((v as ObjectId).id);
    case 40: return void md5.update(Buffer.from([v ? 1 : 0]));
    case 45: return void md5.update(int64(dateMillis(v as Date)));
    case 47: return void md5.update(timestampValue(v as Timestamp));
    case 50: {
      const re = v as BSONRegExp;
      return void md5.update(Buffer.concat([cstring(re.pattern), cstring(re.options)]));
    }
    case 60: return void md5.update(bsonString(String((v as Code).code)));
    case 65: {
      // Code with scope: the code's bytes with their NUL (no length), then the scope's fields.
      const code = v as Code;
      md5.update(cstring(String(code.code)));
      return hashFields(md5, Object.entries(code.scope ?? {}));
    }
    default: return; // MinKey, MaxKey, null and undefined have no value bytes.
  }
}

// Sub-elements in order, then the end-of-object element: type 0 with no name and no value.
function hashFields(md5: Hash, fields: [string, unknown][]): void {
  for (const [name, value] of fields) {
    if (value !== undefined) hashElement(md5, value, name);
  }
  md5.update(int32(0));
}

// A date outside JS's range reads as an invalid Date; its true value is lost by then.
function dateMillis(d: Date): bigint {
  const ms = d.getTime();
  return Number.isNaN(ms) ? 0n : BigInt(ms);
}

function objectOf(v: unknown): Doc {
  if (bsonTag(v) === 'DBRef') return (v as { toJSON(): Doc }).toJSON();
  return v as Doc;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const TWO_63 = 2 ** 63;

// BSONElement::safeNumberLongForHash: NaN is 0, out-of-range values clamp, fractions truncate
// for doubles and round half to even for decimals; a double of exactly 2^63 keeps the old
// overflowed cast to -2^63.
function numberForHash(v: unknown): bigint {
  switch (bsonTag(v)) {
    case 'Long': return (v as Long).toBigInt();
    case 'Decimal128': return decimalForHash((v as Decimal128).toString());
    default: break;
  }
  const d = toDouble(v);
  if (Number.isNaN(d)) return 0n;
  if (d === TWO_63) return INT64_MIN;
  if (d > TWO_63) return INT64_MAX;
  if (d < -TWO_63) return INT64_MIN;
  return BigInt(Math.trunc(d));
}

function decimalForHash(text: string): bigint {
  if (text === 'NaN' || text === '-NaN') return 0n;
  if (text === 'Infinity') return INT64_MAX;
  if (text === '-Infinity') return INT64_MIN;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:E([+-]\d+))?$/i.exec(text);
  if (m === null) return 0n;
  const negative = m[1] === '-';
  const fraction = m[3] ?? '';
  const coefficient = BigInt(m[2]! + fraction);
  const exponent = Number(m[4] ?? '0') - fraction.length;
  let magnitude: bigint;
  if (exponent >= 0) {
    magnitude = coefficient * 10n ** BigInt(exponent);
  } else {
    const divisor = 10n ** BigInt(-exponent);
    magnitude = coefficient / divisor;
    const twiceRemainder = (coefficient % divisor) * 2n;
    if (twiceRemainder > divisor || (twiceRemainder === divisor && magnitude % 2n === 1n)) magnitude += 1n;
  }
  const value = negative ? -magnitude : magnitude;
  if (value > INT64_MAX) return INT64_MAX;
  if (value < INT64_MIN) return INT64_MIN;
  return value;
}

function int32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32LE(n, 0);
  return b;
}

function int64(n: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigInt64LE(n, 0);
  return b;
}

function cstring(s: string): Buffer {
  return Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
}

// A BSON string value: int32 byte length (with the NUL), the UTF-8 bytes, the NUL.
function bsonString(s: string): Buffer {
  const body = cstring(s);
  return Buffer.concat([int32(body.length), body]);
}

// A BSON binData value: int32 length, subtype, bytes. The old binary subtype 2 repeats the
// length inside, which the bson package strips on reading.
const BINARY_OLD = 2;
function binaryValue(bin: Binary): Buffer {
  let data = Buffer.from(bin.buffer.subarray(0, bin.position));
  if (bin.sub_type === BINARY_OLD) data = Buffer.concat([int32(data.length), data]);
  const header = Buffer.allocUnsafe(5);
  header.writeInt32LE(data.length, 0);
  header.writeUInt8(bin.sub_type, 4);
  return Buffer.concat([header, data]);
}

// A BSON timestamp value: increment then seconds, each a little-endian uint32.
function timestampValue(ts: Timestamp): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeUInt32LE(ts.low >>> 0, 0);
  b.writeUInt32LE(ts.high >>> 0, 4);
  return b;
}
