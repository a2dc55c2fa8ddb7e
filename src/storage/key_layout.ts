// How everything a node stores maps onto one ordered LMDB key space:
//   0x00 'c' <ns utf8>                         -> collection catalog entry (BSON)
//   0x00 'n'                                   -> next collection/index id (u32)
//   0x01 <collection id u32> <record id u64>   -> the document (BSON)
//   0x02 <index id u32> <key_string> <record id u64> -> empty         (non-unique index)
//   0x02 <index id u32> <key_string>                -> record id u64 (unique index)
// Record ids are big-endian so that key order is insertion order (natural order of a COLLSCAN).
const META = 0x00;
const RECORD = 0x01;
const INDEX = 0x02;

export const RECORD_ID_BYTES = 8;

export function catalogKey(ns: string): Buffer {
  return Buffer.concat([Buffer.from([META, 0x63]), Buffer.from(ns, 'utf8')]);
}

export const catalogRangeStart = Buffer.from([META, 0x63]);
export const catalogRangeEnd = Buffer.from([META, 0x64]);
export const nextIdKey = Buffer.from([META, 0x6e]);

function prefixed(kind: number, id: number): Buffer {
  const b = Buffer.allocUnsafe(5);
  b[0] = kind;
  b.writeUInt32BE(id, 1);
  return b;
}

export function recordPrefix(collectionId: number): Buffer {
  return prefixed(RECORD, collectionId);
}

export function recordKey(collectionId: number, recordId: number): Buffer {
  const b = Buffer.allocUnsafe(13);
  b[0] = RECORD;
  b.writeUInt32BE(collectionId, 1);
  writeRecordId(b, 5, recordId);
  return b;
}

// Record ids stay below 2^53, so two 32-bit halves carry them without a BigInt per write.
export function writeRecordId(b: Buffer, offset: number, recordId: number): void {
  b.writeUInt32BE(Math.floor(recordId / 0x100000000), offset);
  b.writeUInt32BE(recordId >>> 0, offset + 4);
}

export function readRecordId(b: Buffer, offset: number): number {
  return b.readUInt32BE(offset) * 0x100000000 + b.readUInt32BE(offset + 4);
}

export function recordIdOf(key: Buffer): number {
  return readRecordId(key, key.length - RECORD_ID_BYTES);
}

export function indexPrefix(indexId: number): Buffer {
  return prefixed(INDEX, indexId);
}

export function indexEntryKey(indexId: number, keyString: Buffer, recordId: number): Buffer {
  const b = Buffer.allocUnsafe(5 + keyString.length + RECORD_ID_BYTES);
  b[0] = INDEX;
  b.writeUInt32BE(indexId, 1);
  keyString.copy(b, 5);
  writeRecordId(b, 5 + keyString.length, recordId);
  return b;
}

// The smallest byte string greater than every string that starts with `prefix`.
export function prefixSuccessor(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]! += 1;
      return out.subarray(0, i + 1);
    }
  }
  return Buffer.concat([out, Buffer.from([0xff])]);
}
