import { assert } from '../../base/errors.js';
import { compareValues, valuesEqual } from '../../bson/compare.js';
import { isNumber, isPlainObject, numericAdd, toDouble, Double, type Doc } from '../../bson/values.js';
import { averageOf } from '../../query/agg/accumulators.js';
import { groupKey } from '../../query/agg/group_key.js';
import { mergeInto } from '../../query/agg/ops_object.js';

// $group split into a partial $group on every shard and a merge on the router (MongoDB's
// DocumentSourceGroup distributedPlanLogic). Shards run an ordinary $group, built only from
// accumulators they already have, that emits one partial document per group and shard:
//   {_id, p0: <state of field 0>, p1_sum: ..., p1_n: ...}
// and the router runs `$_internalMergeGroup`, which names for each output field how to combine
// the partial fields:
//   {$_internalMergeGroup: {total: {$sum: ['p0']}, mean: {$avg: ['p1_sum', 'p1_n']}}}
// Partial states per accumulator:
//   $sum, $count        -> the shard's sum; summed
//   $avg                -> sum and count of numeric inputs; averaged from the totals
//   $min, $max          -> the shard's extreme; extreme of extremes (nulls ignored)
//   $first, $last       -> the shard's first/last; first/last in arrival order
//   $push, $addToSet    -> the shard's array; concatenated / united
//   $mergeObjects       -> the shard's object; merged in arrival order
//   $stdDevPop/Samp     -> count, mean and population deviation of numeric inputs; combined
//                          with Chan et al.'s parallel variance formula
// Any other accumulator ($topN, $firstN, ...) keeps the whole $group on the router.

export const MERGE_GROUP = '$_internalMergeGroup';

export interface GroupSplit {
  shards: Doc;
  merge: Doc;
}

type PartialFields = (arg: unknown, field: (part?: string) => string) => Doc;

const isNumeric = (arg: unknown): Doc => ({ $cond: [{ $isNumber: arg }, 1, 0] });

const partials: Record<string, PartialFields> = {
  $sum: (arg, f) => ({ [f()]: { $sum: arg } }),
  $count: (_arg, f) => ({ [f()]: { $sum: 1 } }),
  $avg: (arg, f) => ({ [f('sum')]: { $sum: arg }, [f('n')]: { $sum: isNumeric(arg) } }),
  $min: (arg, f) => ({ [f()]: { $min: arg } }),
  $max: (arg, f) => ({ [f()]: { $max: arg } }),
  $first: (arg, f) => ({ [f()]: { $first: arg } }),
  $last: (arg, f) => ({ [f()]: { $last: arg } }),
  $push: (arg, f) => ({ [f()]: { $push: arg } }),
  $addToSet: (arg, f) => ({ [f()]: { $addToSet: arg } }),
  $mergeObjects: (arg, f) => ({ [f()]: { $mergeObjects: arg } }),
  $stdDevPop: stdDevPartial,
  $stdDevSamp: stdDevPartial,
};

function stdDevPartial(arg: unknown, f: (part?: string) => string): Doc {
  return { [f('n')]: { $sum: isNumeric(arg) }, [f('mean')]: { $avg: arg }, [f('sd')]: { $stdDevPop: arg } };
}

// The split of a valid $group specification, or undefined when some accumulator cannot be split.
export function splitGroup(spec: Doc): GroupSplit | undefined {
  const shards: Doc = { _id: spec._id };
  const merge: Doc = {};
  let i = 0;
  for (const name of Object.keys(spec)) {
    if (name === '_id') continue;
    const accumulator = spec[name] as Doc;
    const op = Object.keys(accumulator)[0]!;
    const partial = Object.prototype.hasOwnProperty.call(partials, op) ? partials[op] : undefined;
    if (partial === undefined) return undefined;
    const index = i++;
    const fields = partial(accumulator[op], (part) => (part === undefined ? `p${index}` : `p${index}_${part}`));
    Object.assign(shards, fields);
    merge[name] = { [op]: Object.keys(fields) };
  }
  return { shards: { $group: shards }, merge: { [MERGE_GROUP]: merge } };
}

interface MergeState {
  add(partial: Doc): void;
  result(): unknown;
}

