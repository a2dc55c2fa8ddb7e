import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName, compareValues } from '../../bson/compare.js';
import { fullCollationSpec, indexableCollation, parseCollation } from '../../bson/collation.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import type { Collection } from '../../storage/storage_engine.js';
import { ttlSpecProblem } from '../../ttl/ttl_index.js';
import { parseFilter } from '../../query/match/expression_parser.js';
import { checkPartialFilterExpression } from './partial_filter.js';
import { isGeoKeyPattern, normalizeGeoIndexSpec } from '../../storage/geo/geo_index_spec.js';
import { asksForText, isTextKeyPattern, normalizeTextIndexSpec } from '../../storage/fts/text_index_spec.js';

const ALLOWED_OPTIONS = new Set(['key', 'name', 'unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'background', 'v', 'collation', 'hidden', 'ns', 'weights', 'default_language', 'language_override', 'textIndexVersion', '2dsphereIndexVersion', 'bits', 'min', 'max', 'wildcardProjection', 'storageEngine', 'prepareUnique']);
const UNSUPPORTED_PLUGINS = new Set(['geoHaystack']);
const GEO_PLUGINS = new Set(['2d', '2dsphere']);

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
      if (dir === 'text' || GEO_PLUGINS.has(dir)) continue;
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
  if (raw.partialFilterExpression !== undefined) checkPartialFilter(raw, raw.partialFilterExpression as Doc);
  if (raw.unique === true && hashed > 0) throw new MongoError(ErrorCodes.CannotCreateIndex, 'Currently hashed indexes cannot guarantee uniqueness. Use a regular index.');
  if (raw.hidden !== undefined && typeof raw.hidden !== 'boolean') {
    throw new MongoError(ErrorCodes.TypeMismatch, `The field 'hidden' must be a bool, but got ${bsonTypeName(raw.hidden)}`);
  }
  const normalized: Doc = { v: 2, key: normalizeKey(key) };
  for (const [k, v] of Object.entries(raw)) if (k !== 'v' && k !== 'key' && k !== 'ns') normalized[k] = v;
  // MongoDB keeps neither `hidden: false` nor the simple collation in a spec; another collation
  // it keeps with every field filled in.
  if (normalized.hidden === false) delete normalized.hidden;
  if (normalized.collation !== undefined) {
    const collation = indexCollation(normalized.collation);
    if (collation === undefined) delete normalized.collation;
    else normalized.collation = collation;
  }
  if (compareValues(normalized.key, { _id: 1 }) === 0) checkIdIndexSpec(raw);
  if (asksForText(key) || isTextKeyPattern(key)) {
    if (hashed > 0) throw new MongoError(ErrorCodes.CannotCreateIndex, `Error in specification ${JSON.stringify(raw)} :: caused by :: a text index may not be compound with a 'hashed' field`);
    return normalizeTextIndexSpec(normalized);
  }
  if (isGeoKeyPattern(key)) {
    if (hashed > 0) throw new MongoError(ErrorCodes.CannotCreateIndex, `Error in specification ${JSON.stringify(raw)} :: caused by :: a geo index may not be compound with a 'hashed' field`);
    return normalizeGeoIndexSpec(normalized);
  }
  const ttlProblem = ttlSpecProblem(normalized);
  if (ttlProblem !== undefined) throw new MongoError(ErrorCodes.CannotCreateIndex, `${ttlProblem}. Index spec: ${JSON.stringify(raw)}`);
  return normalized;
}

// As _isSpecOk: parsed as a query first (an unknown operator is BadValue), then judged by shape,
// and every refusal names the spec.
function checkPartialFilter(raw: Doc, filter: Doc): void {
  try {
    if (raw.sparse === true) throw new MongoError(ErrorCodes.CannotCreateIndex, 'cannot mix "partialFilterExpression" and "sparse" options');
    parseFilter(filter);
    checkPartialFilterExpression(filter);
  } catch (e) {
    if (e instanceof MongoError) throw new MongoError(e.code, `Error in specification ${JSON.stringify(raw)} :: caused by :: ${e.message}`);
    throw e;
  }
}

// The fields an _id index spec may have (index_key_validate.cpp, allowedIdIndexFieldNames): an
// _id index can be neither hidden nor TTL, nor anything else.
const ID_INDEX_FIELDS = new Set(['key', 'name', 'v', 'ns', 'collation']);

function checkIdIndexSpec(raw: Doc): void {
  for (const field of Object.keys(raw)) {
    if (!ID_INDEX_FIELDS.has(field)) {
      throw new MongoError(ErrorCodes.InvalidIndexSpecificationOption, `The field '${field}' is not valid for an _id index specification. Specification: ${JSON.stringify(raw)}`);
    }
  }
}

function indexCollation(collation: unknown): Doc | undefined {
  if (!isPlainObject(collation)) throw new MongoError(ErrorCodes.TypeMismatch, `The field 'collation' must be an object, but got ${bsonTypeName(collation)}`);
  if (Object.keys(collation).length === 0) throw new MongoError(ErrorCodes.BadValue, "The field 'collation' cannot be an empty object.");
  const full = fullCollationSpec(collation);
  if (full !== undefined && !indexableCollation(parseCollation(full)!)) throw unindexableCollation(full);
  return full;
}

// docshard keys a collated index by a canonical form of its strings (bson/collation_key.ts), which
// follows ICU for the root collation and most locales; one whose tailoring it cannot follow is
// refused rather than built with keys that disagree with the collation's equality.
export function unindexableCollation(collation: Doc): MongoError {
  return new MongoError(ErrorCodes.NotImplemented, `An index under the collation ${JSON.stringify(collation)} is not implemented: docshard's collated index keys cannot follow the tailoring of locale '${String(collation.locale)}' at strength ${String(collation.strength)}. Create the index with another strength or {locale: 'simple'}.`);
}

function normalizeKey(key: Doc): Doc {
  const out: Doc = {};
  for (const [field, dir] of Object.entries(key)) out[field] = typeof dir === 'string' ? dir : toDouble(dir) < 0 ? -1 : 1;
  return out;
}

// Decides whether `spec` is new, already there (a no-op), or conflicts with an existing index.
export function checkAgainstExisting(coll: Collection, spec: Doc): 'new' | 'exists' {
  for (const index of coll.indexes) {
    if (index.text !== undefined && isTextKeyPattern(spec.key as Doc)) return checkAgainstTextIndex(index.entry.spec, spec);
    const sameName = index.name === spec.name;
    const sameKey = compareValues(index.keyPattern, spec.key) === 0;
    if (sameName && sameKey) {
      if (optionsEqual(index.entry.spec, spec)) {
        if (otherOptionsEqual(index.entry.spec, spec)) return 'exists';
        throw new MongoError(ErrorCodes.IndexOptionsConflict, `An equivalent index already exists with the same name but different options. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(index.entry.spec)}`);
      }
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

// The options that do not tell two indexes apart (MongoDB's equivalent but not identical specs):
// createIndexes does not change them on an existing index; collMod does.
function otherOptionsEqual(a: Doc, b: Doc): boolean {
  const pick = (s: Doc): Doc => ({ expireAfterSeconds: s.expireAfterSeconds ?? null, hidden: s.hidden === true });
  return compareValues(pick(a), pick(b)) === 0;
}

function optionsEqual(a: Doc, b: Doc): boolean {
  const pick = (s: Doc): Doc => ({ unique: s.unique === true, sparse: s.sparse === true, partial: s.partialFilterExpression ?? null, collation: s.collation ?? null });
  return compareValues(pick(a), pick(b)) === 0;
}

// A collection has at most one text index: the same one asked again is a no-op, the same name
// with other options conflicts, anything else is refused (IndexCatalogImpl's rule).
function checkAgainstTextIndex(existing: Doc, spec: Doc): 'exists' {
  const pick = (s: Doc): Doc => ({ key: s.key, weights: s.weights, default_language: s.default_language, language_override: s.language_override, unique: s.unique === true, sparse: s.sparse === true, partial: s.partialFilterExpression ?? null });
  const same = compareValues(pick(existing), pick(spec)) === 0;
  if (existing.name === spec.name) {
    if (same) return 'exists';
    throw new MongoError(ErrorCodes.IndexOptionsConflict, `An equivalent index already exists with the same name but different options. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(existing)}`);
  }
  throw new MongoError(ErrorCodes.CannotCreateIndex, `only one text index per collection allowed, found existing text index "${String(existing.name)}"`);
}
