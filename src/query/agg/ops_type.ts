import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName, bsonTypeNumbers } from '../../bson/compare.js';
import {
  Decimal128, Double, Long, ObjectId, bsonTag, isNumber, isPlainObject, numberKind, toDouble, type Timestamp,
} from '../../bson/values.js';
import { UTC, parseDateText } from './date_support.js';
import {
  fail, formatIsoDate, isNullish, isTruthy, numberToString, parseArgs, type Evaluator, type ExpressionParser, type OperatorTable,
} from './operator_support.js';

const CONVERSION_FAILURE = 241;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type Target = 'double' | 'string' | 'objectId' | 'bool' | 'date' | 'int' | 'long' | 'decimal';
const TARGETS: Target[] = ['double', 'string', 'objectId', 'bool', 'date', 'int', 'long', 'decimal'];

class ConversionError extends Error {}

function unsupported(v: unknown, to: Target): never {
  throw new ConversionError(`Unsupported conversion from ${bsonTypeName(v)} to ${to} in $convert with no onError value`);
}

function overflow(v: unknown): never {
  throw new ConversionError(`Conversion would overflow target type in $convert with no onError value: ${numberToString(v)}`);
}

function badNumberText(s: string): never {
  throw new ConversionError(`Failed to parse number '${s}' in $convert with no onError value: Did not consume whole string.`);
}

const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|NaN|Infinity|inf|infinity)$/i;

function parseDoubleText(s: string): number {
  if (!NUMBER_TEXT.test(s)) badNumberText(s);
  const lower = s.toLowerCase().replace(/^[+-]/, '');
  if (lower === 'nan') return NaN;
  if (lower === 'inf' || lower === 'infinity') return s.startsWith('-') ? -Infinity : Infinity;
  return Number(s);
}

function parseIntegerText(s: string): bigint {
  if (!/^[+-]?\d+$/.test(s)) badNumberText(s);
  return BigInt(s);
}

// Truncates a finite number to an integer, failing on NaN/infinity like MongoDB.
function truncated(v: unknown): bigint {
  const kind = numberKind(v);
  if (kind === 'long') return (v as Long).toBigInt();
  const d = kind === 'decimal' ? Number((v as Decimal128).toString()) : toDouble(v);
  if (!Number.isFinite(d)) throw new ConversionError(`Attempt to convert ${numberToString(v)} value to integer type in $convert with no onError value`);
  return BigInt(Math.trunc(d));
}

export function convertValue(v: unknown, to: Target): unknown {
  switch (to) {
    case 'double': {
      if (isNumber(v)) return new Double(toDouble(v));
      if (typeof v === 'boolean') return new Double(v ? 1 : 0);
      if (typeof v === 'string') return new Double(parseDoubleText(v));
      if (v instanceof Date) return new Double(v.getTime());
      return unsupported(v, to);
    }
    case 'int': case 'long': {
      let r: bigint;
      if (isNumber(v)) r = truncated(v);
      else if (typeof v === 'boolean') r = v ? 1n : 0n;
      else if (typeof v === 'string') r = parseIntegerText(v);
      else if (v instanceof Date && to === 'long') r = BigInt(v.getTime());
      else return unsupported(v, to);
      if (to === 'int') {
        if (r < BigInt(INT32_MIN) || r > BigInt(INT32_MAX)) overflow(v);
        return Number(r);
      }
      if (r < INT64_MIN || r > INT64_MAX) overflow(v);
      return Long.fromBigInt(r);
    }
    case 'decimal': {
      if (numberKind(v) === 'decimal' && isNumber(v)) return v;
      if (isNumber(v)) return Decimal128.fromStringWithRounding(numberToString(v));
      if (typeof v === 'boolean') return Decimal128.fromString(v ? '1' : '0');
      if (typeof v === 'string') {
        parseDoubleText(v);
        return Decimal128.fromStringWithRounding(v);
      }
      if (v instanceof Date) return Decimal128.fromString(String(v.getTime()));
      return unsupported(v, to);
    }
    case 'string': {
      if (typeof v === 'string') return v;
      if (isNumber(v)) return numberToString(v);
      if (typeof v === 'boolean') return String(v);
      if (v instanceof Date) return formatIsoDate(v);
      if (bsonTag(v) === 'ObjectId') return (v as ObjectId).toHexString();
      return unsupported(v, to);
    }
    case 'bool': {
      if (isNumber(v) || typeof v === 'boolean') return isTruthy(v);
      return true;
    }
    case 'date': {
      if (v instanceof Date) return v;
      if (typeof v === 'string') {
        const ms = parseDateText(v, UTC);
        if (ms === undefined) throw new ConversionError(`Error parsing date string '${v}'`);
        return new Date(ms);
      }
      if (isNumber(v) && numberKind(v) !== 'int') return new Date(Number(truncated(v)));
      if (bsonTag(v) === 'ObjectId') return (v as ObjectId).getTimestamp();
      if (bsonTag(v) === 'Timestamp') return new Date((v as Timestamp).high * 1000);
      return unsupported(v, to);
    }
    case 'objectId': {
      if (bsonTag(v) === 'ObjectId') return v;
      if (typeof v === 'string') {
        if (!/^[0-9a-fA-F]{24}$/.test(v)) throw new ConversionError(`Failed to parse objectId '${v}' in $convert with no onError value: Invalid string length for parsing to OID, expected 24 but found ${v.length}`);
        return ObjectId.createFromHexString(v);
      }
      return unsupported(v, to);
    }
  }
}

