import { bsonTypeName, valuesEqual } from '../../bson/compare.js';
import { fail, isNullish, isTruthy, parseArgs, parseVariadic, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

// Set operators treat arrays as sets: duplicates collapse (by BSON equality) and the order of the
// result is unspecified; here it is the order of first appearance.

export function distinct(values: Iterable<unknown>): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((o) => valuesEqual(o, v))) out.push(v);
  return out;
}

function contains(set: unknown[], v: unknown): boolean {
  return set.some((e) => valuesEqual(e, v));
}

function parseUnion(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  return (ctx) => {
    const all: unknown[] = [];
    for (const item of items) {
      const v = item(ctx);
      if (isNullish(v)) return null;
      if (!Array.isArray(v)) fail(17043, `All operands of $setUnion must be arrays. One argument is of type: ${bsonTypeName(v)}`);
      all.push(...v);
    }
    return distinct(all);
  };
}

function parseIntersection(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  return (ctx) => {
    let result: unknown[] | undefined;
    let sawNull = false;
    for (const item of items) {
      const v = item(ctx);
      if (isNullish(v)) {
        sawNull = true;
        continue;
      }
      if (!Array.isArray(v)) fail(17047, `All operands of $setIntersection must be arrays. One argument is of type: ${bsonTypeName(v)}`);
      result = result === undefined ? distinct(v) : result.filter((e) => contains(v, e));
    }
    return sawNull ? null : result ?? [];
  };
}

function parseDifference(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [left, right] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
  return (ctx) => {
    const a = left(ctx);
    const b = right(ctx);
    if (isNullish(a) || isNullish(b)) return null;
    if (!Array.isArray(a)) fail(17048, `both operands of $setDifference must be arrays. First argument is of type: ${bsonTypeName(a)}`);
    if (!Array.isArray(b)) fail(17049, `both operands of $setDifference must be arrays. Second argument is of type: ${bsonTypeName(b)}`);
    return distinct(a).filter((e) => !contains(b, e));
  };
}

function parseEquals(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  if (items.length < 2) fail(17045, `$setEquals needs at least two arguments had: ${items.length}`);
  return (ctx) => {
    const sets = items.map((item) => {
      const v = item(ctx);
      if (!Array.isArray(v)) fail(17044, `All operands of $setEquals must be arrays. One argument is of type: ${bsonTypeName(v)}`);
      return distinct(v);
    });
    const first = sets[0]!;
    return sets.every((s) => s.length === first.length && s.every((e) => contains(first, e)));
  };
}

function parseIsSubset(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [left, right] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
  return (ctx) => {
    const a = left(ctx);
    const b = right(ctx);
    if (!Array.isArray(a)) fail(17046, `both operands of $setIsSubset must be arrays. First argument is of type: ${bsonTypeName(a)}`);
    if (!Array.isArray(b)) fail(17042, `both operands of $setIsSubset must be arrays. Second argument is of type: ${bsonTypeName(b)}`);
    return a.every((e) => contains(b, e));
  };
}

function parseElementsTrue(which: 'all' | 'any') {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
    return (ctx) => {
      const v = arg(ctx);
      if (!Array.isArray(v)) fail(which === 'all' ? 17040 : 17041, `${name}'s argument must be an array, but is ${bsonTypeName(v)}`);
      return which === 'all' ? v.every(isTruthy) : v.some(isTruthy);
    };
  };
}

export const setOperators: OperatorTable = {
  $setUnion: parseUnion,
  $setIntersection: parseIntersection,
  $setDifference: parseDifference,
  $setEquals: parseEquals,
  $setIsSubset: parseIsSubset,
  $allElementsTrue: parseElementsTrue('all'),
  $anyElementTrue: parseElementsTrue('any'),
};
