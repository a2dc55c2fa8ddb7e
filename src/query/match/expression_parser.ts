import type { Binary, BSONRegExp } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeNumbers } from '../../bson/compare.js';
import { bsonTag, isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { compileExpression } from '../agg/expression.js';
import { isTruthy } from '../agg/operator_support.js';
import { splitPath } from '../path.js';
import {
  arraySize, bitTest, comparison, exists, inList, mod, regexMatch, typeIn, typeNameOfCode,
  type BitTest, type ComparisonOp, type Predicate,
} from './leaf_predicates.js';
import { alwaysFalse, alwaysTrue, andNode, notNode, onPath, orNode, type MatchNode } from './match_node.js';
import { compileRegex, validateRegexFlags } from './regex.js';
import { describeValue } from './describe_value.js';
import { compileJsonSchema } from './json_schema/json_schema.js';
import { geoPredicate, nearNotAllowed } from '../geo/geo_match.js';
import { whereNode } from './where.js';

export interface ParseOptions {
  variables?: Record<string, unknown>;
  // false where MongoDB refuses $jsonSchema's encrypt keywords (a validator that only warns, or
  // that lets invalid documents stay invalid).
  encryptKeywords?: boolean;
  // false where MongoDB refuses $jsonSchema altogether (a projection's $elemMatch).
  jsonSchema?: boolean;
  // false where MongoDB refuses $where (aggregation's $match, validators, arrayFilters, $pull).
  javascript?: boolean;
}

// Where a filter document sits: the top level (and $and/$or/$nor inside it) may use $expr;
// the object form of $elemMatch may not.
interface Context {
  options: ParseOptions;
  topLevel: boolean;
}

function badValue(message: string): never {
  throw new MongoError(ErrorCodes.BadValue, message);
}


export function parseFilter(filter: Doc, options: ParseOptions = {}): MatchNode {
  return parseDocument(filter, { options, topLevel: true });
}

function parseDocument(filter: Doc, ctx: Context): MatchNode {
  const children: MatchNode[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key.startsWith('$')) {
      const node = parseTopLevelOperator(key, value, ctx);
      if (node !== undefined) children.push(node);
    } else {
      children.push(parseField(splitPath(key), value, ctx.options));
    }
  }
  return children.length === 0 ? alwaysTrue : andNode(children);
}

function parseTopLevelOperator(name: string, value: unknown, ctx: Context): MatchNode | undefined {
  switch (name) {
    case '$and': case '$or': case '$nor': {
      if (!Array.isArray(value)) badValue(`${name} must be an array`);
      if (value.length === 0) badValue('$and/$or/$nor must be a nonempty array');
      const children = value.map((entry) => {
        if (!isPlainObject(entry)) badValue('$or/$and/$nor entries need to be full objects');
        return parseDocument(entry, ctx);
      });
      if (name === '$and') return andNode(children);
      return name === '$or' ? orNode(children) : notNode(orNode(children));
    }
    case '$expr': {
      if (!ctx.topLevel) badValue('$expr can only be applied to the top-level document');
      const evaluate = compileExpression(value, { variables: ctx.options.variables });
      return (input) => isTruthy(evaluate(input as Doc));
    }
    case '$comment':
      return undefined;
    // DBRef fields, where a filter stands for a document (inside $elemMatch) that holds them.
    case '$ref': case '$id': case '$db':
      return equalityNode([name], value);
    case '$alwaysTrue': case '$alwaysFalse':
      if (!isNumber(value) || toDouble(value) !== 1) badValue(`${name} must be an integer value of 1`);
      return name === '$alwaysTrue' ? alwaysTrue : alwaysFalse;
    case '$where':
      if (ctx.options.javascript === false) badValue('$where is not allowed in this context');
      if (!ctx.topLevel) badValue('$elemMatch cannot contain $where expression');
      return whereNode(value);
    case '$text':
      throw new MongoError(ErrorCodes.IndexNotFound, 'text index required for $text query');
    case '$jsonSchema': {
      if (ctx.options.jsonSchema === false) throw new MongoError(ErrorCodes.QueryFeatureNotAllowed, '$jsonSchema is not allowed in this context');
      const schema = compileJsonSchema(value, { encryptKeywords: ctx.options.encryptKeywords !== false });
      return (input) => isPlainObject(input) && schema.matches(input);
    }
    default:
      return badValue(`unknown top level operator: ${name}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.`);
  }
}

