import { bsonTypeName, compareValues, valuesEqual } from '../../bson/compare.js';
import { Decimal128, Double, isNumber, isPlainObject, numberKind, numericAdd, toDouble, type Doc } from '../../bson/values.js';
import { sortArrayComparator } from './ops_array.js';
import { parseJsAccumulator } from './accumulators_script.js';
import { mergeInto } from './ops_object.js';
import { fail, isNullish } from './operator_support.js';
import { compileDocExpression, type DocEvaluator, type StageEnv } from './stage_support.js';

// $group's accumulators. Each group gets fresh state from `create`; `add` sees every document of
// the group in input order.

export interface AccumulatorState {
  add(doc: Doc, vars: Record<string, unknown>): void;
  result(): unknown;
}

export interface Accumulator {
  create(): AccumulatorState;
}

type Factory = (arg: unknown, env: StageEnv, name: string) => Accumulator;

// Accumulators over one evaluated input value per document.
function valued(makeState: () => { add(v: unknown): void; result(): unknown }): Factory {
  return (arg, env) => {
    const input = compileDocExpression(arg, env);
    return {
      create() {
        const state = makeState();
        return { add: (doc, vars) => state.add(input(doc, vars)), result: () => state.result() };
      },
    };
  };
}

function sumState() {
  let total: unknown = 0;
  return {
    add(v: unknown) {
      if (isNumber(v)) total = numericAdd(total, v);
    },
    result: () => total,
  };
}

function avgState() {
  let total: unknown = 0;
  let count = 0;
  return {
    add(v: unknown) {
      if (!isNumber(v)) return;
      total = numericAdd(total, v);
      count++;
    },
    result: () => averageOf(total, count),
  };
}

// Exported for the router, which finishes $avg from per-shard sums and counts.
export function averageOf(total: unknown, count: number): unknown {
  if (count === 0) return null;
  if (numberKind(total) === 'decimal') return Decimal128.fromStringWithRounding(String(toDouble(total) / count));
  return new Double(toDouble(total) / count);
}

function extremeState(sign: 1 | -1) {
  let best: unknown;
  return {
    add(v: unknown) {
      if (isNullish(v)) return;
      if (best === undefined || sign * compareValues(v, best) > 0) best = v;
    },
    result: () => (best === undefined ? null : best),
  };
}

function stdDevState(sample: boolean) {
  let count = 0;
  let mean = 0;
  let m2 = 0;
  return {
    add(v: unknown) {
      if (!isNumber(v)) return;
      const x = toDouble(v);
      count++;
      const delta = x - mean;
      mean += delta / count;
      m2 += delta * (x - mean);
    },
    result() {
      const n = sample ? count - 1 : count;
      if (n <= 0) return null;
      return new Double(Math.sqrt(m2 / n));
    },
  };
}

function nArgument(spec: Doc, env: StageEnv): DocEvaluator {
  return compileDocExpression(spec.n, env);
}

function checkN(v: unknown): number {
  if (!isNumber(v) || !Number.isInteger(toDouble(v))) fail(5787902, `Value for 'n' must be of integral type, but found ${String(v)}`);
  const n = toDouble(v);
  if (n <= 0) fail(5787908, `'n' must be greater than 0, found ${n}`);
  return n;
}

function namedSpec(arg: unknown, name: string, allowed: string[]): Doc {
  if (!isPlainObject(arg)) fail(5787801, `specification must be an object; found ${bsonTypeName(arg)}`);
  for (const key of Object.keys(arg)) {
    if (!allowed.includes(key)) fail(5787901, `Unknown argument for '${name}' accumulator: ${key}`);
  }
  for (const key of allowed) {
    if (!(key in arg)) fail(5787906, `Missing value for '${key}'`);
  }
  return arg;
}

// $firstN, $lastN, $maxN, $minN: {input, n}.
function nAccumulator(kind: 'first' | 'last' | 'max' | 'min'): Factory {
  return (arg, env, name) => {
    const spec = namedSpec(arg, name, ['input', 'n']);
    const input = compileDocExpression(spec.input, env);
    const nArg = nArgument(spec, env);
    return {
      create() {
        let n: number | undefined;
        let values: unknown[] = [];
        return {
          add(doc, vars) {
            n ??= checkN(nArg(doc, vars));
            const v = input(doc, vars);
            if (kind === 'first' || kind === 'last') {
              values.push(v === undefined ? null : v);
              if (kind === 'last' && values.length > n) values.shift();
              else if (kind === 'first' && values.length > n) values.pop();
            } else if (!isNullish(v)) {
              values.push(v);
              const dir = kind === 'max' ? -1 : 1;
              values.sort((a, b) => dir * compareValues(a, b));
              if (values.length > n) values = values.slice(0, n);
            }
          },
          result: () => values,
        };
      },
    };
  };
}

