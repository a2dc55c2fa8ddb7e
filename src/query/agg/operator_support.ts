import { MongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { bsonTag, isNumber, toDouble, type Decimal128, type Doc } from '../../bson/values.js';

// What a compiled expression sees while it runs: the document the pipeline started from ($$ROOT)
// and every variable in scope, CURRENT included (field paths read from $$CURRENT).
export interface EvalContext {
  root: Doc;
  vars: Record<string, unknown>;
}

export type Evaluator = (ctx: EvalContext) => unknown;

// Compiles sub-expressions on behalf of an operator; `withVariables` opens a scope in which more
// user variables may be referenced ($let, $map, $filter, $reduce).
export interface ExpressionParser {
  parse(expr: unknown): Evaluator;
  withVariables(names: string[]): ExpressionParser;
}

export type OperatorParser = (args: unknown, parser: ExpressionParser, name: string) => Evaluator;

export type OperatorTable = Record<string, OperatorParser>;

export function fail(code: number, message: string): never {
  throw new MongoError(code, message);
}

// MongoDB lets an operator with one argument drop the array: {$abs: "$x"} is {$abs: ["$x"]}.
export function argList(args: unknown): unknown[] {
  return Array.isArray(args) ? args : [args];
}

export function parseArgs(args: unknown, parser: ExpressionParser, name: string, min: number, max = min): Evaluator[] {
  const list = argList(args);
  if (list.length < min || list.length > max) {
    if (min === max) fail(16020, `Expression ${name} takes exactly ${min} arguments. ${list.length} were passed in.`);
    if (list.length < min) fail(16020, `Expression ${name} takes at least ${min} arguments, and at most ${max}. ${list.length} were passed in.`);
    fail(16020, `Expression ${name} takes at most ${max} arguments, and at least ${min}. ${list.length} were passed in.`);
  }
  return list.map((a) => parser.parse(a));
}

export function parseVariadic(args: unknown, parser: ExpressionParser): Evaluator[] {
  return argList(args).map((a) => parser.parse(a));
}

export function isNullish(v: unknown): boolean {
  return v === null || v === undefined;
}

// Value::coerceToBool: only false, null, missing and numeric zero are false (NaN is true).
export function isTruthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (isNumber(v)) {
    if (bsonTag(v) === 'Decimal128') return Number((v as Decimal128).toString()) !== 0;
    return toDouble(v) !== 0;
  }
  return true;
}

// An argument that must be an integral number representable as an int (e.g. $arrayElemAt's index).
export function toIntArg(v: unknown, onNotNumber: () => never, onNotIntegral: () => never): number {
  if (!isNumber(v)) onNotNumber();
  const d = toDouble(v);
  if (!Number.isInteger(d) || d < -2147483648 || d > 2147483647) onNotIntegral();
  return d;
}

// MongoDB's Value::coerceToString, used by the string operators that accept non-strings.
export function coerceToString(v: unknown, opName: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (isNumber(v)) return numberToString(v);
  if (v instanceof Date) return formatIsoDate(v);
  const tag = bsonTag(v);
  if (tag === 'BSONSymbol') return String((v as { value: string }).value);
  if (tag === 'Code') return String((v as { code: string }).code);
  if (tag === 'Timestamp') {
    const ts = v as { t: number; i: number };
    return `Timestamp(${ts.t}, ${ts.i})`;
  }
  return fail(16007, `${opName}: can't convert from BSON type ${bsonTypeName(v)} to String`);
}

export function numberToString(v: unknown): string {
  const tag = bsonTag(v);
  if (tag === 'Long' || tag === 'Decimal128') return (v as { toString(): string }).toString();
  const d = toDouble(v);
  if (Number.isNaN(d)) return 'NaN';
  if (d === Infinity) return 'Infinity';
  if (d === -Infinity) return '-Infinity';
  if (Object.is(d, -0)) return '-0';
  return String(d);
}

export function formatIsoDate(d: Date): string {
  const t = d.getTime();
  if (Number.isNaN(t)) return 'invalid date';
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) return String(t);
  return d.toISOString();
}
