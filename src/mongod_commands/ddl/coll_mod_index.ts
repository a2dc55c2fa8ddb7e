import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName, compareValues } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { IndexAccess } from '../../storage/index_access.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { expireAfterSecondsRangeProblem, wholeSeconds } from '../../ttl/ttl_index.js';

// collMod's `index` option (MongoDB 7.0's coll_mod.cpp and coll_mod_index.cpp): change an index's
// expireAfterSeconds (making a single-field index a TTL index if it was not one) or hide it from
// the planner. Converting an index to unique is not implemented and is refused.

export interface IndexModification {
  readonly index: IndexAccess;
  readonly expireAfterSeconds?: number;
  // Set only when it changes: hiding a hidden index is no modification.
  readonly hidden?: boolean;
}

const FIELDS = new Set(['name', 'keyPattern', 'expireAfterSeconds', 'hidden', 'unique', 'prepareUnique', 'forceNonUnique']);

function wrongType(field: string, value: unknown, expected: string): MongoError {
  return new MongoError(ErrorCodes.TypeMismatch, `BSON field 'collMod.index.${field}' is the wrong type '${bsonTypeName(value)}', expected ${expected}`);
}

// Checks `{name | keyPattern, expireAfterSeconds?, hidden?}` against the collection, as MongoDB
// checks it before it changes anything.
export function parseIndexModification(coll: Collection, raw: unknown): IndexModification {
  if (!isPlainObject(raw)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'collMod.index' is the wrong type '${bsonTypeName(raw)}', expected type 'object'`);
  for (const field of Object.keys(raw)) {
    if (!FIELDS.has(field)) throw new MongoError(40415, `BSON field 'collMod.index.${field}' is an unknown field.`);
  }
  const { name, keyPattern, expireAfterSeconds, hidden } = raw;
  if (name !== undefined && typeof name !== 'string') throw wrongType('name', name, "type 'string'");
  if (keyPattern !== undefined && !isPlainObject(keyPattern)) throw wrongType('keyPattern', keyPattern, "type 'object'");
  if (expireAfterSeconds !== undefined && !isNumber(expireAfterSeconds)) throw wrongType('expireAfterSeconds', expireAfterSeconds, "types '[long, int, decimal, double]'");
  if (hidden !== undefined && typeof hidden !== 'boolean' && !isNumber(hidden)) throw wrongType('hidden', hidden, "type 'bool'");
  if (name !== undefined && keyPattern !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Cannot specify both key pattern and name.');
  if (name === undefined && keyPattern === undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'Must specify either index name or key pattern.');
  if (raw.unique !== undefined || raw.prepareUnique !== undefined || raw.forceNonUnique !== undefined) {
    throw new MongoError(ErrorCodes.NotImplemented, "collMod's index options 'unique', 'prepareUnique' and 'forceNonUnique' are not implemented by docshard");
  }
  if (expireAfterSeconds === undefined && hidden === undefined) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'no expireAfterSeconds, hidden, unique, or prepareUnique field');
  }
  const seconds = expireAfterSeconds === undefined ? undefined : wholeSeconds(expireAfterSeconds);
  if (seconds !== undefined) {
    if (coll.capped !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, 'TTL indexes are not supported for capped collections.');
    const problem = expireAfterSecondsRangeProblem(seconds);
    if (problem !== undefined) throw new MongoError(ErrorCodes.InvalidOptions, problem);
  }
  const index = findIndex(coll, name as string | undefined, keyPattern as Doc | undefined);
  if (seconds !== undefined) checkTtlConversion(index);
  let hide: boolean | undefined;
  if (hidden !== undefined) {
    hide = typeof hidden === 'boolean' ? hidden : toDouble(hidden) !== 0;
    if (splitNamespace(coll.ns).coll.startsWith('system.')) throw new MongoError(ErrorCodes.BadValue, "Can't hide index on system collection");
    if (index.name === '_id_') throw new MongoError(ErrorCodes.BadValue, "can't hide _id index");
    if (hide === index.hidden) hide = undefined;
  }
  return { index, ...(seconds === undefined ? {} : { expireAfterSeconds: seconds }), ...(hide === undefined ? {} : { hidden: hide }) };
}

function findIndex(coll: Collection, name: string | undefined, keyPattern: Doc | undefined): IndexAccess {
  if (name !== undefined) {
    const found = coll.index(name);
    if (found === undefined) throw new MongoError(ErrorCodes.IndexNotFound, `cannot find index ${name} for ns ${coll.ns}`);
    return found;
  }
  const matches = coll.indexes.filter((i) => compareValues(i.keyPattern, keyPattern) === 0);
  if (matches.length > 1) {
    throw new MongoError(ErrorCodes.AmbiguousIndexKeyPattern, `index keyPattern ${JSON.stringify(keyPattern)} matches ${matches.length} indexes, must use index name. Conflicting indexes:${JSON.stringify(matches[0]!.entry.spec)}, ${JSON.stringify(matches[1]!.entry.spec)}`);
  }
  if (matches.length === 0) throw new MongoError(ErrorCodes.IndexNotFound, `cannot find index ${JSON.stringify(keyPattern)} for ns ${coll.ns}`);
  return matches[0]!;
}

// A non-TTL index may become one when it has a single field other than _id.
function checkTtlConversion(index: IndexAccess): void {
  const current = index.entry.spec.expireAfterSeconds;
  if (current === undefined) {
    if (index.name === '_id_') throw new MongoError(ErrorCodes.InvalidOptions, 'the _id field does not support TTL indexes');
    if (Object.keys(index.keyPattern).length !== 1) throw new MongoError(ErrorCodes.InvalidOptions, 'TTL indexes are single-field indexes, compound indexes do not support TTL');
  } else if (!isNumber(current)) {
    throw new MongoError(ErrorCodes.InvalidOptions, 'existing expireAfterSeconds field is not a number');
  }
}

// Applies the modification in one write unit; the reply fields say what changed, as MongoDB's:
// expireAfterSeconds_old (when the index was TTL already) and _new, hidden_old and _new.
export function applyIndexModification(storage: StorageEngine, coll: Collection, mod: IndexModification): Doc {
  const before = mod.index.entry.spec;
  const reply: Doc = {};
  const spec: Doc = { ...before };
  if (mod.expireAfterSeconds !== undefined) {
    if (before.expireAfterSeconds !== undefined) reply.expireAfterSeconds_old = wholeSeconds(before.expireAfterSeconds);
    reply.expireAfterSeconds_new = mod.expireAfterSeconds;
    spec.expireAfterSeconds = mod.expireAfterSeconds;
  }
  if (mod.hidden !== undefined) {
    reply.hidden_old = mod.index.hidden;
    reply.hidden_new = mod.hidden;
    // An index shown again has no `hidden` in its spec, as in MongoDB.
    if (mod.hidden) spec.hidden = true;
    else delete spec.hidden;
  }
  if (compareValues(spec, before) !== 0) storage.replaceIndexSpec(coll, mod.index.name, spec);
  return reply;
}
