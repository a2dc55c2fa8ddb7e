import { BSON } from 'bson';

// Builds reply documents around BSON bytes already in hand (documents read from the store), so a
// find reply does not decode and re-encode every document. The `bson` package cannot embed raw
// bytes, hence this small writer; values it has no fast path for go through `bson`.
export class RawDocument {
  constructor(readonly bytes: Buffer) {}
}

const serializeOptions = { checkKeys: false, ignoreUndefined: true } as const;

class Writer {
  private chunks: Buffer[] = [];
  length = 0;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  done(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

function header(w: Writer, type: number, name: string): void {
  const nameBytes = Buffer.from(name, 'utf8');
  const b = Buffer.allocUnsafe(nameBytes.length + 2);
  b[0] = type;
  nameBytes.copy(b, 1);
  b[nameBytes.length + 1] = 0;
  w.push(b);
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
    && (value as { _bsontype?: string })._bsontype === undefined && !(value instanceof RawDocument);
}

function writeElement(w: Writer, name: string, value: unknown): void {
  if (value === undefined) return;
  if (value instanceof RawDocument) {
    header(w, 0x03, name);
    w.push(value.bytes);
  } else if (Array.isArray(value)) {
    header(w, 0x04, name);
    w.push(writeDocument(value.map((v, i) => [String(i), v] as const)));
  } else if (isPlain(value)) {
    header(w, 0x03, name);
    w.push(writeDocument(Object.entries(value)));
  } else if (typeof value === 'string') {
    header(w, 0x02, name);
    const s = Buffer.from(value, 'utf8');
    const b = Buffer.allocUnsafe(s.length + 5);
    b.writeInt32LE(s.length + 1, 0);
    s.copy(b, 4);
    b[s.length + 4] = 0;
    w.push(b);
  } else if (typeof value === 'number' && Number.isInteger(value) && value >= -2147483648 && value <= 2147483647 && !Object.is(value, -0)) {
    header(w, 0x10, name);
    const b = Buffer.allocUnsafe(4);
    b.writeInt32LE(value, 0);
    w.push(b);
  } else if (typeof value === 'boolean') {
    header(w, 0x08, name);
    w.push(Buffer.from([value ? 1 : 0]));
  } else if (value === null) {
    header(w, 0x0a, name);
  } else {
    const one = Buffer.from(BSON.serialize({ [name]: value }, serializeOptions));
    w.push(one.subarray(4, one.length - 1));
  }
}

function writeDocument(entries: Iterable<readonly [string, unknown]>): Buffer {
  const w = new Writer();
  w.push(Buffer.alloc(4));
  for (const [k, v] of entries) writeElement(w, k, v);
  w.push(Buffer.from([0]));
  const out = w.done();
  out.writeInt32LE(out.length, 0);
  return out;
}

// Serialises `doc`, where any RawDocument value (at any depth) is written verbatim.
export function serializeWithRaw(doc: Record<string, unknown>): Buffer {
  return writeDocument(Object.entries(doc));
}