// {$gt: 1, ...}: an object whose first field is an operator. An object holding both $ref and $id
// is a DBRef literal; under $elemMatch (`incompleteDBRef`) any of $ref, $id, $db makes it a filter
// on the elements' fields, as in MongoDB.
export function isOperatorObject(value: unknown, incompleteDBRef = false): value is Doc {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  if (keys[0] === undefined || !keys[0].startsWith('$')) return false;
  const has = (name: string): boolean => Object.hasOwn(value, name);
  return incompleteDBRef ? !(has('$ref') || has('$id') || has('$db')) : !(has('$ref') && has('$id'));
}

// A regex operand: a BSON regex as the wire delivers it, or a JS RegExp from in-process callers
// (its g and y flags mean nothing to MongoDB and are dropped).
function asRegex(value: unknown): { pattern: string; options: string } | undefined {
  if (bsonTag(value) === 'BSONRegExp') return value as BSONRegExp;
  if (value instanceof RegExp) return { pattern: value.source, options: value.flags.replace(/[gyd]/g, '') };
  return undefined;
}

function parseField(path: string[] | null, value: unknown, options: ParseOptions): MatchNode {
  const re = asRegex(value);
  if (re !== undefined) return regexNode(path, re);
  if (isOperatorObject(value)) return parseOperators(path, value, options);
  return equalityNode(path, value);
}

function equalityNode(path: string[] | null, value: unknown): MatchNode {
  return onPath(path, 'traverse', comparison('$eq', value === undefined ? null : value));
}

function regexNode(path: string[] | null, re: { pattern: string; options: string }): MatchNode {
  return onPath(path, 'traverse', regexPredicate(re.pattern, re.options));
}

function regexPredicate(pattern: string, flags: string): Predicate {
  validateRegexFlags(flags);
  return regexMatch(pattern, flags, compileRegex(pattern, flags));
}

// The operators of one field, e.g. {$gte: 1, $lt: 5}: all must hold.
function parseOperators(path: string[] | null, spec: Doc, options: ParseOptions): MatchNode {
  const children: MatchNode[] = [];
  let regexDone = false;
  for (const name of Object.keys(spec)) {
    const arg = spec[name];
    if (name === '$regex' || name === '$options') {
      if (!regexDone) children.push(parseRegexOperator(path, spec));
      regexDone = true;
      continue;
    }
    children.push(parseOperator(path, name, arg, options));
  }
  return andNode(children);
}

function parseRegexOperator(path: string[] | null, spec: Doc): MatchNode {
  const regex = spec.$regex;
  const options = spec.$options;
  if (regex === undefined) badValue('$options needs a $regex');
  if (options !== undefined && typeof options !== 'string') badValue('$options has to be a string');
  if (typeof regex === 'string') return onPath(path, 'traverse', regexPredicate(regex, options ?? ''));
  const re = asRegex(regex);
  if (re !== undefined) {
    if (options !== undefined && re.options !== '') badValue('options set in both $regex and $options');
    return onPath(path, 'traverse', regexPredicate(re.pattern, options ?? re.options));
  }
  return badValue('$regex has to be a string');
}

