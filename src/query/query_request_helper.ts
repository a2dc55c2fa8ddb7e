import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatValue } from '../bson/format.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';

// The checks MongoDB's query_request_helper and CanonicalQuery make of a find's options, pure so
// that a node and a router decide alike.

export type TailableMode = 'normal' | 'tailable' | 'tailableAndAwaitData';

// awaitData only means something for a tailable cursor (MongoDB's tailableModeFromBools).
export function tailableMode(tailable: boolean, awaitData: boolean): TailableMode {
  if (tailable) return awaitData ? 'tailableAndAwaitData' : 'tailable';
  if (awaitData) throw new MongoError(ErrorCodes.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'");
  return 'normal';
}

// query_request_helper::parseMaxTimeMS: a whole number of milliseconds up to 2^31 - 1; absent or 0
// means no limit.
export function parseMaxTimeMS(value: unknown, field = 'maxTimeMS'): number {
  if (value === undefined) return 0;
  if (!isNumber(value)) throw new MongoError(ErrorCodes.BadValue, `${field} must be a number`);
  const n = toDouble(value);
  if (!(n >= 0 && n <= 2147483647)) throw new MongoError(ErrorCodes.BadValue, `${field} is out of range`);
  if (!Number.isInteger(n)) throw new MongoError(ErrorCodes.BadValue, `${field} has non-integral value`);
  return n;
}

// How long a getMore of an awaitData cursor waits for new documents when it names no maxTimeMS.
export const DEFAULT_AWAIT_DATA_TIMEOUT_MS = 1000;

export interface FindOptions {
  tailable: TailableMode;
  sort: Doc | undefined;
  singleBatch: boolean;
  min: Doc | undefined;
  max: Doc | undefined;
}

// validateFindCommandRequest: what no find may combine, whatever the collection.
export function checkFindOptions(o: FindOptions): void {
  if (o.min !== undefined && o.max !== undefined && !sameFieldNames(o.min, o.max)) {
    throw new MongoError(51176, 'min and max must have the same field names');
  }
  if (o.tailable === 'normal') return;
  // A tailable cursor follows insertion order, the only order in which new documents come last.
  if (o.sort !== undefined && Object.keys(o.sort).length > 0 && !isNaturalAscending(o.sort)) {
    throw new MongoError(ErrorCodes.BadValue, 'cannot use tailable option with a sort other than {$natural: 1}');
  }
  if (o.singleBatch) throw new MongoError(ErrorCodes.BadValue, "cannot use tailable option with the 'singleBatch' option");
}

function sameFieldNames(a: Doc, b: Doc): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i]);
}

function isNaturalAscending(sort: Doc): boolean {
  const keys = Object.keys(sort);
  return keys.length === 1 && keys[0] === '$natural' && Number(sort.$natural) === 1;
}

// showRecordId is a projection of the record id into `$recordId`, after whatever the projection
// keeps (query_request_helper's addShowRecordIdMetaProj); a projection of `$recordId` of its own wins.
export function showRecordIdProjection(projection: Doc | undefined): Doc {
  if (projection?.$recordId !== undefined) return projection;
  return { ...projection, $recordId: { $meta: 'recordId' } };
}

export interface QueryShape {
  ns: string;
  filter: Doc;
  sort: Doc | undefined;
  projection: Doc | undefined;
  batchSize?: number;
  limit?: number;
  skip?: number;
}

// The query as mongod's errors describe it (CanonicalQuery::toStringForErrorMsg).
export function describeQuery(q: QueryShape): string {
  let out = `ns=${q.ns}`;
  if (q.batchSize !== undefined) out += ` batchSize=${q.batchSize}`;
  if (q.limit) out += ` limit=${q.limit}`;
  if (q.skip) out += ` skip=${q.skip}`;
  return `${out}Tree: ${describeFilter(q.filter, 0)}Sort: ${formatValue(q.sort ?? {})}\nProj: ${formatValue(q.projection ?? {})}\n`;
}

export function notCappedError(q: QueryShape): MongoError {
  return new MongoError(ErrorCodes.BadValue, `error processing query: ${describeQuery(q)} tailable cursor requested on non capped collection`);
}

// A match expression's debug string: one line per node, children indented by four spaces; several
// predicates are the children of an implicit $and.
function describeFilter(filter: Doc, depth: number): string {
  const predicates = predicatesOf(filter);
  if (predicates.length === 1) return predicates[0]!(depth);
  return `${indent(depth)}$and\n${predicates.map((p) => p(depth + 1)).join('')}`;
}

type Line = (depth: number) => string;

function predicatesOf(filter: Doc): Line[] {
  const lines: Line[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if ((key === '$and' || key === '$or' || key === '$nor') && Array.isArray(value)) {
      lines.push((d) => `${indent(d)}${key}\n${value.map((c) => (isPlainObject(c) ? describeFilter(c, d + 1) : '')).join('')}`);
    } else if (isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((op) => op.startsWith('$'))) {
      for (const [op, arg] of Object.entries(value)) lines.push((d) => `${indent(d)}${key} ${op} ${formatValue(arg)}\n`);
    } else {
      lines.push((d) => `${indent(d)}${key} $eq ${formatValue(value)}\n`);
    }
  }
  return lines;
}

function indent(depth: number): string {
  return '    '.repeat(depth);
}
