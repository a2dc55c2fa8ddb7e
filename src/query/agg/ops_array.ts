import { bsonTypeName, compareValues, valuesEqual } from '../../bson/compare.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { getPath } from '../path.js';
import {
  fail, isNullish, isTruthy, parseArgs, parseVariadic, toIntArg, type EvalContext, type Evaluator, type ExpressionParser, type OperatorTable,
} from './operator_support.js';

function describe(v: unknown): string {
  return bsonTypeName(v);
}

function unaryArray(code: number, message: (v: unknown) => string, apply: (a: unknown[]) => unknown, nullResult: (v: unknown) => unknown = () => null) {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
    return (ctx) => {
      const v = arg(ctx);
      if (isNullish(v)) return nullResult(v);
      if (!Array.isArray(v)) fail(code, message(v));
      return apply(v);
    };
  };
}

function parseArrayElemAt(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [arrayArg, indexArg] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
  return (ctx) => {
    const array = arrayArg(ctx);
    const index = indexArg(ctx);
    if (isNullish(array) || isNullish(index)) return null;
    if (!Array.isArray(array)) fail(28689, `$arrayElemAt's first argument must be an array, but is ${describe(array)}`);
    const i = toIntArg(
      index,
      () => fail(28690, `$arrayElemAt's second argument must be a numeric value, but is ${describe(index)}`),
      () => fail(28691, `$arrayElemAt's second argument must be representable as a 32-bit integer: ${toDouble(index)}`),
    );
    const at = i < 0 ? array.length + i : i;
    return at >= 0 && at < array.length ? array[at] : undefined;
  };
}

function firstOrLast(which: 'first' | 'last') {
  return unaryArray(
    28689,
    (v) => `$${which}'s argument must be an array, but is ${describe(v)}`,
    (a) => (which === 'first' ? a[0] : a[a.length - 1]),
    (v) => v,
  );
}

function parseConcatArrays(args: unknown, parser: ExpressionParser): Evaluator {
  const items = parseVariadic(args, parser);
  return (ctx) => {
    const out: unknown[] = [];
    for (const item of items) {
      const v = item(ctx);
      if (isNullish(v)) return null;
      if (!Array.isArray(v)) fail(28664, `$concatArrays only supports arrays, not ${describe(v)}`);
      out.push(...v);
    }
    return out;
  };
}

function checkVariableName(name: unknown, code: number): string {
  if (typeof name !== 'string' || name === '' || !/^[a-z\u0080-\uffff]/.test(name)) {
    fail(code, `'${String(name)}' starts with an invalid character for a user variable name`);
  }
  return name;
}

function withVar(ctx: EvalContext, vars: Record<string, unknown>): EvalContext {
  return { root: ctx.root, vars: { ...ctx.vars, ...vars } };
}

function objectArgs(args: unknown, name: string, allowed: string[], required: string[], codes: [number, number, number]): Doc {
  if (!isPlainObject(args)) fail(codes[0], `${name} only supports an object as its argument`);
  for (const key of Object.keys(args)) {
    if (!allowed.includes(key)) fail(codes[1], `Unrecognized parameter to ${name}: ${key}`);
  }
  for (const key of required) {
    if (!(key in args)) fail(codes[2], `Missing '${key}' parameter to ${name}`);
  }
  return args;
}

function parseFilter(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectArgs(args, name, ['input', 'as', 'cond', 'limit'], ['input', 'cond'], [28646, 28647, 28648]);
  const as = 'as' in spec ? checkVariableName(spec.as, 28649) : 'this';
  const input = parser.parse(spec.input);
  const cond = parser.withVariables([as]).parse(spec.cond);
  const limitArg = 'limit' in spec ? parser.parse(spec.limit) : undefined;
  return (ctx) => {
    const array = input(ctx);
    let limit = Infinity;
    if (limitArg !== undefined) {
      const l = limitArg(ctx);
      if (!isNullish(l)) {
        if (!isNumber(l) || !Number.isInteger(toDouble(l))) fail(327391, `$filter: limit must be represented as a 32-bit integral value: ${String(l)}`);
        if (toDouble(l) < 1) fail(327392, `$filter: limit must be greater than 0: ${toDouble(l)}`);
        limit = toDouble(l);
      }
    }
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(28651, `input to $filter must be an array not ${describe(array)}`);
    const out: unknown[] = [];
    for (const element of array) {
      if (out.length >= limit) break;
      if (isTruthy(cond(withVar(ctx, { [as]: element })))) out.push(element);
    }
    return out;
  };
}

