import { compareValues } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { groupKey } from '../agg/group_key.js';
import { ScriptContext, toScriptText } from './js_engine.js';
import { ScriptFunction } from './js_function.js';

// mapReduce's JavaScript, over documents already read (query, sort and limit applied): map emits
// (key, value) pairs, reduce folds the values of a key (called only for a key with more than one,
// as MongoDB does, and again over values already reduced), finalize shapes each key's last value.
// One context of the script isolate per run, whose globals are the command's `scope`.
export interface MapReduceScripts {
  map: string;
  reduce: string;
  finalize?: string;
  scope?: Doc;
}

// Documents handed to map per call into the isolate: each call costs a round trip to the script
// host, which batches amortize.
const MAP_BATCH = 256;

// The results as {_id: key, value}, ordered by key. `finalize: false` leaves them unfinalized, for
// a reduce that is not the last (a shard's part behind a router, whose outputs are reduced again).
export function runMapReduce(scripts: MapReduceScripts, docs: Iterable<Doc>, options: { finalize: boolean }): Doc[] {
  return withScripts(scripts, (fns) => {
    const groups = new Map<string, { key: unknown; values: unknown[] }>();
    let batch: Doc[] = [];
    const mapBatch = (): void => {
      for (const { k, v } of fns.map.map(batch)) add(groups, k, v);
      batch = [];
    };
    for (const doc of docs) {
      batch.push(doc);
      if (batch.length === MAP_BATCH) mapBatch();
    }
    if (batch.length > 0) mapBatch();
    return finish(groups, fns, options.finalize);
  });
}

// Reduces again results of earlier runs ({_id, value} each) that share keys, then finalizes: the
// last step of a mapReduce whose map ran on several shards, and of an output in `reduce` mode
// (what the collection held and what the run produced).
export function reduceResults(scripts: MapReduceScripts, results: Iterable<Doc>): Doc[] {
  return withScripts(scripts, (fns) => {
    const groups = new Map<string, { key: unknown; values: unknown[] }>();
    for (const r of results) add(groups, r._id, r.value);
    return finish(groups, fns, true);
  });
}

interface Functions {
  map: ScriptFunction;
  reduce: ScriptFunction;
  finalize?: ScriptFunction;
}

function withScripts<T>(scripts: MapReduceScripts, run: (fns: Functions) => T): T {
  const context = new ScriptContext();
  try {
    if (scripts.scope !== undefined) context.call('__setScope', [toScriptText(scripts.scope)]);
    const own = (): ScriptContext => context;
    return run({
      map: new ScriptFunction(scripts.map, own),
      reduce: new ScriptFunction(scripts.reduce, own),
      ...(scripts.finalize === undefined ? {} : { finalize: new ScriptFunction(scripts.finalize, own) }),
    });
  } finally {
    context.release();
  }
}

function add(groups: Map<string, { key: unknown; values: unknown[] }>, key: unknown, value: unknown): void {
  const k = key === undefined ? null : key;
  const id = groupKey(k);
  let group = groups.get(id);
  if (group === undefined) {
    group = { key: k, values: [] };
    groups.set(id, group);
  }
  group.values.push(value === undefined ? null : value);
}

function finish(groups: Map<string, { key: unknown; values: unknown[] }>, fns: Functions, finalize: boolean): Doc[] {
  const out: Doc[] = [];
  for (const { key, values } of groups.values()) {
    let value = values.length === 1 ? values[0] : fns.reduce.apply({}, [key, values]);
    if (finalize && fns.finalize !== undefined) value = fns.finalize.apply({}, [key, value]);
    out.push({ _id: key, value });
  }
  return out.sort((a, b) => compareValues(a._id, b._id));
}
