import type { Doc } from '../bson/values.js';
import { valueAtPath, type ShardKeyPattern } from './shard_key_pattern.js';

// MongoDB's documentKey of a document in a sharded collection: its shard key fields as they are in
// the document (a hashed field's value, not its hash; null when missing), then _id unless the key
// holds it. Undefined for a collection that is not sharded (`pattern` undefined): `{_id}` is its key.
export function documentKeyOf(pattern: ShardKeyPattern | undefined, doc: Doc): Doc | undefined {
  if (pattern === undefined) return undefined;
  const key: Doc = {};
  for (const field of pattern.fields) key[field] = valueAtPath(doc, field) ?? null;
  if (!('_id' in key)) key._id = doc._id;
  return key;
}
