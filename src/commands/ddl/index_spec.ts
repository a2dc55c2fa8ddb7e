import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import type { Collection } from '../../storage/storage_engine.js';

const ALLOWED_OPTIONS = new Set(['key', 'name', 'unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'background', 'v', 'collation', 'hidden', 'ns', 'weights', 'default_language', 'language_override', 'textIndexVersion', '2dsphereIndexVersion', 'bits', 'min', 'max', 'wildcardProjection', 'storageEngine', 'prepareUnique']);
const UNSUPPORTED_PLUGINS = new Set(['text', '2d', '2dsphere', 'geoHaystack']);

// A createIndexes spec checked and normalised to what listIndexes shows: {v: 2, key, name, ...}.
export function validateIndexSpec(raw: unknown): Doc {
  if (!isPlainObject(raw)) throw new MongoError(ErrorCodes.TypeMismatch, 'The index specification must be an object');
  const key = raw.key;
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw new MongoError(ErrorCodes.CannotCreateIndex, "Index keys cannot be an empty field");
  }
  let hashed = 0;
  for (const [field, dir] of Object.entries(key)) {
    if (field === '' || field.startsWith('$') && field !== '$**') throw new MongoError(ErrorCodes.CannotCreateIndex, `Index key contains an illegal field name: field name starts with '$'.`);
    if (typeof dir === 'string') {
      if (dir === 'hashed') { hashed += 1; continue; }
      if (UNSUPPORTED_PLUGINS.has(dir)) throw new MongoError(ErrorCodes.CannotCreateIndex, `Index type '${dir}' is not supported by docshard`);
      throw new MongoError(ErrorCodes.CannotCreateIndex, `Unknown index plugin '${dir}'`);
    }
    if (!isNumber(dir) || toDouble(dir) === 0 || Number.isNaN(toDouble(dir))) {
      throw new MongoError(ErrorCodes.CannotCreateIndex, `Values in the index key pattern can only be numbers > 0, numbers < 0, or strings. Found: ${String(dir)}`);
    }
  }
  if (hashed > 1) throw new MongoError(31303, 'A maximum of one index field is allowed to be hashed but found 2');
  if (typeof raw.name !== 'string' || raw.name.length === 0) {
    throw new MongoError(ErrorCodes.FailedToParse, "The 'name' field is a required property of an index specification");
  }
  for (const option of Object.keys(raw)) {
    if (!ALLOWED_OPTIONS.has(option)) throw new MongoError(ErrorCodes.InvalidIndexSpecificationOption, `The field '${option}' is not valid for an index specification. Specification: ${JSON.stringify(raw)}`);
  }
  if (raw.partialFilterExpression !== undefined && !isPlainObject(raw.partialFilterExpression)) {
    throw new MongoError(ErrorCodes.TypeMismatch, 'partialFilterExpression must be an object');
  }
  if (raw.unique === true && hashed > 0) throw new MongoError(ErrorCodes.CannotCreateIndex, 'Currently hashed indexes cannot guarantee uniqueness. Use a regular index.');
  const normalized: Doc = { v: 2, key: normalizeKey(key) };
  for (const [k, v] of Object.entries(raw)) if (k !== 'v' && k !== 'key' && k !== 'ns' && k !== 'background') normalized[k] = v;
  return normalized;
}

function normalizeKey(key: Doc): Doc {
  const out: Doc = {};
  for (const [field, dir] of Object.entries(key)) out[field] = typeof dir === 'string' ? dir : toDouble(dir) < 0 ? -1 : 1;
  return out;
}

// Decides whether `spec` is new, already there (a no-op), or conflicts with an existing index.
export function checkAgainstExisting(coll: Collection, spec: Doc): 'new' | 'exists' {
  for (const index of coll.indexes) {
    const sameName = index.name === spec.name;
    const sameKey = compareValues(index.keyPattern, spec.key) === 0;
    if (sameName && sameKey) {
      if (optionsEqual(index.entry.spec, spec)) return 'exists';
      throw new MongoError(ErrorCodes.IndexOptionsConflict, `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(index.entry.spec)}`);
    }
    if (sameName) {
      throw new MongoError(ErrorCodes.IndexKeySpecsConflict, `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(index.entry.spec)}`);
    }
    if (sameKey && optionsEqual(index.entry.spec, spec)) {
      throw new MongoError(ErrorCodes.IndexOptionsConflict, `Index already exists with a different name: ${index.name}`);
    }
  }
  return 'new';
}

function optionsEqual(a: Doc, b: Doc): boolean {
  const pick = (s: Doc): Doc => ({ unique: s.unique === true, sparse: s.sparse === true, partial: s.partialFilterExpression ?? null });
  return compareValues(pick(a), pick(b)) === 0;
}
