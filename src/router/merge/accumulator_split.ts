import { bsonTag, isPlainObject, type Doc } from '../../bson/values.js';
import type { GroupSplit } from './group_split.js';

// A $group whose every field is $accumulator, split as MongoDB splits it: each shard runs the
// $group without finalize, so it emits each group's state, and the merging $group folds the
// shards' states of a group together with the user's merge, then finalizes. The merging $group is
// itself an $accumulator, built from the user's functions: its state starts as a marker no user
// state can be, which the first shard's state replaces; merge folds in the next ones. It runs
// JavaScript, so the router has the primary shard run it (commands/cluster_scripts.ts).
const NO_STATE = '\u0000docshard: no state yet';

export function splitAccumulatorGroup(spec: Doc): GroupSplit | undefined {
  const fields = Object.keys(spec).filter((name) => name !== '_id');
  if (fields.length === 0) return undefined;
  const shards: Doc = { _id: spec._id };
  const merge: Doc = { _id: '$_id' };
  for (const name of fields) {
    const entry = spec[name];
    if (!isPlainObject(entry) || !isPlainObject(entry.$accumulator)) return undefined;
    const { finalize, ...partial } = entry.$accumulator;
    const mergeFn = sourceOf(partial.merge);
    if (mergeFn === undefined) return undefined;
    shards[name] = { $accumulator: partial };
    merge[name] = {
      $accumulator: {
        init: `function() { return ${JSON.stringify(NO_STATE)}; }`,
        accumulate: `function(state, partial) { return state === ${JSON.stringify(NO_STATE)} ? partial : (${mergeFn}\n)(state, partial); }`,
        accumulateArgs: [`$${name}`],
        merge: partial.merge,
        ...(finalize === undefined ? {} : { finalize }),
        lang: 'js',
      },
    };
  }
  return { shards: { $group: shards }, merge: { $group: merge } };
}

// The merge function's source when it is a constant string or BSON code; undefined otherwise
// (the shards then refuse the specification themselves).
function sourceOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return bsonTag(value) === 'Code' ? (value as { code: string }).code : undefined;
}
