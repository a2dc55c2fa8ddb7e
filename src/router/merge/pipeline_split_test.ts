import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareValues } from '../../bson/compare.js';
import { Double, isPlainObject, Long, bsonTag, type Doc } from '../../bson/values.js';
import { runPipeline, type PipelineContext } from '../../query/agg/pipeline.js';
import { runMergePartAsync } from './merge_part.js';
import { splitPipeline } from './pipeline_split.js';
import { mergeSorted } from './stream_merge.js';
import { collect, partition, seededRandom, streamOf } from './merge_test_support.js';

const random = seededRandom(42);
const groups = ['a', 'b', 'c', 1, null, undefined];
const xs: unknown[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, new Double(0.5), new Double(2.25), Long.fromNumber(12), 'str', null, undefined];
const data: Doc[] = Array.from({ length: 80 }, (_, i) => {
  const doc: Doc = { _id: i };
  const g = groups[Math.floor(random() * groups.length)];
  if (g !== undefined) doc.g = g;
  const x = xs[Math.floor(random() * xs.length)];
  if (x !== undefined) doc.x = x;
  doc.tags = ['t1', 't2', 't3', 't4'].filter(() => random() < 0.4);
  doc.o = { [`k${i}`]: i };
  return doc;
});
const other: Doc[] = [{ _id: 1, k: 'a', v: 10 }, { _id: 2, k: 'b', v: 20 }, { _id: 3, k: 'a', v: 30 }];
const ctx: PipelineContext = { db: 'test', readCollection: (coll) => (coll === 'other' ? other : []), now: new Date(0) };

// How two results may differ: 'exact' in order, 'set' as multisets of documents, 'loose' also
// ignoring the order inside arrays and objects and the last bits of doubles, 'count' in size only
// (a skip or limit without a sort picks arbitrary documents).
type Compare = 'exact' | 'set' | 'loose' | 'count';

