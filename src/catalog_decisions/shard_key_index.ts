import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ShardKeyPattern } from '../catalog/shard_key_pattern.js';

export interface ShardKeyIndexRequest {
  readonly ns: string;
  readonly key: ShardKeyPattern;
  readonly unique: boolean;
  readonly collectionIsEmpty: boolean;
  // listIndexes output of the collection on the primary shard.
  readonly existingIndexes: readonly Doc[];
}

// shardkeyutil::validateShardKeyIndexExistsOrCreateIfPossible (7.0). Returns the index spec to
// create, or undefined when a usable index already exists. Whether that index is multikey is
// decided by the shard's checkShardingIndex, which the driver runs; no catalog data tells it.
export function decideShardKeyIndex(req: ShardKeyIndexRequest): Doc | undefined {
  const { ns, key, existingIndexes } = req;
  const pattern = key.keyPattern;

  // 1. Every unique index must be enforceable per shard: its fields must start with the shard key.
  for (const idx of existingIndexes) {
    const idxKey = indexKey(idx);
    if (idx.unique === true && !isUniqueIndexCompatible(key, idxKey)) {
      throw new MongoError(ErrorCodes.InvalidOptions, `can't shard collection '${ns}' with unique index on ${formatValue(idxKey)} and proposed shard key ${formatValue(pattern)}. Uniqueness can't be maintained unless shard key is a prefix`);
    }
  }

  // 2. A useful index is a plain (not sparse, partial or collated) index prefixed by the key.
  let useful = false;
  let reasons = '';
  for (const idx of existingIndexes) {
    const why = unusableReasons(idx);
    if (why === '' && key.isShardKeyPrefixOf(indexKey(idx))) {
      // Only the default hash seed produces the hashes chunk ranges are made of.
      if (key.hashedField !== undefined && idx.seed !== undefined && toDouble(idx.seed) !== 0) {
        throw new MongoError(ErrorCodes.InvalidOptions, `can't shard collection ${ns} with hashed shard key ${formatValue(pattern)} because the hashed index uses a non-default seed of ${toDouble(idx.seed)}`);
      }
      useful = true;
    }
    // MongoDB reports the reasons of the last unusable index only.
    if (why !== '') reasons = ` Index ${String(idx.name)} cannot be used for sharding because [${why} ]`;
  }

  // 3. A unique shard key needs an index on exactly the key that is itself unique (or _id).
  if (useful && req.unique) {
    const exact = existingIndexes.find((idx) => compareValues(indexKey(idx), pattern) === 0);
    if (exact === undefined) {
      useful = false;
    } else if (exact.unique !== true && Object.keys(indexKey(exact))[0] !== '_id') {
      throw new MongoError(ErrorCodes.InvalidOptions, `can't shard collection ${ns}, ${formatValue(pattern)} index not unique, and unique index explicitly specified`);
    }
  }
  if (useful) return undefined;

  // 4. Without one, only an empty collection may have it built for it.
  if (!req.collectionIsEmpty) {
    throw new MongoError(ErrorCodes.InvalidOptions, `Please create an index that starts with the proposed shard key before sharding the collection. ${reasons}`);
  }
  // Every collection gets the _id index when it is created, so a collection that does not exist
  // yet needs nothing more for {_id: 1}.
  if (isIdIndexPattern(pattern)) return undefined;
  return shardKeyIndexSpec(pattern, req.unique);
}

function indexKey(idx: Doc): Doc {
  return isPlainObject(idx.key) ? idx.key : {};
}

function unusableReasons(idx: Doc): string {
  let why = '';
  if (idx.sparse === true) why += ' Index key is sparse.';
  if (idx.partialFilterExpression !== undefined) why += ' Index key is partial.';
  if (idx.collation !== undefined) why += ' Index has a non-simple collation.';
  return why;
}

// ShardKeyPattern::isUniqueIndexCompatible: an _id index always is; otherwise the shard key's
// field names must lead the index's.
function isUniqueIndexCompatible(key: ShardKeyPattern, idxKey: Doc): boolean {
  const names = Object.keys(idxKey);
  if (names[0] === '_id') return true;
  return key.fields.every((f, i) => names[i] === f);
}

// makeIndexSpec: {key, name, unique?} with the shell's naming ("a_1_b_hashed"); unique is never
// set on the _id index.
export function shardKeyIndexSpec(pattern: Doc, unique: boolean): Doc {
  const name = Object.entries(pattern).map(([f, v]) => `${f}_${isNumber(v) ? Math.trunc(toDouble(v)) : String(v)}`).join('_');
  const spec: Doc = { key: pattern, name };
  if (unique && !isIdIndexPattern(pattern)) spec.unique = true;
  return spec;
}

function isIdIndexPattern(pattern: Doc): boolean {
  const names = Object.keys(pattern);
  return names.length === 1 && names[0] === '_id' && isNumber(pattern._id) && toDouble(pattern._id) === 1;
}
