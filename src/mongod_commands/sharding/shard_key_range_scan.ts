import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';

export interface ScannedRecord {
  readonly bytes: number;
  // The record's shard key, decoded only when asked for.
  key(): Doc;
}

// The documents of [min, max) in shard-key order, through the index on the key pattern, as the
// size-based commands (dataSize, autoSplitVector, balancing statistics) read them.
export function* scanShardKeyRange(storage: StorageEngine, coll: Collection, keyPattern: Doc, min: Doc, max: Doc): Iterable<ScannedRecord> {
  const index = coll.indexes.find((i) => i.collation === undefined && compareValues(i.keyPattern, keyPattern) === 0);
  if (!index) throw new MongoError(ErrorCodes.IndexNotFound, `couldn't find index over splitting key ${JSON.stringify(keyPattern)}`);
  const pattern = new ShardKeyPattern(keyPattern);
  for (const out of prepareFind(storage, coll, { filter: {}, hint: index.name, min, max, includeHidden: true }).results) {
    yield { bytes: out.bytes?.length ?? 0, key: () => pattern.extractShardKeyFromDoc(out.doc) };
  }
}

// A range's bounds from a key pattern when a command gives none: the whole key space.
export function wholeRange(keyPattern: Doc): { min: Doc; max: Doc } {
  const pattern = new ShardKeyPattern(keyPattern);
  return { min: pattern.globalMin(), max: pattern.globalMax() };
}