function parseOperator(path: string[] | null, name: string, arg: unknown, options: ParseOptions): MatchNode {
  switch (name) {
    case '$eq': return equalityNode(path, arg);
    case '$lt': case '$lte': case '$gt': case '$gte':
      return onPath(path, 'traverse', comparison(name as ComparisonOp, arg === undefined ? null : arg));
    case '$ne':
      if (asRegex(arg) !== undefined) badValue("Can't have regex as arg to $ne.");
      return notNode(equalityNode(path, arg));
    case '$in': return onPath(path, 'traverse', parseInList(name, arg));
    case '$nin': return notNode(onPath(path, 'traverse', parseInList(name, arg)));
    case '$exists': {
      const node = onPath(path, 'traverse', exists());
      return isTruthy(arg) ? node : notNode(node);
    }
    case '$type': return onPath(path, 'traverse', typeIn(parseTypeSet(arg)));
    case '$size': return onPath(path, 'noTraversal', arraySize(parseSize(arg)));
    case '$mod': return onPath(path, 'traverse', parseMod(arg));
    case '$all': return parseAll(path, arg, options);
    case '$elemMatch': return parseElemMatch(path, arg, options);
    case '$not': return notNode(parseNot(path, arg, options));
    case '$bitsAllSet': case '$bitsAllClear': case '$bitsAnySet': case '$bitsAnyClear':
      return onPath(path, 'traverse', bitTest(name as BitTest, parseBitPositions(name, arg)));
    case '$geoWithin': case '$geoIntersects': case '$within':
      return onPath(path, 'noTraversal', geoPredicate(name, arg));
    case '$near': case '$nearSphere':
      return nearNotAllowed();
    case '$maxDistance': case '$minDistance':
      return badValue(`${name} must be used with $near or $nearSphere`);
    default:
      return badValue(`unknown operator: ${name}`);
  }
}

function parseInList(name: string, arg: unknown): Predicate {
  if (!Array.isArray(arg)) badValue(`${name} needs an array`);
  const values: unknown[] = [];
  const regexes: Predicate[] = [];
  for (const item of arg) {
    const re = asRegex(item);
    if (re !== undefined) {
      regexes.push(regexPredicate(re.pattern, re.options));
    } else if (isOperatorObject(item)) {
      badValue(`cannot nest $ under ${name}`);
    } else {
      values.push(item === undefined ? null : item);
    }
  }
  return inList(values, regexes);
}

function parseNot(path: string[] | null, arg: unknown, options: ParseOptions): MatchNode {
  const re = asRegex(arg);
  if (re !== undefined) return regexNode(path, re);
  if (!isPlainObject(arg)) badValue('$not needs a regex or a document');
  if (Object.keys(arg).length === 0) badValue('$not cannot be empty');
  return parseOperators(path, arg, options);
}

function parseAll(path: string[] | null, arg: unknown, options: ParseOptions): MatchNode {
  if (!Array.isArray(arg)) badValue('$all needs an array');
  if (arg.length === 0) return alwaysFalse;
  const first = arg[0];
  if (isPlainObject(first) && Object.keys(first)[0] === '$elemMatch') {
    return andNode(arg.map((item) => {
      if (!isPlainObject(item) || Object.keys(item)[0] !== '$elemMatch') badValue('$all/$elemMatch has to be consistent');
      return parseElemMatch(path, item.$elemMatch, options);
    }));
  }
  return andNode(arg.map((item) => {
    const re = asRegex(item);
    if (re !== undefined) return regexNode(path, re);
    if (isOperatorObject(item)) badValue('no $ expressions in $all');
    return equalityNode(path, item);
  }));
}

// Operators that make an $elemMatch argument a filter on documents rather than a predicate on
// the elements themselves.
const DOCUMENT_LEVEL = new Set(['$and', '$or', '$nor', '$where', '$expr', '$jsonSchema', '$text', '$comment', '$alwaysTrue', '$alwaysFalse']);

function parseElemMatch(path: string[] | null, arg: unknown, options: ParseOptions): MatchNode {
  if (!isPlainObject(arg)) badValue('$elemMatch needs an Object');
  const first = Object.keys(arg)[0];
  if (isOperatorObject(arg, true) && !DOCUMENT_LEVEL.has(first!)) {
    const elementMatches = parseOperators(null, arg, options);
    return onPath(path, 'noTraversal', (value, details) => matchArray(value, details, (element) => elementMatches(element)));
  }
  const sub = parseDocument(arg, { options, topLevel: false });
  return onPath(path, 'noTraversal', (value, details) =>
    matchArray(value, details, (element) => (isPlainObject(element) || Array.isArray(element)) && sub(element)));
}

function matchArray(value: unknown, details: { elemMatchKey?: string } | undefined, test: (element: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    if (test(value[i])) {
      if (details !== undefined) details.elemMatchKey = String(i);
      return true;
    }
  }
  return false;
}

