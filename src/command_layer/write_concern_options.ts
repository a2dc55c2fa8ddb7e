import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { bsonTypeName } from '../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// A command's writeConcern as MongoDB parses it (WriteConcernOptions::extractWCFromCommand): what
// to wait for, and where it came from, which errors and replies report back (errInfo.writeConcern).

// ReplSetConfig::kMaxMembers: w can never ask for more.
const MAX_MEMBERS = 50;

export type WriteConcernProvenance = 'clientSupplied' | 'implicitDefault' | 'customDefault' | 'getLastErrorDefaults' | 'internalWriteDefault';

export interface WriteConcernOptions {
  readonly w: number | string;
  // 'journal' for j: true, 'fsync' for fsync: true, 'none' for j: false, 'unset' when neither was
  // given (w: 'majority' then waits for durable optimes, as writeConcernMajorityJournalDefault).
  readonly sync: 'unset' | 'none' | 'journal' | 'fsync';
  // Milliseconds; 0 waits as long as it takes.
  readonly wtimeout: number;
  readonly provenance: WriteConcernProvenance;
}

const PROVENANCES = new Set<string>(['clientSupplied', 'implicitDefault', 'customDefault', 'getLastErrorDefaults', 'internalWriteDefault']);

// The command's write concern, or `fallback` when it gives none (no field, or an empty document).
export function extractWriteConcern(cmd: Doc, fallback: WriteConcernOptions): WriteConcernOptions {
  const raw = cmd.writeConcern;
  if (raw === undefined) return fallback;
  if (!isPlainObject(raw)) throw new MongoError(ErrorCodes.TypeMismatch, `"writeConcern" had the wrong type. Expected object, found ${bsonTypeName(raw)}`);
  if (Object.keys(raw).length === 0) return fallback;
  return parseWriteConcern(raw);
}

function parseWriteConcern(wc: Doc): WriteConcernOptions {
  const w = parseW(wc.w);
  const j = optionalBool(wc, 'j');
  const fsync = optionalBool(wc, 'fsync');
  if (j === true && fsync === true) throw new MongoError(ErrorCodes.FailedToParse, 'fsync and j options cannot be used together');
  const sync = j === true ? 'journal' : fsync === true ? 'fsync' : j === false ? 'none' : 'unset';
  let wtimeout = 0;
  if (wc.wtimeout !== undefined && wc.wtimeout !== null) {
    if (!isNumber(wc.wtimeout)) throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'writeConcern.wtimeout' is the wrong type '${bsonTypeName(wc.wtimeout)}', expected types '[int, decimal, double, long]'`);
    wtimeout = Math.trunc(toDouble(wc.wtimeout));
  }
  const provenance = wc.provenance === undefined ? 'clientSupplied' : parseProvenance(wc.provenance);
  return { w, sync, wtimeout, provenance };
}

function parseW(w: unknown): number | string {
  if (w === undefined) return 1;
  if (typeof w === 'string') return w;
  if (!isNumber(w)) throw new MongoError(ErrorCodes.FailedToParse, 'w has to be a number or a string');
  const n = toDouble(w);
  if (!Number.isInteger(n) || n < 0 || n > MAX_MEMBERS) {
    throw new MongoError(ErrorCodes.FailedToParse, `w has to be a non-negative number and not greater than ${MAX_MEMBERS}`);
  }
  return n;
}

function optionalBool(wc: Doc, field: 'j' | 'fsync'): boolean | undefined {
  const v = wc[field];
  if (v === undefined || v === null) return undefined;
  // The IDL takes any number as a boolean too, as older drivers send j: 1.
  if (typeof v === 'boolean') return v;
  if (isNumber(v)) return toDouble(v) !== 0;
  throw new MongoError(ErrorCodes.TypeMismatch, `BSON field 'writeConcern.${field}' is the wrong type '${bsonTypeName(v)}', expected types '[bool, long, int, decimal, double]'`);
}

function parseProvenance(v: unknown): WriteConcernProvenance {
  if (typeof v === 'string' && PROVENANCES.has(v)) return v as WriteConcernProvenance;
  throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${String(v)}' for field 'writeConcern.provenance' is not a valid value.`);
}

// Waits for other members than this one: a w above 1 or any mode.
export function needsOtherMembers(wc: WriteConcernOptions): boolean {
  return typeof wc.w === 'string' || wc.w > 1;
}

// How replies and errors show it (WriteConcernOptions::toBSON).
export function writeConcernToBson(wc: WriteConcernOptions): Doc {
  const out: Doc = { w: wc.w };
  if (wc.sync === 'journal') out.j = true;
  else if (wc.sync === 'fsync') out.fsync = true;
  else if (wc.sync === 'none') out.j = false;
  out.wtimeout = wc.wtimeout;
  out.provenance = wc.provenance;
  return out;
}
