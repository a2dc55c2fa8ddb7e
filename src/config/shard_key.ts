import { MaxKey, MinKey, bsonTag, isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { formatValue } from '../bson/format.js';
import { hashValue } from '../bson/hash.js';
import { getPath } from '../query/path.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// The shard key as the config-server decisions need it (MongoDB's ShardKeyPattern). Kept local to
// src/config/ because src/catalog/shard_key_pattern.ts was not written yet when these were.
export interface ShardKey {
  readonly pattern: Doc;
  readonly fields: readonly string[];
  readonly hashedField: string | undefined;
}

const HASHED = 'hashed';

// parseShardKeyPattern (shard_key_pattern.cpp, 7.0): non-empty, every path well formed, every
// value 1 or "hashed", at most one hashed field. Errors are BadValue with MongoDB's messages.
export function parseShardKey(pattern: Doc): ShardKey {
  const fields = Object.keys(pattern).filter((f) => pattern[f] !== undefined);
  if (fields.length === 0) throw new MongoError(ErrorCodes.BadValue, 'Shard key is empty');
  let hashedField: string | undefined;
  for (const field of fields) {
    checkPath(field);
    const value = pattern[field];
    if (value === HASHED) {
      if (hashedField !== undefined) {
        throw new MongoError(ErrorCodes.BadValue, `Shard key ${formatValue(pattern)} can contain at most one 'hashed' field, and/or multiple numerical fields set to a value of 1. Failed to parse field ${field}`);
      }
      hashedField = field;
    } else if (!isNumber(value) || Math.trunc(toDouble(value)) !== 1) {
      // safeNumberInt truncates, so MongoDB accepts 1.5 here; so do we.
      throw new MongoError(ErrorCodes.BadValue, `Shard key ${formatValue(pattern)} can contain at most one 'hashed' field, and/or multiple numerical fields set to a value of 1. Failed to parse field ${field}`);
    }
  }
  return { pattern, fields, hashedField };
}

function checkPath(field: string): void {
  if (field === '') throw new MongoError(ErrorCodes.BadValue, `Field ${field} is empty`);
  const parts = field.split('.');
  parts.forEach((part, i) => {
    if (part === '') throw new MongoError(ErrorCodes.BadValue, `Field ${field} contains empty parts`);
    // A DBRef's own fields are the one place a '$' part is allowed.
    if (part.startsWith('$') && !(i !== 0 && (part === '$db' || part === '$id' || part === '$ref'))) {
      throw new MongoError(ErrorCodes.BadValue, `Field ${field} contains parts that start with '$'`);
    }
  });
}

export function hasHashedPrefix(key: ShardKey): boolean {
  return key.hashedField !== undefined && key.hashedField === key.fields[0];
}

export function globalMin(key: ShardKey): Doc {
  return Object.fromEntries(key.fields.map((f) => [f, new MinKey()]));
}

export function globalMax(key: ShardKey): Doc {
  return Object.fromEntries(key.fields.map((f) => [f, new MaxKey()]));
}

// ShardKeyPattern::isShardKey: exactly the key's fields, none of them missing or an array.
export function isShardKeyShaped(key: ShardKey, doc: Doc): boolean {
  const names = Object.keys(doc).filter((f) => doc[f] !== undefined);
  if (names.length !== key.fields.length) return false;
  return key.fields.every((f) => doc[f] !== undefined && !Array.isArray(doc[f]));
}

// ShardKeyPattern::normalizeShardKey: the key's fields in the key's order.
export function normalizeShardKey(key: ShardKey, doc: Doc): Doc {
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

// The shard key of a query of plain equalities ({a: 5} or {'a.b': 5}), hashing the hashed field;
// undefined when some field has no exact value (extractShardKeyFromBasicQuery's empty result).
export function shardKeyFromEqualityQuery(key: ShardKey, query: Doc): Doc | undefined {
  const out: Doc = {};
  for (const field of key.fields) {
    const value = field in query ? query[field] : getPath(query, field);
    if (value === undefined || Array.isArray(value) || isOperatorObject(value)) return undefined;
    out[field] = field === key.hashedField ? hashValue(value) : value;
  }
  return out;
}

function isOperatorObject(v: unknown): boolean {
  return isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$'));
}
