import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';
import type { ShardKeyPattern } from '../catalog/shard_key_pattern.js';

// What the config-server decisions need of shard keys beyond src/catalog/shard_key_pattern.ts.

// ShardKeyPattern::normalizeShardKey: the key's fields in the key's order.
export function normalizeShardKey(key: ShardKeyPattern, doc: Doc): Doc {
  return Object.fromEntries(key.fields.map((f) => [f, doc[f]]));
}

// checkShardKeyIsValidForMetadataStorage: chunk bounds may hold neither arrays nor regexes, and
// embedded objects must be storable (no '$'-prefixed field names).
export function isStorableShardKey(doc: Doc): boolean {
  return Object.values(doc).every((v) => v !== undefined && !Array.isArray(v) && bsonTag(v) !== 'BSONRegExp' && (!isPlainObject(v) || isStorableObject(v)));
}

function isStorableObject(doc: Doc): boolean {
  return Object.entries(doc).every(([k, v]) => !k.startsWith('$') && (!isPlainObject(v) || isStorableObject(v)));
}