function parseMap(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectArgs(args, name, ['input', 'as', 'in'], ['input', 'in'], [16878, 16879, 16882]);
  const as = 'as' in spec ? checkVariableName(spec.as, 16866) : 'this';
  const input = parser.parse(spec.input);
  const body = parser.withVariables([as]).parse(spec.in);
  return (ctx) => {
    const array = input(ctx);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(16883, `input to $map must be an array not ${describe(array)}`);
    return array.map((element) => {
      const v = body(withVar(ctx, { [as]: element }));
      return v === undefined ? null : v;
    });
  };
}

function parseReduce(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectArgs(args, name, ['input', 'initialValue', 'in'], ['input', 'initialValue', 'in'], [40075, 40076, 40077]);
  const input = parser.parse(spec.input);
  const initial = parser.parse(spec.initialValue);
  const body = parser.withVariables(['this', 'value']).parse(spec.in);
  return (ctx) => {
    const array = input(ctx);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(40080, `$reduce requires that 'input' be an array, found: ${describe(array)}`);
    let value = initial(ctx);
    for (const element of array) value = body(withVar(ctx, { this: element, value }));
    return value;
  };
}

function parseIn(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [needle, haystack] = parseArgs(args, parser, name, 2) as [Evaluator, Evaluator];
  return (ctx) => {
    const v = needle(ctx);
    const array = haystack(ctx);
    if (!Array.isArray(array)) fail(40081, `$in requires an array as a second argument, found: ${describe(array)}`);
    return array.some((e) => valuesEqual(e, v));
  };
}

function parseIndexOfArray(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const parsed = parseArgs(args, parser, name, 2, 4);
  return (ctx) => {
    const array = parsed[0]!(ctx);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(40090, `$indexOfArray requires an array as a first argument, found: ${describe(array)}`);
    const search = parsed[1]!(ctx);
    const bound = (i: number, what: string): number => {
      const v = parsed[i]!(ctx);
      if (!isNumber(v) || !Number.isInteger(toDouble(v))) fail(40096, `$indexOfArray requires an integral ${what}, found a value of type: ${describe(v)}`);
      if (toDouble(v) < 0) fail(40097, `$indexOfArray requires a nonnegative ${what}, found: ${toDouble(v)}`);
      return toDouble(v);
    };
    const start = parsed.length > 2 ? bound(2, 'starting index') : 0;
    const end = Math.min(parsed.length > 3 ? bound(3, 'ending index') : array.length, array.length);
    for (let i = start; i < end; i++) if (valuesEqual(array[i], search)) return i;
    return -1;
  };
}

function parseRange(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const parsed = parseArgs(args, parser, name, 2, 3);
  return (ctx) => {
    const int = (i: number, what: string, typeCode: number, intCode: number): number => {
      const v = parsed[i]!(ctx);
      return toIntArg(
        v,
        () => fail(typeCode, `$range requires a numeric ${what}, found value of type: ${describe(v)}`),
        () => fail(intCode, `$range requires a ${what} that can be represented as a 32-bit integer, found value: ${toDouble(v)}`),
      );
    };
    const start = int(0, 'starting value', 34443, 34444);
    const end = int(1, 'ending value', 34445, 34446);
    const step = parsed.length > 2 ? int(2, 'step value', 34447, 34448) : 1;
    if (step === 0) fail(34449, '$range requires a non-zero step value');
    const out: number[] = [];
    for (let i = start; step > 0 ? i < end : i > end; i += step) out.push(i);
    return out;
  };
}

