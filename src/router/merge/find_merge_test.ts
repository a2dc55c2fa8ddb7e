import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../../bson/values.js';
import { compileFilter, type MatchDetails } from '../../query/match/matcher.js';
import { compileProjection } from '../../query/projection/projection.js';
import { compileSort } from '../../query/sort.js';
import { mergeFindResults, planFindMerge } from './find_merge.js';

const shardFindCommand = (find: Doc): Doc => planFindMerge(find).shardCommand;
import { collect, partition, seededRandom, streamOf } from './merge_test_support.js';

// What a single mongod answers to a find: filter, sort, skip, limit, projection.
function runFind(find: Doc, docs: Doc[]): Doc[] {
  const filter = (find.filter as Doc | undefined) ?? {};
  const matcher = compileFilter(filter);
  let out = docs.filter((d) => matcher.matches(d));
  if (find.sort !== undefined) out = [...out].sort(compileSort(find.sort as Doc));
  const skip = (find.skip as number | undefined) ?? 0;
  const limit = (find.limit as number | undefined) ?? 0;
  out = out.slice(skip, limit > 0 ? skip + limit : undefined);
  if (find.projection === undefined) return out;
  const projector = compileProjection(find.projection as Doc, { filter });
  return out.map((d) => {
    const details: MatchDetails = {};
    matcher.matches(d, details);
    return projector.apply(d, details);
  });
}

test('shards get limit+skip and no skip, everything else unchanged', () => {
  assert.deepEqual(shardFindCommand({ find: 'c', filter: { a: 1 }, sort: { a: 1 }, skip: 5, limit: 10, batchSize: 3 }), { find: 'c', filter: { a: 1 }, sort: { a: 1 }, limit: 15, batchSize: 3 });
  assert.deepEqual(shardFindCommand({ find: 'c', skip: 5 }), { find: 'c' });
  assert.deepEqual(shardFindCommand({ find: 'c', limit: 2, singleBatch: true }), { find: 'c', limit: 2, singleBatch: true });
});

test('a projection that keeps the sort fields whole goes to the shards as it is', () => {
  assert.deepEqual(planFindMerge({ find: 'c', sort: { a: 1, 'b.c': -1 }, projection: { a: 1, b: 1 } }).shardCommand.projection, { a: 1, b: 1 });
  assert.deepEqual(planFindMerge({ find: 'c', sort: { _id: 1 }, projection: { x: 1 } }).shardCommand.projection, { x: 1 });
  assert.deepEqual(planFindMerge({ find: 'c', sort: { a: 1 }, projection: { x: 0 } }).shardCommand.projection, { x: 0 });
  assert.equal(planFindMerge({ find: 'c', sort: { a: 1 }, projection: { x: 0 } }).projection.router, undefined);
});

test('a plain projection that drops a sort field keeps it on the shards; the router projects', () => {
  const inclusion = planFindMerge({ find: 'c', sort: { 'a.b': 1, _id: 1 }, projection: { _id: 0, 'a.c': 1, x: 1 } });
  assert.deepEqual(inclusion.shardCommand.projection, { x: 1, a: 1, _id: 1 });
  assert.deepEqual(inclusion.projection.router?.({ _id: 1, a: { b: 1, c: 2 }, x: 3 }), { a: { c: 2 }, x: 3 });
  const exclusion = planFindMerge({ find: 'c', sort: { a: 1 }, projection: { a: 0, b: 0 } });
  assert.deepEqual(exclusion.shardCommand.projection, { b: 0 });
  assert.deepEqual(exclusion.projection.router?.({ _id: 1, a: 1, b: 2, c: 3 }), { _id: 1, c: 3 });
});

test('a computed projection that touches a sort field is applied by the router alone', () => {
  const plan = planFindMerge({ find: 'c', sort: { a: 1 }, projection: { a: { $add: ['$a', 1] } } });
  assert.equal('projection' in plan.shardCommand, false);
  assert.deepEqual(plan.projection.router?.({ _id: 1, a: 1 }), { _id: 1, a: 2 });
});

