import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { codeText, ScriptFunction } from '../js/js_function.js';
import { checkScriptingEnabled } from '../js/script_settings.js';
import type { Accumulator } from './accumulators.js';
import { constantOf } from './constant.js';
import { fail } from './operator_support.js';
import { compileDocExpression, type StageEnv } from './stage_support.js';

// The accumulators that run JavaScript in the process's script isolate (src/query/js), with
// MongoDB 7.0's checks: $accumulator (init with initArgs once per group, accumulate with
// accumulateArgs per document, finalize at the end).
// 

function functionField(spec: Doc, field: string): ScriptFunction | undefined {
  if (!(field in spec)) return undefined;
  const constant = constantOf(spec[field]);
  if (constant === undefined) fail(4544701, `$accumulator '${field}' must be a constant expression`);
  const source = codeText(constant.value);
  if (source === undefined) fail(4544702, `$accumulator '${field}' must be a String or Code`);
  return new ScriptFunction(source);
}

const ACCUMULATE_BATCH = 256;

const ACCUMULATOR_FIELDS = new Set(['init', 'initArgs', 'accumulate', 'accumulateArgs', 'merge', 'finalize', 'lang']);

export function parseJsAccumulator(arg: unknown, env: StageEnv): Accumulator {
  if (!isPlainObject(arg)) fail(4544703, `$accumulator expects an object as an argument; found: ${bsonTypeName(arg)}`);
  for (const name of Object.keys(arg)) {
    if (!ACCUMULATOR_FIELDS.has(name)) fail(4544706, `$accumulator got an unexpected field: ${name}`);
  }
  if ('lang' in arg) {
    if (typeof arg.lang !== 'string') fail(4544704, `$accumulator lang must be a string; found: ${bsonTypeName(arg.lang)}`);
    if (arg.lang !== 'js') fail(4544705, "$accumulator only supports lang: 'js'");
  }
  const init = functionField(arg, 'init') ?? fail(4544707, "$accumulator missing required argument 'init'");
  const accumulate = functionField(arg, 'accumulate') ?? fail(4544708, "$accumulator missing required argument 'accumulate'");
  // merge combines partial states: a router splitting the $group makes the merging $accumulator
  // of the primary shard from its source (src/router/merge/accumulator_split.ts), so here it is
  // only checked.
  functionField(arg, 'merge') ?? fail(4544709, "$accumulator missing required argument 'merge'");
  const finalize = functionField(arg, 'finalize');
  const initArgs = compileDocExpression('initArgs' in arg ? arg.initArgs : { $literal: [] }, env);
  if (!('accumulateArgs' in arg)) fail(4544710, "$accumulator missing required argument 'accumulateArgs'");
  const accumulateArgs = compileDocExpression(arg.accumulateArgs, env);
  return {
    create() {
      let state: { value: unknown } | undefined;
      // Arguments of accumulate calls not made yet: they go to the isolate in batches, as MongoDB
      // sends them (reducePendingCalls).
      let pending: unknown[][] = [];
      const flush = (): void => {
        if (state === undefined || pending.length === 0) return;
        state.value = accumulate.accumulate(state.value, pending);
        pending = [];
      };
      return {
        add(doc, vars) {
          checkScriptingEnabled();
          if (state === undefined) {
            const initial = initArgs(doc, vars);
            if (!Array.isArray(initial)) fail(4544711, `$accumulator initArgs must evaluate to an array: ${JSON.stringify(initial)}`);
            state = { value: init.apply({}, initial) };
          }
          const input = accumulateArgs(doc, vars);
          if (!Array.isArray(input)) fail(4544712, `$accumulator accumulateArgs must evaluate to an array: ${JSON.stringify(input)}`);
          pending.push(input);
          if (pending.length === ACCUMULATE_BATCH) flush();
        },
        result() {
          if (state === undefined) return null;
          flush();
          return finalize === undefined ? state.value : finalize.apply({}, [state.value]);
        },
      };
    },
  };
}
