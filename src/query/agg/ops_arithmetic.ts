import { bsonTypeName } from '../../bson/compare.js';
import {
  Decimal128, Double, Long, bsonTag, isNumber, numberKind, numericAdd, numericMultiply, numericSubtract, toBigIntExact, toDouble,
} from '../../bson/values.js';
import { roundDecimalText, roundDouble, type RoundingMode } from './decimal_rounding.js';
import { fail, isNullish, parseArgs, parseVariadic, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function decimal(x: number | string): Decimal128 {
  return Decimal128.fromStringWithRounding(typeof x === 'number' ? decimalText(x) : x);
}

function decimalText(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return String(x);
}

function toDecimalNumber(v: unknown): number {
  return bsonTag(v) === 'Decimal128' ? Number((v as Decimal128).toString()) : toDouble(v);
}

// Integer results narrow to int only when both inputs were ints, and overflow widens to double.
function integral(r: bigint, bothInt: boolean): unknown {
  if (bothInt && r >= BigInt(INT32_MIN) && r <= BigInt(INT32_MAX)) return Number(r);
  if (r >= INT64_MIN && r <= INT64_MAX) return Long.fromBigInt(r);
  return new Double(Number(r));
}

// Durations added to dates are rounded half away from zero, like C's llround.
function roundAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

function add(items: Evaluator[]): Evaluator {
  return (ctx) => {
    let total: unknown = 0;
    let date: Date | undefined;
    let sawNull = false;
    for (const item of items) {
      const v = item(ctx);
      if (isNullish(v)) {
        sawNull = true;
      } else if (v instanceof Date) {
        if (date !== undefined) fail(16612, 'only one date allowed in an $add expression');
        date = v;
      } else if (isNumber(v)) {
        total = numericAdd(total, v);
      } else {
        fail(16554, `$add only supports numeric or date types, not ${bsonTypeName(v)}`);
      }
    }
    if (sawNull) return null;
    if (date === undefined) return total;
    const offset = toDouble(total);
    if (!Number.isFinite(offset)) fail(40302, `Cannot add ${offset} to a date`);
    return new Date(date.getTime() + roundAway(offset));
  };
}

function subtract(args: Evaluator[]): Evaluator {
  const [left, right] = args as [Evaluator, Evaluator];
  return (ctx) => {
    const a = left(ctx);
    const b = right(ctx);
    if (isNullish(a) || isNullish(b)) return null;
    if (isNumber(a) && isNumber(b)) return numericSubtract(a, b);
    if (a instanceof Date) {
      if (b instanceof Date) return Long.fromNumber(a.getTime() - b.getTime());
      if (isNumber(b)) return new Date(a.getTime() - roundAway(toDouble(b)));
    }
    if (b instanceof Date) fail(16556, `can't $subtract date from ${bsonTypeName(a)}`);
    return fail(16556, `can't $subtract ${bsonTypeName(b)} from ${bsonTypeName(a)}`);
  };
}

function multiply(items: Evaluator[]): Evaluator {
  return (ctx) => {
    let product: unknown = 1;
    let sawNull = false;
    for (const item of items) {
      const v = item(ctx);
      if (isNullish(v)) sawNull = true;
      else if (isNumber(v)) product = numericMultiply(product, v);
      else fail(16555, `$multiply only supports numeric types, not ${bsonTypeName(v)}`);
    }
    return sawNull ? null : product;
  };
}

function isZero(v: unknown): boolean {
  return toDecimalNumber(v) === 0;
}

function divide(args: Evaluator[]): Evaluator {
  const [left, right] = args as [Evaluator, Evaluator];
  return (ctx) => {
    const a = left(ctx);
    const b = right(ctx);
    if (isNullish(a) || isNullish(b)) return null;
    if (!isNumber(a) || !isNumber(b)) fail(16609, `$divide only supports numeric types, not ${bsonTypeName(a)} and ${bsonTypeName(b)}`);
    if (isZero(b)) fail(16608, "can't $divide by zero");
    if (numberKind(a) === 'decimal' || numberKind(b) === 'decimal') return decimal(toDecimalNumber(a) / toDecimalNumber(b));
    return new Double(toDouble(a) / toDouble(b));
  };
}

function mod(args: Evaluator[]): Evaluator {
  const [left, right] = args as [Evaluator, Evaluator];
  return (ctx) => {
    const a = left(ctx);
    const b = right(ctx);
    if (isNullish(a) || isNullish(b)) return null;
    if (!isNumber(a) || !isNumber(b)) fail(16611, `$mod only supports numeric types, not ${bsonTypeName(a)} and ${bsonTypeName(b)}`);
    if (isZero(b)) fail(16610, "can't $mod by zero");
    const ka = numberKind(a);
    const kb = numberKind(b);
    if (ka === 'decimal' || kb === 'decimal') return decimal(toDecimalNumber(a) % toDecimalNumber(b));
    if (ka === 'double' || kb === 'double') return new Double(toDouble(a) % toDouble(b));
    return integral(toBigIntExact(a)! % toBigIntExact(b)!, ka === 'int' && kb === 'int');
  };
}

function unary(name: string, args: unknown, parser: ExpressionParser, apply: (v: unknown) => unknown): Evaluator {
  const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
  return (ctx) => {
    const v = arg(ctx);
    if (isNullish(v)) return null;
    if (!isNumber(v)) fail(28765, `${name} only supports numeric types, not ${bsonTypeName(v)}`);
    return apply(v);
  };
}

function abs(v: unknown): unknown {
  switch (numberKind(v)) {
    case 'int': return integral(BigInt(Math.abs(toDouble(v))), true);
    case 'long': {
      const x = (v as Long).toBigInt();
      if (x === INT64_MIN) fail(28680, "can't take $abs of long long min");
      return Long.fromBigInt(x < 0n ? -x : x);
    }
    case 'decimal': return decimal(Math.abs(toDecimalNumber(v)));
    default: return new Double(Math.abs(toDouble(v)));
  }
}

function integralUnchanged(fn: (x: number) => number): (v: unknown) => unknown {
  return (v) => {
    const kind = numberKind(v);
    if (kind === 'int' || kind === 'long') return v;
    if (kind === 'decimal') return decimal(fn(toDecimalNumber(v)));
    return new Double(fn(toDouble(v)));
  };
}

function floating(check: (x: number) => void, fn: (x: number) => number): (v: unknown) => unknown {
  return (v) => {
    const x = toDecimalNumber(v);
    check(x);
    return numberKind(v) === 'decimal' ? decimal(fn(x)) : new Double(fn(x));
  };
}

function log(args: Evaluator[]): Evaluator {
  const [numberArg, baseArg] = args as [Evaluator, Evaluator];
  return (ctx) => {
    const n = numberArg(ctx);
    const b = baseArg(ctx);
    if (isNullish(n) || isNullish(b)) return null;
    if (!isNumber(n)) fail(28756, `$log's argument must be numeric, not ${bsonTypeName(n)}`);
    if (!isNumber(b)) fail(28757, `$log's base must be numeric, not ${bsonTypeName(b)}`);
    const x = toDecimalNumber(n);
    const base = toDecimalNumber(b);
    if (!(x > 0) && !Number.isNaN(x)) fail(28758, `$log's argument must be a positive number, but is ${String(x)}`);
    if ((!(base > 0) || base === 1) && !Number.isNaN(base)) fail(28759, `$log's base must be a positive number not equal to 1, but is ${String(base)}`);
    const r = Math.log(x) / Math.log(base);
    return numberKind(n) === 'decimal' || numberKind(b) === 'decimal' ? decimal(r) : new Double(r);
  };
}

function pow(args: Evaluator[]): Evaluator {
  const [baseArg, expArg] = args as [Evaluator, Evaluator];
  return (ctx) => {
    const b = baseArg(ctx);
    const e = expArg(ctx);
    if (isNullish(b) || isNullish(e)) return null;
    if (!isNumber(b)) fail(28762, `$pow's base must be numeric, not ${bsonTypeName(b)}`);
    if (!isNumber(e)) fail(28763, `$pow's exponent must be numeric, not ${bsonTypeName(e)}`);
    const base = toDecimalNumber(b);
    const exp = toDecimalNumber(e);
    if (base === 0 && exp < 0) fail(28764, '$pow cannot take a base of 0 and a negative exponent');
    const kb = numberKind(b);
    const ke = numberKind(e);
    if (kb === 'decimal' || ke === 'decimal') return decimal(Math.pow(base, exp));
    if (kb === 'double' || ke === 'double') return new Double(Math.pow(base, exp));
    const bothInt = kb === 'int' && ke === 'int';
    const bigBase = toBigIntExact(b)!;
    const bigExp = toBigIntExact(e)!;
    if (bigExp < 0n) {
      // Only 1 and -1 raised to a negative integer stay integral.
      if (bigBase === 1n) return integral(1n, bothInt);
      if (bigBase === -1n) return integral(bigExp % 2n === 0n ? 1n : -1n, bothInt);
      return new Double(Math.pow(base, exp));
    }
    if (Math.abs(base) > 1 && bigExp > 64n) return new Double(Math.pow(base, exp));
    return integral(bigBase ** bigExp, bothInt);
  };
}

function rounding(mode: RoundingMode) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const parsed = parseArgs(args, parser, name, 1, 2);
    const numberArg = parsed[0]!;
    const placeArg = parsed[1];
    return (ctx) => {
      const v = numberArg(ctx);
      const p = placeArg === undefined ? 0 : placeArg(ctx);
      if (isNullish(v) || isNullish(p)) return null;
      if (!isNumber(v)) fail(51081, `${name} only supports numeric types, not ${bsonTypeName(v)}`);
      if (!isNumber(p) || !Number.isInteger(toDouble(p))) fail(51082, `precision argument to ${name} must be a integral value`);
      const place = toDouble(p);
      if (place < -20 || place > 100) fail(51083, `cannot apply ${name} with precision value ${place} value must be in [-20, 100]`);
      return roundValue(v, place, mode);
    };
  };
}