function parseTypeSet(arg: unknown): Set<string> {
  const items = Array.isArray(arg) ? arg : [arg];
  if (items.length === 0) badValue('$type must match at least one type');
  const names = new Set<string>();
  for (const item of items) {
    if (isNumber(item)) {
      const code = toDouble(item);
      const name = Number.isInteger(code) ? typeNameOfCode(code) : undefined;
      if (name === undefined) badValue(`Invalid numerical type code: ${describeValue(item)}`);
      names.add(name);
    } else if (typeof item === 'string') {
      if (item !== 'number' && !Object.prototype.hasOwnProperty.call(bsonTypeNumbers, item)) badValue(`Unknown type name alias: ${item}`);
      names.add(item);
    } else {
      badValue('type must be represented as a number or a string');
    }
  }
  return names;
}

function parseSize(arg: unknown): number {
  if (!isNumber(arg)) badValue('$size needs a number');
  const n = toDouble(arg);
  if (!Number.isInteger(n)) badValue('$size must be a whole number');
  if (n < 0) badValue('$size may not be negative');
  return n;
}

const TWO_63 = 2 ** 63;

function toInt64(value: unknown, what: string): bigint {
  if (bsonTag(value) === 'Long') return (value as { toBigInt(): bigint }).toBigInt();
  const d = toDouble(value);
  if (!Number.isFinite(d)) badValue(`malformed mod, ${what} value is invalid :: caused by :: Unable to coerce NaN/Inf to integral type`);
  const t = Math.trunc(d);
  if (t >= TWO_63 || t < -TWO_63) badValue(`malformed mod, ${what} value is invalid :: caused by :: Out of bounds coercing to integral value`);
  return BigInt(t);
}

function parseMod(arg: unknown): Predicate {
  if (!Array.isArray(arg)) badValue('malformed mod, needs to be an array');
  if (arg.length < 1) badValue('malformed mod, not enough elements');
  if (!isNumber(arg[0])) badValue('malformed mod, divisor not a number');
  if (arg.length < 2) badValue('malformed mod, not enough elements');
  if (!isNumber(arg[1])) badValue('malformed mod, remainder not a number');
  if (arg.length > 2) badValue('malformed mod, too many elements');
  const divisor = toInt64(arg[0], 'divisor');
  const remainder = toInt64(arg[1], 'remainder');
  if (divisor === 0n) badValue('divisor cannot be 0');
  return mod(divisor, remainder);
}

function parseBitPositions(name: string, arg: unknown): number[] {
  if (Array.isArray(arg)) {
    return arg.map((p) => {
      if (!isNumber(p)) badValue(`bit positions must be an integer but got: ${describeValue(p)}`);
      const d = toDouble(p);
      if (!Number.isInteger(d)) badValue(`bit positions must be an integer but got: ${describeValue(p)}`);
      if (d < 0) badValue(`bit positions must be >= 0 but got: ${describeValue(p)}`);
      if (d > 2147483647) badValue(`bit positions cannot be represented as a 32-bit signed integer: ${describeValue(p)}`);
      return d;
    });
  }
  if (isNumber(arg)) {
    const mask = bsonTag(arg) === 'Long' ? (arg as { toBigInt(): bigint }).toBigInt() : undefined;
    const d = toDouble(arg);
    if (mask === undefined && !Number.isInteger(d)) badValue(`Expected an integer: ${name}: ${describeValue(arg)}`);
    const bits = mask ?? BigInt(d);
    if (bits < 0n) badValue(`Expected a positive number in: ${name}: ${describeValue(arg)}`);
    const positions: number[] = [];
    for (let bit = 0; bit < 64; bit++) if ((bits >> BigInt(bit)) & 1n) positions.push(bit);
    return positions;
  }
  if (bsonTag(arg) === 'Binary') {
    const bin = arg as Binary;
    const bytes = bin.buffer.subarray(0, bin.position);
    const positions: number[] = [];
    for (let i = 0; i < bytes.length * 8; i++) if (bytes[i >> 3]! & (1 << (i & 7))) positions.push(i);
    return positions;
  }
  return badValue(`${name} takes an Array, a number, or a BinData but received: ${name}: ${describeValue(arg)}`);
}
