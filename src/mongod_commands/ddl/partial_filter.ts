import { BSONRegExp } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';

// The expressions a partialFilterExpression may hold (IndexCatalogImpl::_checkValidFilterExpressions
// with the 6.0+ rules): equality, $exists: true, the range operators, $type, $in, geo predicates,
// and $and/$or of those at any depth. Anything that negates ($ne, $nin, $not, $nor, $exists:
// false) or matches otherwise ($regex, $mod, $size, $all of $elemMatch, $elemMatch, bit tests) is
// CannotCreateIndex; $expr and $where are not allowed in this context at all. The filter has been
// parsed as a query already, so only its shape is judged here.

const ALLOWED_FIELD_OPERATORS = new Set(['$eq', '$gt', '$gte', '$lt', '$lte', '$type', '$in', '$geoWithin', '$geoIntersects']);
const MAX_DEPTH = 4;

function unsupported(what: string): never {
  throw new MongoError(ErrorCodes.CannotCreateIndex, `Expression not supported in partial index: ${what}`);
}

export function checkPartialFilterExpression(filter: Doc): void {
  checkDocument(filter, 0);
}

function checkDocument(filter: Doc, depth: number): void {
  if (depth > MAX_DEPTH) throw new MongoError(ErrorCodes.CannotCreateIndex, `partialFilterExpression depth may not exceed ${MAX_DEPTH}`);
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (Array.isArray(value)) for (const clause of value) if (isPlainObject(clause)) checkDocument(clause, depth + 1);
    } else if (key === '$expr') {
      throw new MongoError(ErrorCodes.QueryFeatureNotAllowed, '$expr is not allowed in this context');
    } else if (key === '$where') {
      throw new MongoError(ErrorCodes.BadValue, '$where is not allowed in this context');
    } else if (key === '$comment') {
      continue;
    } else if (key.startsWith('$')) {
      unsupported(key);
    } else {
      checkField(key, value);
    }
  }
}

function checkField(path: string, value: unknown): void {
  if (value instanceof RegExp || value instanceof BSONRegExp) unsupported(`${path} regex`);
  if (!isOperatorObject(value)) return;
  for (const [op, operand] of Object.entries(value)) {
    if (op === '$exists') {
      if (!truthy(operand)) unsupported(`$not ${path} exists`);
    } else if (op === '$all') {
      // $all of plain values is an $and of equalities; of $elemMatch clauses, it is not.
      if (Array.isArray(operand) && operand.some((v) => isPlainObject(v) && '$elemMatch' in v)) unsupported(`${path} $elemMatch`);
    } else if (op === '$eq' && (operand instanceof RegExp || operand instanceof BSONRegExp)) {
      continue;
    } else if (!ALLOWED_FIELD_OPERATORS.has(op)) {
      unsupported(op === '$ne' || op === '$nin' || op === '$not' ? `$not ${path}` : `${path} ${op}`);
    }
  }
}

function isOperatorObject(v: unknown): v is Doc {
  if (!isPlainObject(v)) return false;
  const first = Object.keys(v)[0];
  return first !== undefined && first.startsWith('$');
}

function truthy(v: unknown): boolean {
  return !(v === false || v === 0 || v === null || v === undefined);
}