const cases: [string, Doc[], Compare][] = [
  ['an empty pipeline', [], 'set'],
  ['a match and a projection', [{ $match: { x: { $gt: 3 } } }, { $project: { g: 1, x: 1 } }], 'set'],
  ['a sort', [{ $sort: { x: 1, _id: 1 } }], 'exact'],
  ['a sort on a missing-or-array field with a tie-breaker', [{ $sort: { tags: -1, _id: 1 } }], 'exact'],
  ['a sort and a limit', [{ $sort: { x: -1, _id: 1 } }, { $limit: 7 }], 'exact'],
  ['a sort, a skip and a limit', [{ $sort: { x: 1, _id: 1 } }, { $skip: 5 }, { $limit: 7 }], 'exact'],
  ['a sort, a projection and a limit', [{ $sort: { x: 1, _id: 1 } }, { $project: { x: 1 } }, { $limit: 4 }], 'exact'],
  ['a computed sort key', [{ $addFields: { y: { $cond: [{ $isNumber: '$x' }, { $multiply: ['$x', 2] }, 0] } } }, { $match: { y: { $gte: 4 } } }, { $sort: { y: -1, _id: -1 } }], 'exact'],
  ['a skip alone', [{ $skip: 5 }], 'count'],
  ['a limit alone', [{ $limit: 5 }], 'count'],
  ['an unwind, a skip and a limit', [{ $unwind: '$tags' }, { $skip: 3 }, { $limit: 4 }], 'count'],
  ['numeric accumulators', [{ $group: { _id: '$g', s: { $sum: '$x' }, c: { $count: {} }, a: { $avg: '$x' }, mn: { $min: '$x' }, mx: { $max: '$x' }, one: { $sum: 1 } } }], 'set'],
  ['array accumulators', [{ $group: { _id: '$g', p: { $push: '$x' }, s: { $addToSet: '$x' }, t: { $push: '$tags' } } }], 'loose'],
  ['standard deviations', [{ $group: { _id: '$g', sd: { $stdDevPop: '$x' }, ss: { $stdDevSamp: '$x' } } }], 'loose'],
  ['$first and $last after a sort', [{ $sort: { x: 1, _id: 1 } }, { $group: { _id: '$g', f: { $first: '$_id' }, l: { $last: '$_id' } } }], 'set'],
  ['$mergeObjects (without conflicting fields, whose winner depends on arrival order)', [{ $group: { _id: '$g', m: { $mergeObjects: '$o' } } }], 'loose'],
  ['a group by a compound key, sorted and limited', [{ $group: { _id: { g: '$g', even: { $mod: ['$_id', 2] } }, s: { $sum: '$x' } } }, { $sort: { s: 1, _id: 1 } }, { $limit: 3 }], 'exact'],
  ['a group on everything', [{ $match: { g: 'a' } }, { $group: { _id: null, total: { $sum: '$x' }, avg: { $avg: '$x' } } }], 'exact'],
  ['an unwind before a group', [{ $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 } } }, { $sort: { n: -1, _id: 1 } }], 'exact'],
  ['an accumulator that does not split', [{ $group: { _id: '$g', top: { $topN: { n: 2, sortBy: { _id: -1 }, output: '$_id' } }, s: { $sum: 1 } } }], 'set'],
  ['$accumulator in every field: the shards\' states merged, then finalized', [{ $group: { _id: '$g', n: { $accumulator: {
    init: 'function() { return { n: 0, ids: [] }; }',
    accumulate: 'function(s, id) { s.n++; s.ids.push(id); return s; }',
    accumulateArgs: ['$_id'],
    merge: 'function(a, b) { return { n: a.n + b.n, ids: a.ids.concat(b.ids) }; }',
    finalize: 'function(s) { return s.n + ":" + s.ids.sort(function(x, y) { return x - y; }).join(","); }',
    lang: 'js',
  } } } }], 'set'],
  ['$accumulator beside another accumulator (not split)', [{ $group: { _id: '$g', s: { $sum: 1 }, m: { $accumulator: {
    init: 'function() { return 0; }', accumulate: 'function(s, x) { return typeof x == "number" ? Math.max(s, x) : s; }', accumulateArgs: ['$x'],
    merge: 'function(a, b) { return Math.max(a, b); }', lang: 'js',
  } } } }], 'set'],
  ['$count', [{ $match: { x: { $type: 'number' } } }, { $count: 'n' }], 'exact'],
  ['$count of nothing', [{ $match: { nope: 1 } }, { $count: 'n' }], 'exact'],
  ['$sortByCount', [{ $sortByCount: '$g' }], 'set'],
  ['$lookup', [{ $lookup: { from: 'other', localField: 'g', foreignField: 'k', as: 'j' } }, { $sort: { _id: 1 } }], 'exact'],
  ['$bucket', [{ $bucket: { groupBy: '$_id', boundaries: [0, 10, 50], default: 'rest', output: { n: { $sum: 1 }, s: { $sum: '$x' } } } }], 'set'],
  ['$facet', [{ $facet: { a: [{ $count: 'n' }], b: [{ $group: { _id: '$g' } }, { $sort: { _id: 1 } }] } }], 'exact'],
  ['stages after the split point', [{ $group: { _id: '$g', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }, { $project: { n: 1, twice: { $add: ['$n', '$n'] } } }], 'set'],
];

async function runSharded(pipeline: Doc[], shards: Doc[][]): Promise<Doc[]> {
  const split = splitPipeline(pipeline);
  const streams = shards.map((docs) => streamOf([...runPipeline(split.shardsPart, docs, ctx)]));
  return collect(runMergePartAsync(split.mergePart, mergeSorted(streams, split.mergeSort), ctx));
}

function loosen(v: unknown): unknown {
  if (bsonTag(v) === 'Double') return new Double(Number((v as Double).value.toPrecision(10)));
  if (Array.isArray(v)) return v.map(loosen).sort(compareValues);
  if (isPlainObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, loosen(v[k])]));
  return v;
}

function comparable(docs: Doc[], how: Compare): unknown {
  if (how === 'count') return docs.length;
  if (how === 'exact') return docs;
  const out = how === 'loose' ? docs.map((d) => loosen(d) as Doc) : [...docs];
  return out.sort(compareValues);
}

for (const [name, pipeline, how] of cases) {
  test(`a split pipeline gives the unsplit result: ${name}`, async () => {
    const expected = comparable([...runPipeline(pipeline, data, ctx)], how);
    for (let seed = 1; seed <= 12; seed++) {
      const shards = partition(data, 1 + (seed % 3), seededRandom(seed));
      const actual = comparable(await runSharded(pipeline, shards), how);
      assert.deepStrictEqual(actual, expected, `seed ${seed}`);
    }
  });
}

test('leading per-document stages run on the shards and the rest on the router', () => {
  assert.deepEqual(splitPipeline([{ $match: { a: 1 } }, { $set: { b: 2 } }, { $lookup: { from: 'o', localField: 'a', foreignField: 'a', as: 'j' } }, { $match: { c: 1 } }]), {
    shardsPart: [{ $match: { a: 1 } }, { $set: { b: 2 } }],
    mergePart: [{ $lookup: { from: 'o', localField: 'a', foreignField: 'a', as: 'j' } }, { $match: { c: 1 } }],
  });
  assert.deepEqual(splitPipeline([{ $match: { a: 1 } }]), { shardsPart: [{ $match: { a: 1 } }], mergePart: [] });
});

