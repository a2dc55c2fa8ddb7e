// How everything a node stores maps onto LMDB databases ("spaces", see lmdb/kv_store.ts):
//   main space:
//     0x00 'c' <ns utf8>         -> collection catalog entry (BSON)
//     0x00 'n'                   -> next collection/index id (u32)
//     0x00 's' <collection id>   -> document count and data size
//     0x00 't'                   -> the latest second a commit timestamp was taken in (u32)
//   'r<collection id>': <record id u64>               -> the document (BSON)
//   'i<index id>':      <key_string> <record id u64>  -> empty         (non-unique index)
//                       <key_string>                  -> record id u64 (unique index)
// A space per collection and per index keeps keys short, lets ever-increasing keys (record ids,
// most `_id`s) be appended, and makes dropping one a single operation. Record ids are big-endian
// so that key order is insertion order (natural order of a COLLSCAN).
const META = 0x00;

export const RECORD_ID_BYTES = 8;

export function catalogKey(ns: string): Buffer {
  return Buffer.concat([Buffer.from([META, 0x63]), Buffer.from(ns, 'utf8')]);
}

export const catalogRangeStart = Buffer.from([META, 0x63]);
export const catalogRangeEnd = Buffer.from([META, 0x64]);
export const nextIdKey = Buffer.from([META, 0x6e]);
export const clockSecondsKey = Buffer.from([META, 0x74]);

export function recordSpace(collectionId: number): string {
  return `r${collectionId}`;
}

export function isRecordSpace(name: string): boolean {
  return name.startsWith('r');
}

export function indexSpace(indexId: number): string {
  return `i${indexId}`;
}

export function recordKey(recordId: number): Buffer {
  const b = Buffer.allocUnsafe(RECORD_ID_BYTES);
  writeRecordId(b, 0, recordId);
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

export function indexEntryKey(keyString: Buffer, recordId: number): Buffer {
  const b = Buffer.allocUnsafe(keyString.length + RECORD_ID_BYTES);
  keyString.copy(b, 0);
  writeRecordId(b, keyString.length, recordId);
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
