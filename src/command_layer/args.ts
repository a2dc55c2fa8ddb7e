import { bsonTypeName } from '../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// Argument checks with MongoDB's IDL wording: "BSON field 'find.filter' is the wrong type
// 'string', expected type 'object'" (TypeMismatch, 14).
function wrongType(command: string, field: string, value: unknown, expected: string): MongoError {
  return new MongoError(ErrorCodes.TypeMismatch, `BSON field '${command}.${field}' is the wrong type '${bsonTypeName(value)}', expected type '${expected}'`);
}

export function commandName(cmd: Doc): string {
  return Object.keys(cmd)[0] ?? '';
}

export function optionalDoc(cmd: Doc, field: string): Doc | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw wrongType(commandName(cmd), field, v, 'object');
  return v;
}

export function requireDoc(cmd: Doc, field: string): Doc {
  const v = optionalDoc(cmd, field);
  if (v === undefined) throw missing(cmd, field);
  return v;
}

export function optionalArray(cmd: Doc, field: string): unknown[] | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw wrongType(commandName(cmd), field, v, 'array');
  return v;
}

export function requireArray(cmd: Doc, field: string): unknown[] {
  const v = optionalArray(cmd, field);
  if (v === undefined) throw missing(cmd, field);
  return v;
}

export function requireDocArray(cmd: Doc, field: string): Doc[] {
  const arr = requireArray(cmd, field);
  arr.forEach((v, i) => {
    if (!isPlainObject(v)) throw wrongType(commandName(cmd), `${field}.${i}`, v, 'object');
  });
  return arr as Doc[];
}

export function optionalStringArray(cmd: Doc, field: string): string[] | undefined {
  const arr = optionalArray(cmd, field);
  arr?.forEach((v, i) => {
    if (typeof v !== 'string') throw wrongType(commandName(cmd), `${field}.${i}`, v, 'string');
  });
  return arr as string[] | undefined;
}

export function optionalString(cmd: Doc, field: string): string | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw wrongType(commandName(cmd), field, v, 'string');
  return v;
}

export function requireString(cmd: Doc, field: string): string {
  const v = optionalString(cmd, field);
  if (v === undefined) throw missing(cmd, field);
  return v;
}

export function optionalBool(cmd: Doc, field: string): boolean | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (isNumber(v)) return toDouble(v) !== 0;
  throw wrongType(commandName(cmd), field, v, 'bool');
}

export function requireBool(cmd: Doc, field: string): boolean {
  const v = optionalBool(cmd, field);
  if (v === undefined) throw missing(cmd, field);
  return v;
}

export function optionalNumber(cmd: Doc, field: string): number | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (!isNumber(v)) throw wrongType(commandName(cmd), field, v, 'long');
  return toDouble(v);
}

export function optionalNonNegative(cmd: Doc, field: string): number | undefined {
  const v = optionalNumber(cmd, field);
  if (v !== undefined && v < 0) {
    throw new MongoError(51024, `BSON field '${field}' value must be >= 0, actual value '${v}'`);
  }
  return v;
}

function missing(cmd: Doc, field: string): MongoError {
  return new MongoError(ErrorCodes.IDLFailedToParse, `BSON field '${commandName(cmd)}.${field}' is missing but a required field`);
}

// The collection a command names in its first field, validated as mongod does.
export function collectionArg(cmd: Doc): string {
  const name = commandName(cmd);
  const v = cmd[name];
  if (typeof v !== 'string') {
    throw new MongoError(ErrorCodes.InvalidNamespace, `collection name has invalid type ${bsonTypeName(v)}`);
  }
  if (v.length === 0) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '.'`);
  if (!isValidCollectionName(v)) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid collection name: ${v}`);
  return v;
}

// NamespaceString::validCollectionName, the one rule for nodes and routers (the router's fast
// paths decline a name it refuses, so the general path answers it).
export function isValidCollectionName(v: string): boolean {
  return v.length > 0 && !v.includes('\0') && !v.startsWith('.') && !v.includes('$');
}
