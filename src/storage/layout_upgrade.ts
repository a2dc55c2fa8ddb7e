import type { KvStore } from './lmdb/kv_store.js';
import { indexSpace, recordSpace } from './key_layout.js';

// Data directories written before the space-per-collection layout (key_layout.ts) kept records and
// index entries in the main space, behind a kind byte and a 4-byte id:
//   0x01 <collection id u32> <record id u64>          -> the document
//   0x02 <index id u32> <key_string> [<record id u64>] -> empty or record id
// Opening one moves them, unchanged, into their spaces, in one write unit (all or nothing), and
// marks the directory with the layout version, so nothing written by an older node is lost.
const OLD_RECORD = 0x01;
const OLD_INDEX = 0x02;
const FIRST_OLD_KEY = Buffer.from([OLD_RECORD]);
const PAST_OLD_KEYS = Buffer.from([OLD_INDEX + 1]);
export const layoutVersionKey = Buffer.from([0x00, 0x76]);
const LAYOUT_VERSION = Buffer.from([2]);

// Returns how many entries were moved.
export function upgradeLayout(kv: KvStore): number {
  if (kv.get(layoutVersionKey) !== undefined) return 0;
  return kv.writeSync((w) => {
    let moved = 0;
    for (const { key, value } of [...w.range(FIRST_OLD_KEY, PAST_OLD_KEYS)]) {
      const id = key.readUInt32BE(1);
      const space = key[0] === OLD_RECORD ? recordSpace(id) : indexSpace(id);
      w.space(space).put(key.subarray(5), value);
      w.remove(key);
      moved += 1;
    }
    w.put(layoutVersionKey, LAYOUT_VERSION);
    return moved;
  });
}
