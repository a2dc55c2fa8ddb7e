import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { codeText } from './js_function.js';
import type { MapReduceScripts } from './map_reduce.js';
import { parseMapReduceOut, type MapReduceOut } from './map_reduce_out.js';
import { checkScriptingEnabled } from './script_settings.js';

// A mapReduce command's arguments as MongoDB 7.0's IDL reads them (map_reduce.idl), the same on a
// node and a router.
export interface MapReduceRequest {
  coll: string;
  scripts: MapReduceScripts;
  out: MapReduceOut;
  query: Doc;
  sort?: Doc;
  limit: number;
}

function missing(field: string): never {
  throw new MongoError(40414, `BSON field 'mapReduce.${field}' is missing but a required field`);
}

function wrongType(field: string, value: unknown, expected: string): never {
  throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'mapReduce.${field}' is the wrong type '${bsonTypeName(value)}', expected types '[${expected}]'`);
}

function code(cmd: Doc, field: string): string | undefined {
  if (cmd[field] === undefined) return undefined;
  return codeText(cmd[field]) ?? wrongType(field, cmd[field], 'string, javascript');
}

function doc(cmd: Doc, field: string): Doc | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  return isPlainObject(v) ? v : wrongType(field, v, 'object');
}

export function parseMapReduce(cmd: Doc, db: string): MapReduceRequest {
  const coll = Object.values(cmd)[0];
  if (typeof coll !== 'string' || coll === '') throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${db}.${String(coll)}'`);
  const map = code(cmd, 'map') ?? missing('map');
  const reduce = code(cmd, 'reduce') ?? missing('reduce');
  if (cmd.out === undefined) missing('out');
  const out = parseMapReduceOut(cmd.out, db);
  const finalize = code(cmd, 'finalize');
  const scope = doc(cmd, 'scope');
  let limit = 0;
  if (cmd.limit !== undefined) {
    if (!isNumber(cmd.limit)) wrongType('limit', cmd.limit, 'long, int, decimal, double');
    limit = Math.trunc(toDouble(cmd.limit));
    if (limit < 0) throw new MongoError(ErrorCodes.BadValue, 'Invalid limit: must be non-negative');
  }
  checkScriptingEnabled();
  const sort = doc(cmd, 'sort');
  return {
    coll,
    scripts: { map, reduce, ...(finalize === undefined ? {} : { finalize }), ...(scope === undefined ? {} : { scope }) },
    out,
    query: doc(cmd, 'query') ?? {},
    ...(sort === undefined ? {} : { sort }),
    limit,
  };
}
