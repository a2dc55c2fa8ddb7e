import { isPlainObject, type Doc } from '../../bson/values.js';
import { parseAccumulator, type Accumulator, type AccumulatorState } from './accumulators.js';
import { groupKey } from './group_key.js';
import { fail } from './operator_support.js';
import { compileDocExpression, type DocEvaluator, type Stage, type StageEnv, type StageParser } from './stage_support.js';

export interface GroupSpec {
  id: DocEvaluator;
  fields: [string, Accumulator][];
}

export function parseGroupFields(spec: Doc, env: StageEnv, skip: string[]): [string, Accumulator][] {
  const fields: [string, Accumulator][] = [];
  for (const name of Object.keys(spec)) {
    if (skip.includes(name)) continue;
    if (name.startsWith('$')) fail(40236, `The field name '${name}' cannot be an operator name`);
    if (name.includes('.')) fail(40235, `The field name '${name}' cannot contain '.'`);
    const value = spec[name];
    if (!isPlainObject(value)) fail(40234, `The field '${name}' must be an accumulator object`);
    const keys = Object.keys(value);
    if (keys.length !== 1) fail(40238, `The field '${name}' must specify one accumulator`);
    fields.push([name, parseAccumulator(keys[0]!, value[keys[0]!], env)]);
  }
  return fields;
}

// Groups in order of first appearance; MongoDB leaves the order unspecified.
export function* runGroups(input: Iterable<Doc>, vars: Record<string, unknown>, spec: GroupSpec): Iterable<Doc> {
  const groups = new Map<string, { id: unknown; states: AccumulatorState[] }>();
  for (const doc of input) {
    let id = spec.id(doc, vars);
    if (id === undefined) id = null;
    const key = groupKey(id);
    let group = groups.get(key);
    if (group === undefined) {
      group = { id, states: spec.fields.map(([, acc]) => acc.create()) };
      groups.set(key, group);
    }
    for (const state of group.states) state.add(doc, vars);
  }
  for (const group of groups.values()) {
    const out: Doc = { _id: group.id };
    spec.fields.forEach(([name], i) => {
      out[name] = group.states[i]!.result();
    });
    yield out;
  }
}

export const parseGroup: StageParser = (spec, env): Stage => {
  if (!isPlainObject(spec)) fail(15947, "a group's fields must be specified in an object");
  if (!('_id' in spec)) fail(15955, 'a group specification must include an _id');
  const group: GroupSpec = { id: compileDocExpression(spec._id, env), fields: parseGroupFields(spec, env, ['_id']) };
  return (input, vars) => runGroups(input, vars, group);
};