test('a sort runs on the shards, takes a following limit along and is merged by its key', () => {
  assert.deepEqual(splitPipeline([{ $sort: { a: 1 } }, { $limit: 5 }, { $project: { a: 1 } }]), {
    shardsPart: [{ $sort: { a: 1 } }, { $limit: 5 }],
    mergePart: [{ $limit: 5 }, { $project: { a: 1 } }],
    mergeSort: { a: 1 },
  });
});

test('a skip runs on the router and the shards send skip+limit documents', () => {
  assert.deepEqual(splitPipeline([{ $sort: { a: 1 } }, { $skip: 10 }, { $project: { a: 1 } }, { $limit: 5 }]), {
    shardsPart: [{ $sort: { a: 1 } }, { $limit: 15 }],
    mergePart: [{ $skip: 10 }, { $project: { a: 1 } }, { $limit: 5 }],
    mergeSort: { a: 1 },
  });
  assert.deepEqual(splitPipeline([{ $skip: 3 }, { $match: { a: 1 } }, { $limit: 5 }]), {
    shardsPart: [],
    mergePart: [{ $skip: 3 }, { $match: { a: 1 } }, { $limit: 5 }],
  });
});

test('a group becomes a partial group on the shards and a merging group on the router', () => {
  assert.deepEqual(splitPipeline([{ $group: { _id: '$k', total: { $sum: '$v' }, mean: { $avg: '$v' } } }, { $limit: 2 }]), {
    shardsPart: [{ $group: { _id: '$k', p0: { $sum: '$v' }, p1_sum: { $sum: '$v' }, p1_n: { $sum: { $cond: [{ $isNumber: '$v' }, 1, 0] } } } }],
    mergePart: [{ $_internalMergeGroup: { total: { $sum: ['p0'] }, mean: { $avg: ['p1_sum', 'p1_n'] } } }, { $limit: 2 }],
  });
});

test('a group of $accumulator fields emits states on the shards, merged by a $group of their merge functions', () => {
  const acc = { init: 'function() { return 0; }', accumulate: 'function(s, v) { return s + v; }', accumulateArgs: ['$v'], merge: 'function(a, b) { return a + b; }', lang: 'js' };
  const split = splitPipeline([{ $group: { _id: '$k', total: { $accumulator: { ...acc, finalize: 'function(s) { return -s; }' } } } }]);
  assert.deepEqual(split.shardsPart, [{ $group: { _id: '$k', total: { $accumulator: acc } } }], 'no finalize on the shards');
  const merge = (split.mergePart[0]!.$group as Doc).total as { $accumulator: Doc };
  assert.equal(merge.$accumulator.finalize, 'function(s) { return -s; }');
  assert.deepEqual(merge.$accumulator.accumulateArgs, ['$total']);
  assert.deepEqual([...runPipeline(split.mergePart, [{ _id: 'a', total: 2 }, { _id: 'b', total: 5 }, { _id: 'a', total: 3 }], ctx)],
    [{ _id: 'a', total: new Double(-5) }, { _id: 'b', total: new Double(-5) }]);
});

test('a final unwind moves to the router when nothing follows it on the shards', () => {
  assert.deepEqual(splitPipeline([{ $unwind: '$a' }, { $sample: { size: 2 } }]), {
    shardsPart: [],
    mergePart: [{ $unwind: '$a' }, { $sample: { size: 2 } }],
  });
});

test('an invalid pipeline is rejected with the error the shards would give', () => {
  assert.throws(() => splitPipeline([{ $count: 'a.b' }]), { code: 40160 });
  assert.throws(() => splitPipeline([{ $group: { _id: 1, a: { $avg: [1, 2] } } }]), { code: 40237 });
  assert.throws(() => splitPipeline([{ $out: 'x' }, { $match: {} }]), { code: 40601 });
  assert.throws(() => splitPipeline([{ $bogus: 1 }]), { code: 40324 });
});

test('a pipeline ending in $out keeps it on the router', () => {
  assert.deepEqual(splitPipeline([{ $match: { a: 1 } }, { $out: 'x' }]), { shardsPart: [{ $match: { a: 1 } }], mergePart: [{ $out: 'x' }] });
});