function targetOf(to: unknown): Target {
  if (typeof to === 'string') {
    if ((TARGETS as string[]).includes(to)) return to as Target;
    if (to in bsonTypeNumbers) fail(ErrorCodes.BadValue, `$convert with 'to' of type ${to} is not supported`);
    return fail(ErrorCodes.BadValue, `Unknown type name: ${to}`);
  }
  if (isNumber(to)) {
    const n = toDouble(to);
    const name = Object.keys(bsonTypeNumbers).find((k) => bsonTypeNumbers[k] === n);
    if (name === undefined) fail(ErrorCodes.BadValue, `In $convert, numeric value for 'to' does not correspond to a BSON type: ${n}`);
    return targetOf(name);
  }
  return fail(ErrorCodes.FailedToParse, `$convert's 'to' argument must be a string or number, but is ${bsonTypeName(to)}`);
}

function convertOrFail(v: unknown, to: Target, onError: (() => unknown) | undefined): unknown {
  try {
    return convertValue(v, to);
  } catch (err) {
    if (!(err instanceof ConversionError)) throw err;
    if (onError !== undefined) return onError();
    return fail(CONVERSION_FAILURE, err.message);
  }
}

function parseConvert(args: unknown, parser: ExpressionParser): Evaluator {
  if (!isPlainObject(args)) fail(ErrorCodes.FailedToParse, `$convert expects an object of named arguments but found: ${bsonTypeName(args)}`);
  for (const key of Object.keys(args)) {
    if (!['input', 'to', 'onError', 'onNull'].includes(key)) fail(ErrorCodes.FailedToParse, `$convert found an unknown argument: ${key}`);
  }
  if (!('input' in args)) fail(ErrorCodes.FailedToParse, "Missing 'input' parameter to $convert");
  if (!('to' in args)) fail(ErrorCodes.FailedToParse, "Missing 'to' parameter to $convert");
  const input = parser.parse(args.input);
  const to = parser.parse(args.to);
  const onError = 'onError' in args ? parser.parse(args.onError) : undefined;
  const onNull = 'onNull' in args ? parser.parse(args.onNull) : undefined;
  return (ctx) => {
    const target = to(ctx);
    if (isNullish(target)) return null;
    const t = targetOf(target);
    const v = input(ctx);
    if (isNullish(v)) return onNull === undefined ? null : onNull(ctx);
    return convertOrFail(v, t, onError === undefined ? undefined : () => onError(ctx));
  };
}

function shorthand(to: Target) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
    return (ctx) => {
      const v = arg(ctx);
      return isNullish(v) ? null : convertOrFail(v, to, undefined);
    };
  };
}

export const typeOperators: OperatorTable = {
  $type: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => bsonTypeName(arg(ctx));
  },
  $isNumber: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => isNumber(arg(ctx));
  },
  $convert: parseConvert,
  $toInt: shorthand('int'),
  $toLong: shorthand('long'),
  $toDouble: shorthand('double'),
  $toDecimal: shorthand('decimal'),
  $toString: shorthand('string'),
  $toBool: shorthand('bool'),
  $toDate: shorthand('date'),
  $toObjectId: shorthand('objectId'),
};