function roundValue(v: unknown, place: number, mode: RoundingMode): unknown {
  const kind = numberKind(v);
  if (kind === 'decimal') {
    const text = roundDecimalText((v as Decimal128).toString(), place, mode);
    return text === undefined ? v : Decimal128.fromStringWithRounding(text);
  }
  if (kind === 'double') return new Double(roundDouble(toDouble(v), place, mode));
  if (place >= 0) return v;
  const text = roundDecimalText(toBigIntExact(v)!.toString(), place, mode)!;
  const [mantissa, exponent] = text.split('E') as [string, string];
  const r = BigInt(mantissa) * 10n ** BigInt(Number(exponent));
  return integral(r, kind === 'int');
}

export const arithmeticOperators: OperatorTable = {
  $add: (args, p) => add(parseVariadic(args, p)),
  $subtract: (args, p, name) => subtract(parseArgs(args, p, name, 2)),
  $multiply: (args, p) => multiply(parseVariadic(args, p)),
  $divide: (args, p, name) => divide(parseArgs(args, p, name, 2)),
  $mod: (args, p, name) => mod(parseArgs(args, p, name, 2)),
  $abs: (args, p, name) => unary(name, args, p, abs),
  $ceil: (args, p, name) => unary(name, args, p, integralUnchanged(Math.ceil)),
  $floor: (args, p, name) => unary(name, args, p, integralUnchanged(Math.floor)),
  $sqrt: (args, p, name) => unary(name, args, p, floating((x) => {
    if (x < 0) fail(28714, "$sqrt's argument must be greater than or equal to 0");
  }, Math.sqrt)),
  $exp: (args, p, name) => unary(name, args, p, floating(() => undefined, Math.exp)),
  $ln: (args, p, name) => unary(name, args, p, floating((x) => {
    if (x <= 0) fail(28766, `$ln's argument must be a positive number, but is ${String(x)}`);
  }, Math.log)),
  $log10: (args, p, name) => unary(name, args, p, floating((x) => {
    if (x <= 0) fail(28761, `$log10's argument must be a positive number, but is ${String(x)}`);
  }, Math.log10)),
  $log: (args, p, name) => log(parseArgs(args, p, name, 2)),
  $pow: (args, p, name) => pow(parseArgs(args, p, name, 2)),
  $round: rounding('halfEven'),
  $trunc: rounding('truncate'),
};