function parseSlice(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const parsed = parseArgs(args, parser, name, 2, 3);
  return (ctx) => {
    const values = parsed.map((e) => e(ctx));
    if (values.some(isNullish)) return null;
    const array = values[0];
    if (!Array.isArray(array)) fail(28724, `First argument to $slice must be an array, but is of type: ${describe(array)}`);
    const int = (v: unknown, ordinal: string): number =>
      toIntArg(
        v,
        () => fail(28725, `${ordinal} argument to $slice must be numeric, but is of type: ${describe(v)}`),
        () => fail(28726, `${ordinal} argument to $slice can't be represented as a 32-bit integer: ${toDouble(v)}`),
      );
    if (values.length === 2) {
      const n = int(values[1], 'Second');
      return n >= 0 ? array.slice(0, n) : array.slice(Math.max(array.length + n, 0));
    }
    const position = int(values[1], 'Second');
    const count = int(values[2], 'Third');
    if (count <= 0) fail(28729, `Third argument to $slice must be positive: ${count}`);
    const start = position >= 0 ? Math.min(position, array.length) : Math.max(array.length + position, 0);
    return array.slice(start, start + count);
  };
}

function parseZip(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectArgs(args, name, ['inputs', 'useLongestLength', 'defaults'], ['inputs'], [34460, 34464, 34465]);
  if (!Array.isArray(spec.inputs)) fail(34461, `inputs must be an array of expressions, found ${describe(spec.inputs)}`);
  const inputs = spec.inputs.map((e) => parser.parse(e));
  const longest = spec.useLongestLength === true;
  if ('useLongestLength' in spec && typeof spec.useLongestLength !== 'boolean') fail(34463, 'useLongestLength must be a bool');
  let defaults: Evaluator[] | undefined;
  if ('defaults' in spec) {
    if (!Array.isArray(spec.defaults)) fail(34462, 'defaults must be an array of expressions');
    if (!longest) fail(34466, 'cannot specify defaults unless useLongestLength is true');
    if (spec.defaults.length !== inputs.length) fail(34467, 'defaults and inputs must have the same length');
    defaults = spec.defaults.map((e) => parser.parse(e));
  }
  return (ctx) => {
    const arrays: unknown[][] = [];
    for (const input of inputs) {
      const v = input(ctx);
      if (isNullish(v)) return null;
      if (!Array.isArray(v)) fail(34468, `$zip found a non-array expression in input: ${describe(v)}`);
      arrays.push(v);
    }
    const fill = defaults?.map((d) => d(ctx)) ?? arrays.map(() => null);
    const lengths = arrays.map((a) => a.length);
    const n = arrays.length === 0 ? 0 : longest ? Math.max(...lengths) : Math.min(...lengths);
    const out: unknown[][] = [];
    for (let i = 0; i < n; i++) out.push(arrays.map((a, j) => (i < a.length ? a[i] : fill[j])));
    return out;
  };
}

export function sortArrayComparator(sortBy: unknown): (a: unknown, b: unknown) => number {
  if (isNumber(sortBy) && (toDouble(sortBy) === 1 || toDouble(sortBy) === -1)) {
    const dir = toDouble(sortBy);
    return (a, b) => dir * compareValues(a, b);
  }
  if (!isPlainObject(sortBy) || Object.keys(sortBy).length === 0) fail(2942505, '$sortArray requires sortBy to be either 1, -1 or an object');
  const keys = Object.entries(sortBy).map(([path, dir]) => {
    if (!isNumber(dir) || (toDouble(dir) !== 1 && toDouble(dir) !== -1)) fail(15975, '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    return [path, toDouble(dir)] as const;
  });
  return (a, b) => {
    for (const [path, dir] of keys) {
      const c = compareValues(getPath(a, path), getPath(b, path));
      if (c !== 0) return dir * c;
    }
    return 0;
  };
}

function parseSortArray(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const spec = objectArgs(args, name, ['input', 'sortBy'], ['input', 'sortBy'], [2942500, 2942501, 2942502]);
  const input = parser.parse(spec.input);
  const comparator = sortArrayComparator(spec.sortBy);
  return (ctx) => {
    const array = input(ctx);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(2942504, `The input argument to $sortArray must be an array, but was of type: ${describe(array)}`);
    return [...array].sort(comparator);
  };
}

function parseArrayToObject(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
  return (ctx) => {
    const array = arg(ctx);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) fail(40386, `$arrayToObject requires an array input, found: ${describe(array)}`);
    const out: Doc = {};
    if (array.length === 0) return out;
    const pairs = Array.isArray(array[0]);
    for (const element of array) {
      let key: unknown;
      let value: unknown;
      if (pairs) {
        if (!Array.isArray(element)) fail(40391, `$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Array was detected, now found: ${describe(element)}`);
        if (element.length !== 2) fail(40397, `$arrayToObject requires an array of size 2 arrays,found array of size: ${element.length}`);
        [key, value] = element;
        if (typeof key !== 'string') fail(40395, `$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: ${describe(key)}`);
      } else {
        if (!isPlainObject(element)) fail(40391, `$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Object was detected, now found: ${describe(element)}`);
        const keys = Object.keys(element);
        if (keys.length !== 2 || !('k' in element) || !('v' in element)) {
          fail(40392, `$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:${keys.length}`);
        }
        key = element.k;
        value = element.v;
        if (typeof key !== 'string') fail(40394, `$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: ${describe(key)}`);
      }
      if ((key as string).includes('\0')) fail(4940400, "Key field cannot contain an embedded null byte");
      out[key as string] = value;
    }
    return out;
  };
}

