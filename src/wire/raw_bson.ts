import { BSON } from 'bson';

// Builds reply documents around BSON bytes already in hand (documents read from the store),
// so a find reply does not decode and re-encode every document. The `bson` package has no way to
// embed raw bytes, hence this small writer.
export class RawDocument {
  constructor(readonly bytes: Buffer) {}
}

export type ReplyValue = unknown;

const TYPE_DOCUMENT = 0x03;
const TYPE_ARRAY = 0x04;

function cstring(name: string): Buffer {
  return Buffer.from(name + '\0', 'utf8');
}

function wrap(parts: Buffer[]): Buffer {
  const size = 4 + parts.reduce((n, p) => n + p.length, 0) + 1;
  const head = Buffer.allocUnsafe(4);
  head.writeInt32LE(size, 0);
  return Buffer.concat([head, ...parts, Buffer.from([0])], size);
}

// Serialises `doc`, where any RawDocument value (or array of them) is written verbatim.
export function serializeWithRaw(doc: Record<string, unknown>): Buffer {
  const parts: Buffer[] = [];
  for (const [key, value] of Object.entries(doc)) {
    if (value === undefined) continue;
    if (value instanceof RawDocument) {
      parts.push(Buffer.from([TYPE_DOCUMENT]), cstring(key), value.bytes);
    } else if (Array.isArray(value) && value.some((v) => v instanceof RawDocument)) {
      parts.push(Buffer.from([TYPE_ARRAY]), cstring(key), encodeArray(value));
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { _bsontype?: string })._bsontype === undefined && !(value instanceof Date) && containsRaw(value as Record<string, unknown>)) {
      parts.push(Buffer.from([TYPE_DOCUMENT]), cstring(key), serializeWithRaw(value as Record<string, unknown>));
    } else {
      const one = Buffer.from(BSON.serialize({ [key]: value }, { checkKeys: false, ignoreUndefined: true }));
      parts.push(one.subarray(4, one.length - 1));
    }
  }
  return wrap(parts);
}

function containsRaw(doc: Record<string, unknown>): boolean {
  for (const value of Object.values(doc)) {
    if (value instanceof RawDocument) return true;
    if (Array.isArray(value) && value.some((v) => v instanceof RawDocument)) return true;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { _bsontype?: string })._bsontype === undefined && !(value instanceof Date) && containsRaw(value as Record<string, unknown>)) return true;
  }
  return false;
}

function encodeArray(values: unknown[]): Buffer {
  const parts: Buffer[] = [];
  values.forEach((v, i) => {
    if (v instanceof RawDocument) {
      parts.push(Buffer.from([TYPE_DOCUMENT]), cstring(String(i)), v.bytes);
    } else {
      const one = Buffer.from(BSON.serialize({ [String(i)]: v }, { checkKeys: false, ignoreUndefined: true }));
      parts.push(one.subarray(4, one.length - 1));
    }
  });
  return wrap(parts);
}