// $top, $bottom, $topN, $bottomN: {sortBy, output[, n]}.
function sortedAccumulator(which: 'top' | 'bottom', many: boolean): Factory {
  return (arg, env, name) => {
    const spec = namedSpec(arg, name, many ? ['n', 'output', 'sortBy'] : ['output', 'sortBy']);
    if (!isPlainObject(spec.sortBy)) fail(5788604, `${name} requires 'sortBy' to be an object`);
    const output = compileDocExpression(spec.output, env);
    const byKeys = sortArrayComparator(spec.sortBy);
    const compare = which === 'top' ? byKeys : (a: unknown, b: unknown) => -byKeys(a, b);
    const nArg = many ? nArgument(spec, env) : undefined;
    return {
      create() {
        let n: number | undefined;
        let entries: { doc: Doc; value: unknown }[] = [];
        return {
          add(doc, vars) {
            n ??= nArg === undefined ? 1 : checkN(nArg(doc, vars));
            const v = output(doc, vars);
            entries.push({ doc, value: v === undefined ? null : v });
            entries.sort((a, b) => compare(a.doc, b.doc));
            if (entries.length > n) entries = entries.slice(0, n);
          },
          result() {
            if (!many) return entries[0]?.value ?? null;
            // Kept best-first; $bottomN still reports its documents in sortBy order.
            const values = entries.map((e) => e.value);
            return which === 'top' ? values : values.reverse();
          },
        };
      },
    };
  };
}

const factories: Record<string, Factory> = {
  $sum: valued(sumState),
  $avg: valued(avgState),
  $min: valued(() => extremeState(-1)),
  $max: valued(() => extremeState(1)),
  $first: valued(() => {
    let seen = false;
    let first: unknown = null;
    return {
      add(v: unknown) {
        if (seen) return;
        seen = true;
        first = v === undefined ? null : v;
      },
      result: () => first,
    };
  }),
  $last: valued(() => {
    let last: unknown = null;
    return {
      add(v: unknown) {
        last = v === undefined ? null : v;
      },
      result: () => last,
    };
  }),
  $push: valued(() => {
    const values: unknown[] = [];
    return {
      add(v: unknown) {
        if (v !== undefined) values.push(v);
      },
      result: () => values,
    };
  }),
  $addToSet: valued(() => {
    const values: unknown[] = [];
    return {
      add(v: unknown) {
        if (v !== undefined && !values.some((e) => valuesEqual(e, v))) values.push(v);
      },
      result: () => values,
    };
  }),
  $mergeObjects: valued(() => {
    const out: Doc = {};
    let i = 0;
    return {
      add(v: unknown) {
        mergeInto(out, v, i++);
      },
      result: () => out,
    };
  }),
  $stdDevPop: valued(() => stdDevState(false)),
  $stdDevSamp: valued(() => stdDevState(true)),
  $count: (arg, env, name) => {
    if (!isPlainObject(arg) || Object.keys(arg).length !== 0) fail(5727800, `${name} takes no arguments, i.e. ${name}:{}`);
    return valued(sumState)(1, env, '$sum');
  },
  $firstN: nAccumulator('first'),
  $lastN: nAccumulator('last'),
  $maxN: nAccumulator('max'),
  $minN: nAccumulator('min'),
  $top: sortedAccumulator('top', false),
  $bottom: sortedAccumulator('bottom', false),
  $topN: sortedAccumulator('top', true),
  $bottomN: sortedAccumulator('bottom', true),
  $accumulator: (arg, env) => parseJsAccumulator(arg, env),
};

const UNARY = new Set(['$sum', '$avg', '$min', '$max', '$first', '$last', '$push', '$addToSet', '$mergeObjects', '$stdDevPop', '$stdDevSamp']);

export function parseAccumulator(name: string, arg: unknown, env: StageEnv): Accumulator {
  const factory = Object.prototype.hasOwnProperty.call(factories, name) ? factories[name] : undefined;
  if (factory === undefined) fail(15952, `Unknown group operator '${name}'`);
  if (Array.isArray(arg) && UNARY.has(name)) {
    fail(40237, `The ${name} accumulator is a unary operator`);
  }
  return factory(arg, env, name);
}