const random = seededRandom(9);
const docs: Doc[] = Array.from({ length: 60 }, (_, i) => ({
  _id: i,
  a: Math.floor(random() * 5),
  b: { c: Math.floor(random() * 4), d: i % 3 },
  arr: [Math.floor(random() * 9), Math.floor(random() * 9)],
  s: ['x', 'y', 'z'][i % 3],
}));

const finds: Doc[] = [
  { find: 'c' },
  { find: 'c', filter: { a: { $gte: 2 } } },
  { find: 'c', sort: { a: 1, _id: -1 } },
  { find: 'c', sort: { a: -1, _id: 1 }, skip: 7, limit: 9 },
  { find: 'c', sort: { arr: 1, _id: 1 }, limit: 20 },
  { find: 'c', sort: { 'b.c': 1, _id: 1 }, projection: { s: 1 } },
  { find: 'c', sort: { 'b.c': -1, _id: 1 }, projection: { 'b.d': 1, _id: 0 }, skip: 3 },
  { find: 'c', sort: { a: 1, _id: 1 }, projection: { a: 0 } },
  { find: 'c', sort: { a: 1, _id: 1 }, projection: { a: { $multiply: ['$a', 10] }, s: 1 }, limit: 5 },
  { find: 'c', sort: { arr: -1, _id: 1 }, projection: { arr: { $slice: 1 } } },
  { find: 'c', filter: { arr: { $gte: 5 } }, sort: { arr: 1, _id: 1 }, projection: { 'arr.$': 1 } },
];

for (const find of finds) {
  test(`a merged find equals a find on all documents: ${JSON.stringify(find)}`, async () => {
    const expected = runFind(find, docs);
    for (let seed = 1; seed <= 6; seed++) {
      const plan = planFindMerge(find);
      const shards = partition(docs, 1 + (seed % 3), seededRandom(seed));
      const streams = shards.map((part) => streamOf(runFind(plan.shardCommand, part)));
      const actual = await collect(mergeFindResults(plan, streams));
      if (find.sort === undefined) {
        const byId = (x: Doc, y: Doc): number => (x._id as number) - (y._id as number);
        assert.deepEqual(actual.sort(byId), expected.sort(byId));
      } else {
        assert.deepEqual(actual, expected, `seed ${seed}`);
      }
    }
  });
}

test('returnKey, showRecordId and $meta projections are the shards\', merged by the $sortKey they add', async () => {
  for (const find of [
    { find: 'c', sort: { b: 1 }, returnKey: true, hint: { a: 1 } },
    { find: 'c', sort: { b: 1 }, showRecordId: true, projection: { a: 1 } },
    { find: 'c', sort: { b: 1 }, projection: { b: 0, k: { $meta: 'indexKey' } } },
  ]) {
    const plan = planFindMerge(find);
    assert.equal(plan.bySortKey, true);
    assert.equal(plan.projection.router, undefined);
    assert.deepEqual(plan.shardCommand.projection, { ...(find.projection ?? {}), $sortKey: { $meta: 'sortKey' } });
  }
  const unsorted = planFindMerge({ find: 'c', showRecordId: true, projection: { a: 1 } });
  assert.equal(unsorted.bySortKey, false);
  assert.deepEqual(unsorted.shardCommand.projection, { a: 1 });
  // Two shards' returnKey results (index {a: 1}, sorted by b, which the keys do not show).
  const plan = planFindMerge({ find: 'c', sort: { b: -1 }, skip: 1, returnKey: true });
  const merged = await collect(mergeFindResults(plan, [
    streamOf([{ a: 1, $sortKey: [9] }, { a: 2, $sortKey: [5] }]),
    streamOf([{ a: 7, $sortKey: [8] }, { a: 8, $sortKey: [1] }]),
  ]));
  assert.deepEqual(merged, [{ a: 7 }, { a: 2 }, { a: 8 }]);
});