type MergeFactory = (fields: string[]) => MergeState;

function sumMerge([field]: string[]): MergeState {
  let total: unknown = 0;
  return {
    add: (p) => {
      if (isNumber(p[field!])) total = numericAdd(total, p[field!]);
    },
    result: () => total,
  };
}

function extremeMerge(sign: 1 | -1): MergeFactory {
  return ([field]) => {
    let best: unknown;
    return {
      add: (p) => {
        const v = p[field!];
        if (v !== undefined && v !== null && (best === undefined || sign * compareValues(v, best) > 0)) best = v;
      },
      result: () => best ?? null,
    };
  };
}

function stdDevMerge(sample: boolean): MergeFactory {
  return ([nField, meanField, sdField]) => {
    let n = 0;
    let mean = 0;
    let m2 = 0;
    return {
      add: (p) => {
        const nB = toDouble(p[nField!]);
        if (!(nB > 0)) return;
        const meanB = toDouble(p[meanField!]);
        const sdB = toDouble(p[sdField!]);
        const total = n + nB;
        const delta = meanB - mean;
        m2 += sdB * sdB * nB + (delta * delta * n * nB) / total;
        mean += (delta * nB) / total;
        n = total;
      },
      result: () => {
        const d = sample ? n - 1 : n;
        return d > 0 ? new Double(Math.sqrt(m2 / d)) : null;
      },
    };
  };
}

const merges: Record<string, MergeFactory> = {
  $sum: sumMerge,
  $count: sumMerge,
  $avg: ([sumField, nField]) => {
    const total = sumMerge([sumField!]);
    const count = sumMerge([nField!]);
    return {
      add: (p) => {
        total.add(p);
        count.add(p);
      },
      result: () => averageOf(total.result(), toDouble(count.result())),
    };
  },
  $min: extremeMerge(-1),
  $max: extremeMerge(1),
  $first: ([field]) => {
    let first: { value: unknown } | undefined;
    return { add: (p) => void (first ??= { value: p[field!] }), result: () => first?.value ?? null };
  },
  $last: ([field]) => {
    let last: unknown = null;
    return { add: (p) => void (last = p[field!]), result: () => last ?? null };
  },
  $push: ([field]) => {
    const values: unknown[] = [];
    return { add: (p) => void values.push(...(p[field!] as unknown[])), result: () => values };
  },
  $addToSet: ([field]) => {
    const values: unknown[] = [];
    return {
      add: (p) => {
        for (const v of p[field!] as unknown[]) if (!values.some((e) => valuesEqual(e, v))) values.push(v);
      },
      result: () => values,
    };
  },
  $mergeObjects: ([field]) => {
    const out: Doc = {};
    let i = 0;
    return { add: (p) => mergeInto(out, p[field!], i++), result: () => out };
  },
  $stdDevPop: stdDevMerge(false),
  $stdDevSamp: stdDevMerge(true),
};

// The router's half: partial documents in, one document per group out, in order of first
// appearance (MongoDB leaves the order of $group's output unspecified).
export function* runMergeGroup(spec: unknown, input: Iterable<Doc>): Iterable<Doc> {
  assert(isPlainObject(spec), `${MERGE_GROUP} takes an object`);
  const fields = Object.keys(spec).map((name) => {
    const entry = spec[name] as Doc;
    const op = Object.keys(entry)[0]!;
    const factory = Object.prototype.hasOwnProperty.call(merges, op) ? merges[op] : undefined;
    assert(factory !== undefined && Array.isArray(entry[op]), `${MERGE_GROUP} cannot merge ${op}`);
    return { name, create: () => factory(entry[op] as string[]) };
  });
  const groups = new Map<string, { id: unknown; states: MergeState[] }>();
  for (const partial of input) {
    const key = groupKey(partial._id);
    let group = groups.get(key);
    if (group === undefined) {
      group = { id: partial._id ?? null, states: fields.map((f) => f.create()) };
      groups.set(key, group);
    }
    for (const state of group.states) state.add(partial);
  }
  for (const group of groups.values()) {
    const out: Doc = { _id: group.id };
    fields.forEach(({ name }, i) => {
      out[name] = group.states[i]!.result();
    });
    yield out;
  }
}
