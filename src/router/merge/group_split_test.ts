import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal128, Double, Long, type Doc } from '../../bson/values.js';
import { runPipeline, type PipelineContext } from '../../query/agg/pipeline.js';
import { runMergeGroup, splitGroup } from './group_split.js';

const ctx: PipelineContext = { db: 'test', readCollection: () => [] };

// The split group over the given shards, against the whole $group over all their documents.
function check(spec: Doc, shards: Doc[][]): void {
  const split = splitGroup(spec)!;
  const partials = shards.flatMap((docs) => [...runPipeline([split.shards], docs, ctx)]);
  const merged = [...runMergeGroup(split.merge.$_internalMergeGroup, partials)];
  assert.deepStrictEqual(merged, [...runPipeline([{ $group: spec }], shards.flat(), ctx)]);
}

test('sums widen across shards as they would on one node', () => {
  check({ _id: null, s: { $sum: '$v' } }, [[{ v: 2147483647 }], [{ v: 1 }]]);
  check({ _id: null, s: { $sum: '$v' } }, [[{ v: 1 }], [{ v: new Double(0.5) }]]);
  check({ _id: null, s: { $sum: '$v' } }, [[{ v: Long.fromNumber(5) }], [{ v: 1 }, { v: 'x' }]]);
});

test('averages come from the total sum and count, decimal when a decimal was summed', () => {
  check({ _id: null, a: { $avg: '$v' } }, [[{ v: 1 }, { v: 'x' }], [{ v: 2 }, { v: 4 }]]);
  check({ _id: null, a: { $avg: '$v' } }, [[{ v: Decimal128.fromString('1.5') }], [{ v: 2 }]]);
  check({ _id: null, a: { $avg: '$v' } }, [[{ v: 'x' }], [{}]]);
});

test('a shard without values for a group does not disturb its extremes or deviations', () => {
  check({ _id: '$g', mn: { $min: '$v' }, mx: { $max: '$v' }, sd: { $stdDevSamp: '$v' } }, [[{ g: 1, v: null }, { g: 2, v: 3 }], [{ g: 1 }, { g: 2, v: 'a' }]]);
  check({ _id: '$g', sd: { $stdDevPop: '$v' }, ss: { $stdDevSamp: '$v' } }, [[{ g: 1, v: 2 }], [{ g: 1, v: 4 }], [{ g: 1, v: 'no' }]]);
});

test('first, last and push follow the order the partial documents arrive in', () => {
  check({ _id: null, f: { $first: '$v' }, l: { $last: '$v' }, p: { $push: '$v' } }, [[{ v: 1 }, {}], [{ v: 3 }, { v: 4 }]]);
});

test('accumulators without a partial form keep the group whole', () => {
  assert.equal(splitGroup({ _id: null, t: { $topN: { n: 1, sortBy: { a: 1 }, output: '$a' } } }), undefined);
  assert.equal(splitGroup({ _id: null, t: { $firstN: { n: 1, input: '$a' } } }), undefined);
});

test('the merge stage refuses a specification it did not produce', () => {
  assert.throws(() => [...runMergeGroup({ a: { $topN: ['p0'] } }, [])], { code: 1 });
});
