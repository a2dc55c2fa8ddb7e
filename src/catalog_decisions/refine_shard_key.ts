import { MaxKey, MinKey } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { valuesEqual } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { bsonTag, type Doc } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { decideShardKeyIndex } from './shard_key_index.js';

// refineCollectionShardKey (4.4+): a sharded collection's key gains suffix fields; its chunks and
// zones keep their ranges, each bound padded for the new fields.

// ShardKeyPattern::isExtendedBy: the new key repeats the current one's fields, in order and with
// the same kind (ascending or hashed), then adds at least none.
function isExtendedBy(current: ShardKeyPattern, proposed: ShardKeyPattern): boolean {
  if (proposed.fields.length < current.fields.length) return false;
  return current.fields.every((f, i) => proposed.fields[i] === f && current.isHashedField(f) === proposed.isHashedField(f));
}

// A key that is already the new one needs nothing (MongoDB answers RequestAlreadyFulfilled, which
// the command turns into ok).
export function isAlreadyRefined(currentKey: Doc, newKey: Doc): boolean {
  return valuesEqual(currentKey, newKey);
}

// The checks of the coordinator's precondition phase, against one shard's indexes.
export function checkRefineShardKey(req: { ns: string; currentKey: Doc; newKey: Doc; unique: boolean; indexes: readonly Doc[] }): void {
  const current = new ShardKeyPattern(req.currentKey);
  const proposed = new ShardKeyPattern(req.newKey);
  if (!isExtendedBy(current, proposed)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `refineCollectionShardKey shard key ${formatValue(req.newKey)} does not extend the current shard key ${formatValue(req.currentKey)}`);
  }
  // The collection holds documents (or may): only an existing index will do.
  decideShardKeyIndex({ ns: req.ns, key: proposed, unique: req.unique, collectionIsEmpty: false, existingIndexes: req.indexes });
}

// A chunk or zone bound under the new key: the fields it lacks are MinKey, or MaxKey after a
// MaxKey (the global maximum, and any bound that ends there), so that every range covers the same
// documents as before and neighbouring ranges still meet.
export function extendBound(bound: Doc, newKey: Doc): Doc {
  const values = Object.values(bound);
  const fill = values.length > 0 && bsonTag(values[values.length - 1]) === 'MaxKey' ? new MaxKey() : new MinKey();
  const extended: Doc = {};
  for (const field of Object.keys(newKey)) extended[field] = field in bound ? bound[field] : fill;
  return extended;
}
