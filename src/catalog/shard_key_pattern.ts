import { MaxKey, MinKey } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { valuesEqual } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { hashValue } from '../bson/hash.js';
import { encodeKey, type Ordering } from '../bson/key_string.js';
import { bsonTag, isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// MongoDB's ShardKeyPattern (shard_key_pattern.cpp): ascending fields, at most one of them
// 'hashed'. Shard keys are flat documents keyed by the pattern's dotted paths ({'a.b': 5}), with
// the hashed field's value replaced by its hash, which is what chunk bounds are made of.
export class ShardKeyPattern {
  readonly keyPattern: Doc;
  readonly fields: readonly string[];
  readonly hashedField: string | undefined;
  readonly ordering: Ordering;

  constructor(keyPattern: Doc) {
    const fields = Object.keys(keyPattern);
    if (fields.length === 0) throw new MongoError(ErrorCodes.BadValue, 'Shard key is empty');
    let hashedField: string | undefined;
    for (const field of fields) {
      if (field === '') throw new MongoError(ErrorCodes.BadValue, `Field ${field} is empty`);
      if (field.split('.').some((part) => part === '')) {
        throw new MongoError(ErrorCodes.BadValue, `Field ${field} contains empty parts`);
      }
      const value = keyPattern[field];
      const hashed = value === 'hashed';
      // MongoDB accepts any number whose integer part is 1 (safeNumberInt), so 1.0 and Long(1) too.
      const ascending = isNumber(value) && Math.trunc(toDouble(value)) === 1;
      if (!(ascending || (hashed && hashedField === undefined))) {
        throw new MongoError(
          ErrorCodes.BadValue,
          `Shard key ${formatValue(keyPattern)} can contain at most one 'hashed' field, and/or multiple numerical fields set to a value of 1. Failed to parse field ${field}`,
        );
      }
      if (hashed) hashedField = field;
    }
    this.keyPattern = keyPattern;
    this.fields = fields;
    this.hashedField = hashedField;
    this.ordering = fields.map(() => 1 as const);
  }

  get isHashed(): boolean {
    return this.hashedField !== undefined;
  }

  // {a: 'hashed', ...}: chunk ranges of the first field are ranges of hashes, which is what lets
  // shardCollection pre-split such a collection evenly.
  hasHashedPrefix(): boolean {
    return this.hashedField === this.fields[0];
  }

  toString(): string {
    return formatValue(this.keyPattern);
  }

  // The shard key under which a document is stored (MongoDB 4.4+: a missing field counts as
  // null, so documents without the key still have one owner). Arrays cannot be placed in one chunk.
  extractShardKeyFromDoc(doc: Doc): Doc {
    const key: Doc = {};
    for (const field of this.fields) {
      const value = valueAtPath(doc, field);
      if (Array.isArray(value)) {
        throw new MongoError(ErrorCodes.ShardKeyNotFound, 'Shard key cannot contain array values or array descendants.');
      }
      key[field] = this.storedValue(field, value === undefined ? null : value);
    }
    return key;
  }

  // The full shard key when the filter pins every shard key field by equality; undefined
  // otherwise (pathsupport::extractFullEqualityMatches + ShardKeyPattern::extractShardKeyFromQuery).
  extractShardKeyFromQuery(filter: Doc): Doc | undefined {
    const equalities = new Map<string, unknown>();
    if (!this.collectEqualities(filter, equalities)) return undefined;
    const key: Doc = {};
    for (const field of this.fields) {
      const value = equalityFor(equalities, field);
      if (!isValidShardKeyValueForStorage(value)) return undefined;
      key[field] = this.storedValue(field, value);
    }
    return key;
  }

  // Byte string ordered as the shard keys are: the key of binary search over chunk bounds.
  keyString(shardKey: Doc): Buffer {
    return encodeKey(this.fields.map((f) => shardKey[f]), this.ordering);
  }

  globalMin(): Doc {
    return Object.fromEntries(this.fields.map((f) => [f, new MinKey()]));
  }

  globalMax(): Doc {
    return Object.fromEntries(this.fields.map((f) => [f, new MaxKey()]));
  }

  // Does a document with this exact set of fields qualify as a shard key (chunk bounds, split points)?
  isShardKey(key: Doc): boolean {
    const names = Object.keys(key);
    return names.length === this.fields.length && this.fields.every((f) => key[f] !== undefined && !Array.isArray(key[f]));
  }

  // shardCollection needs an index whose key pattern starts with the shard key, field for field
  // and value for value ('hashed' only served by 'hashed').
  isShardKeyPrefixOf(indexKey: Doc): boolean {
    const indexFields = Object.keys(indexKey);
    if (indexFields.length < this.fields.length) return false;
    return this.fields.every((field, i) => {
      if (indexFields[i] !== field) return false;
      const want = this.keyPattern[field];
      const have = indexKey[field];
      return want === 'hashed' ? have === 'hashed' : isNumber(have) && valuesEqual(want, have);
    });
  }

  isHashedField(field: string): boolean {
    return field === this.hashedField;
  }

  private storedValue(field: string, value: unknown): unknown {
    return field === this.hashedField ? hashValue(value) : value;
  }

  // Equalities of the top-level conjunction on paths related to the shard key. False when two of
  // them touch the same path or one is a prefix of the other: MongoDB then infers no key.
  private collectEqualities(filter: Doc, into: Map<string, unknown>): boolean {
    for (const [path, condition] of Object.entries(filter)) {
      if (path === '$and') {
        if (!Array.isArray(condition)) continue;
        for (const clause of condition) {
          if (isPlainObject(clause) && !this.collectEqualities(clause, into)) return false;
        }
        continue;
      }
      if (path.startsWith('$')) continue;
      const value = equalityValue(condition);
      if (value === NO_EQUALITY) continue;
      if (!this.fields.some((f) => pathsConflict(f, path))) continue;
      for (const other of into.keys()) {
        if (pathsConflict(other, path)) return false;
      }
      into.set(path, value);
    }
    return true;
  }
}

const NO_EQUALITY = Symbol('no equality');

// The value of an equality predicate: a plain value, {$eq: v}, or a one-element $in (which
// MongoDB's canonicalizer rewrites to $eq). A bare regex is a pattern match, not an equality.
function equalityValue(condition: unknown): unknown {
  if (bsonTag(condition) === 'BSONRegExp') return NO_EQUALITY;
  if (!isPlainObject(condition)) return condition;
  const ops = Object.keys(condition);
  if (ops.length === 0 || !ops[0]!.startsWith('$')) return condition;
  if ('$eq' in condition) return condition.$eq;
  const inList = condition.$in;
  if (Array.isArray(inList) && inList.length === 1 && bsonTag(inList[0]) !== 'BSONRegExp') return inList[0];
  return NO_EQUALITY;
}

function pathsConflict(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

// The equality on the path itself, or on a parent whose value is an object holding the path
// ({a: {b: 1}} pins 'a.b'). Undefined when nothing pins it.
function equalityFor(equalities: Map<string, unknown>, path: string): unknown {
  if (equalities.has(path)) return equalities.get(path);
  const parts = path.split('.');
  for (let n = parts.length - 1; n > 0; n--) {
    const parent = parts.slice(0, n).join('.');
    if (!equalities.has(parent)) continue;
    const value = equalities.get(parent);
    return isPlainObject(value) ? valueAtPath(value, parts.slice(n).join('.')) : undefined;
  }
  return undefined;
}

// getFieldDottedOrArray: follow the path through embedded documents, stopping at the first array
// (returned, so that the caller can reject it) or at a scalar before the end (missing).
export function valueAtPath(doc: Doc, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split('.')) {
    if (Array.isArray(current)) return current;
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

// Values a query may pin a shard key to: present, not an array, not a regex, and no
// $-prefixed field names inside an embedded document.
function isValidShardKeyValueForStorage(v: unknown): boolean {
  if (v === undefined || Array.isArray(v) || bsonTag(v) === 'BSONRegExp') return false;
  return !isPlainObject(v) || isStorageValidObject(v);
}

function isStorageValidObject(doc: Doc): boolean {
  return Object.entries(doc).every(([k, v]) => !k.startsWith('$') && (!isPlainObject(v) || isStorageValidObject(v)));
}
