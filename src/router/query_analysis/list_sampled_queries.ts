import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';

// $listSampledQueries (7.0): `{aggregate: 1}` on admin, its spec `{namespace?: <ns>}`, checked as
// MongoDB's IDL checks it; the filter on config.sampledQueries it reads with.
export function listSampledQueriesFilter(db: string, cmd: Doc, spec: unknown): Doc {
  if (db !== 'admin' || cmd.aggregate !== 1) {
    throw new MongoError(ErrorCodes.InvalidNamespace, "$listSampledQueries must be run against the 'admin' database with {aggregate: 1}");
  }
  if (!isPlainObject(spec)) throw new MongoError(ErrorCodes.FailedToParse, '$listSampledQueries must be an object');
  for (const field of Object.keys(spec)) {
    if (field !== 'namespace') throw new MongoError(40415, `BSON field '$listSampledQueries.${field}' is an unknown field.`);
  }
  const ns = spec.namespace;
  if (ns === undefined) return {};
  if (typeof ns !== 'string') {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '$listSampledQueries.namespace' is the wrong type '${bsonTypeName(ns)}', expected type 'string'`);
  }
  const dot = ns.indexOf('.');
  if (dot <= 0 || dot === ns.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
  return { ns };
}
