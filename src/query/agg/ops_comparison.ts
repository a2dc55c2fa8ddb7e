import { compareValues } from '../../bson/compare.js';
import { isPlainObject } from '../../bson/values.js';
import { fail, isNullish, isTruthy, parseArgs, parseVariadic, type Evaluator, type ExpressionParser, type OperatorTable } from './operator_support.js';

// Comparison, boolean and conditional operators. Aggregation compares with the full BSON order,
// so missing sorts below null and {$eq: ["$missing", null]} is false.

function comparison(test: (c: number) => boolean) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const [left, right] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
    return (ctx) => test(compareValues(left(ctx), right(ctx)));
  };
}

function parseCond(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  let parts: [Evaluator, Evaluator, Evaluator];
  if (isPlainObject(args)) {
    for (const key of Object.keys(args)) {
      if (key !== 'if' && key !== 'then' && key !== 'else') fail(17083, `Unrecognized parameter to $cond: ${key}`);
    }
    if (!('if' in args)) fail(17080, "Missing 'if' parameter to $cond");
    if (!('then' in args)) fail(17081, "Missing 'then' parameter to $cond");
    if (!('else' in args)) fail(17082, "Missing 'else' parameter to $cond");
    parts = [parser.parse(args.if), parser.parse(args.then), parser.parse(args.else)];
  } else {
    parts = parseArgs(args, parser, name, 3) as [Evaluator, Evaluator, Evaluator];
  }
  const [test, then, otherwise] = parts;
  return (ctx) => (isTruthy(test(ctx)) ? then(ctx) : otherwise(ctx));
}

function parseIfNull(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  if (items.length < 2) fail(1257300, '$ifNull needs at least two arguments, had: ' + items.length);
  return (ctx) => {
    for (let i = 0; i < items.length - 1; i++) {
      const v = items[i]!(ctx);
      if (!isNullish(v)) return v;
    }
    return items[items.length - 1]!(ctx);
  };
}

function parseSwitch(args: unknown, parser: ExpressionParser): Evaluator {
  if (!isPlainObject(args)) fail(40060, `$switch requires an object as an argument, found: ${typeof args}`);
  const branches: [Evaluator, Evaluator][] = [];
  let fallback: Evaluator | undefined;
  for (const key of Object.keys(args)) {
    if (key === 'branches') {
      const list = args.branches;
      if (!Array.isArray(list)) fail(40061, "$switch expected an array for 'branches'");
      for (const branch of list) {
        if (!isPlainObject(branch)) fail(40062, '$switch expected each branch to be an object');
        for (const k of Object.keys(branch)) {
          if (k !== 'case' && k !== 'then') fail(40063, `$switch found an unknown argument to a branch: ${k}`);
        }
        if (!('case' in branch)) fail(40064, "$switch requires each branch have a 'case' expression");
        if (!('then' in branch)) fail(40065, "$switch requires each branch have a 'then' expression.");
        branches.push([parser.parse(branch.case), parser.parse(branch.then)]);
      }
    } else if (key === 'default') {
      fallback = parser.parse(args.default);
    } else {
      fail(40067, `$switch found an unknown argument: ${key}`);
    }
  }
  if (branches.length === 0) fail(40068, '$switch requires at least one branch.');
  return (ctx) => {
    for (const [test, then] of branches) {
      if (isTruthy(test(ctx))) return then(ctx);
    }
    if (fallback === undefined) fail(40066, '$switch could not find a matching branch for an input, and no default was specified.');
    return fallback(ctx);
  };
}

export const comparisonOperators: OperatorTable = {
  $eq: comparison((c) => c === 0),
  $ne: comparison((c) => c !== 0),
  $gt: comparison((c) => c > 0),
  $gte: comparison((c) => c >= 0),
  $lt: comparison((c) => c < 0),
  $lte: comparison((c) => c <= 0),
  $cmp: (args, p, name) => {
    const [left, right] = parseArgs(args, p, name, 2) as [Evaluator, Evaluator];
    return (ctx) => {
      const c = compareValues(left(ctx), right(ctx));
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    };
  },
  $and: (args, p) => {
    const items = parseVariadic(args, p);
    return (ctx) => items.every((item) => isTruthy(item(ctx)));
  },
  $or: (args, p) => {
    const items = parseVariadic(args, p);
    return (ctx) => items.some((item) => isTruthy(item(ctx)));
  },
  $not: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => !isTruthy(arg(ctx));
  },
  $cond: parseCond,
  $ifNull: parseIfNull,
  $switch: parseSwitch,
};