function parseObjectToArray(args: unknown, parser: ExpressionParser, name: string): Evaluator {
  const [arg] = parseArgs(args, parser, name, 1) as [Evaluator];
  return (ctx) => {
    const obj = arg(ctx);
    if (isNullish(obj)) return null;
    if (!isPlainObject(obj)) fail(40390, `$objectToArray requires a document input, found: ${describe(obj)}`);
    return Object.keys(obj).filter((k) => obj[k] !== undefined).map((k) => ({ k, v: obj[k] }));
  };
}

// The expression forms of $maxN, $minN, $firstN and $lastN: {n, input}.
function parseNOperator(kind: 'max' | 'min' | 'first' | 'last') {
  return (args: unknown, parser: ExpressionParser, name: string): Evaluator => {
    const spec = objectArgs(args, name, ['n', 'input'], ['n', 'input'], [5787900, 5787901, 5787906]);
    const nArg = parser.parse(spec.n);
    const input = parser.parse(spec.input);
    return (ctx) => {
      const nValue = nArg(ctx);
      if (!isNumber(nValue) || !Number.isInteger(toDouble(nValue))) fail(5787902, `Value for 'n' must be of integral type, but found ${String(nValue)}`);
      const n = toDouble(nValue);
      if (n < 1) fail(5787908, `'n' must be greater than 0, found ${n}`);
      const array = input(ctx);
      if (isNullish(array)) return null;
      if (!Array.isArray(array)) fail(5788200, `Input must be an array, but found ${describe(array)}`);
      if (kind === 'first') return array.slice(0, n);
      if (kind === 'last') return array.slice(Math.max(array.length - n, 0));
      const present = array.filter((v) => !isNullish(v));
      const dir = kind === 'max' ? -1 : 1;
      return present.sort((a, b) => dir * compareValues(a, b)).slice(0, n);
    };
  };
}

export const arrayOperators: OperatorTable = {
  $size: unaryArray(
    17124,
    (v) => `The argument to $size must be an array. Type of argument is ${describe(v)}`,
    (a) => a.length,
    (v) => fail(17124, `The argument to $size must be an array. Type of argument is ${v === null ? 'null' : 'missing'}`),
  ),
  $arrayElemAt: parseArrayElemAt,
  $first: firstOrLast('first'),
  $last: firstOrLast('last'),
  $concatArrays: parseConcatArrays,
  $filter: parseFilter,
  $map: parseMap,
  $reduce: parseReduce,
  $in: parseIn,
  $indexOfArray: parseIndexOfArray,
  $isArray: (args, p, name) => {
    const [arg] = parseArgs(args, p, name, 1) as [Evaluator];
    return (ctx) => Array.isArray(arg(ctx));
  },
  $range: parseRange,
  $reverseArray: unaryArray(34435, (v) => `The argument to $reverseArray must be an array, but was of type: ${describe(v)}`, (a) => [...a].reverse()),
  $slice: parseSlice,
  $zip: parseZip,
  $sortArray: parseSortArray,
  $arrayToObject: parseArrayToObject,
  $objectToArray: parseObjectToArray,
  $maxN: parseNOperator('max'),
  $minN: parseNOperator('min'),
  $firstN: parseNOperator('first'),
  $lastN: parseNOperator('last'),
};
