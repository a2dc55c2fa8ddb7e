import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MongoError } from '../../base/errors.js';
import { bsonTypeName } from '../../bson/compare.js';
import { Double, Long, type Doc } from '../../bson/values.js';
import { checkWriteStageReadConcern, runPipeline, validatePipeline, type PipelineContext } from './pipeline.js';

const collections: Record<string, Doc[]> = {
  orders: [
    { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
    { _id: 2, item: 'b', qty: 1, price: new Double(20.5), tags: [] },
    { _id: 3, item: 'a', qty: 5, price: 10 },
    { _id: 4, item: 'c', qty: null, price: 7, tags: ['y'] },
  ],
  items: [
    { _id: 'a', name: 'Apple', cats: ['fruit'] },
    { _id: 'b', name: 'Bread', cats: ['bakery', 'fresh'] },
    { _id: 'z', name: 'Zucchini' },
  ],
};

function ctx(extra: Partial<PipelineContext> = {}): PipelineContext {
  return { db: 'test', readCollection: (name) => collections[name] ?? [], ...extra };
}

function agg(pipeline: Doc[], input: Doc[] = collections.orders!, context = ctx()): Doc[] {
  return [...runPipeline(pipeline, input, context)];
}

function rejects(pipeline: unknown, code: number): void {
  assert.throws(
    () => {
      validatePipeline(pipeline);
      agg(pipeline as Doc[]);
    },
    (err: unknown) => err instanceof MongoError && err.code === code,
  );
}

describe('$match, $project and friends', () => {
  it('filters documents with $match, including $expr', () => {
    assert.deepEqual(agg([{ $match: { item: 'a' } }]).map((d) => d._id), [1, 3]);
    assert.deepEqual(agg([{ $match: { $expr: { $gt: ['$qty', 1] } } }]).map((d) => d._id), [1, 3]);
  });

  it('includes fields and keeps _id unless excluded', () => {
    assert.deepEqual(agg([{ $project: { item: 1 } }, { $limit: 1 }]), [{ _id: 1, item: 'a' }]);
    assert.deepEqual(agg([{ $project: { item: 1, _id: 0 } }, { $limit: 1 }]), [{ item: 'a' }]);
  });

  it('excludes fields in an exclusion projection', () => {
    assert.deepEqual(agg([{ $project: { tags: 0, price: 0 } }, { $limit: 1 }]), [{ _id: 1, item: 'a', qty: 2 }]);
  });

  it('computes fields in a projection and includes nested paths through arrays', () => {
    const input = [{ _id: 1, a: [{ b: 1, c: 2 }, 5, { c: 3 }], x: 2 }];
    assert.deepEqual(agg([{ $project: { 'a.b': 1, y: { $add: ['$x', 1] } } }], input), [{ _id: 1, a: [{ b: 1 }, {}], y: 3 }]);
    assert.deepEqual(agg([{ $project: { 'a.c': 0 } }], input), [{ _id: 1, a: [{ b: 1 }, 5, {}], x: 2 }]);
  });

  it('rejects mixing inclusion and exclusion, and empty projections', () => {
    rejects([{ $project: { a: 1, b: 0 } }], 31254);
    rejects([{ $project: {} }], 51272);
    rejects([{ $project: { a: 1, 'a.b': 1 } }], 31250);
  });

  it('adds fields, including into subdocuments, with $addFields and $set', () => {
    const input = [{ _id: 1, a: { b: 1 }, arr: [{ x: 1 }, 2] }];
    assert.deepEqual(agg([{ $addFields: { 'a.c': 2, d: '$a.b' } }], input), [{ _id: 1, a: { b: 1, c: 2 }, arr: [{ x: 1 }, 2], d: 1 }]);
    assert.deepEqual(agg([{ $set: { 'arr.y': 0 } }], input), [{ _id: 1, a: { b: 1 }, arr: [{ x: 1, y: 0 }, { y: 0 }] }]);
    assert.deepEqual(agg([{ $set: { a: '$$REMOVE' } }], input), [{ _id: 1, arr: [{ x: 1 }, 2] }]);
  });

  it('removes fields with $unset', () => {
    assert.deepEqual(agg([{ $unset: ['tags', 'price'] }, { $limit: 1 }]), [{ _id: 1, item: 'a', qty: 2 }]);
    assert.deepEqual(agg([{ $unset: 'tags' }, { $skip: 3 }]), [{ _id: 4, item: 'c', qty: null, price: 7 }]);
  });

  it('replaces the root with $replaceRoot and $replaceWith', () => {
    const input = [{ _id: 1, inner: { a: 1 } }];
    assert.deepEqual(agg([{ $replaceRoot: { newRoot: '$inner' } }], input), [{ a: 1 }]);
    assert.deepEqual(agg([{ $replaceWith: { x: '$_id' } }], input), [{ x: 1 }]);
    assert.throws(() => agg([{ $replaceWith: '$missing' }], input), (e: unknown) => e instanceof MongoError && e.code === 40228);
  });

  it('redacts levels with $$PRUNE and $$DESCEND', () => {
    const input = [{ _id: 1, level: 1, sub: { level: 5, x: 1 }, list: [{ level: 1 }, { level: 9 }] }];
    const out = agg([{ $redact: { $cond: [{ $gt: ['$level', 3] }, '$$PRUNE', '$$DESCEND'] } }], input);
    assert.deepEqual(out, [{ _id: 1, level: 1, list: [{ level: 1 }] }]);
  });
});

describe('$group and accumulators', () => {
  it('groups by a field with sum, avg, min, max, push and addToSet', () => {
    const out = agg([
      { $group: { _id: '$item', total: { $sum: '$qty' }, avg: { $avg: '$qty' }, min: { $min: '$qty' }, max: { $max: '$qty' }, items: { $push: '$_id' }, set: { $addToSet: '$price' } } },
      { $sort: { _id: 1 } },
    ]);
    assert.deepEqual(out.map((d) => d._id), ['a', 'b', 'c']);
    assert.deepEqual(out[0], { _id: 'a', total: 7, avg: new Double(3.5), min: 2, max: 5, items: [1, 3], set: [10] });
    assert.deepEqual(out[2], { _id: 'c', total: 0, avg: null, min: null, max: null, items: [4], set: [7] });
  });

  it('groups everything under a null _id and counts', () => {
    assert.deepEqual(agg([{ $group: { _id: null, n: { $count: {} }, s: { $sum: 1 } } }]), [{ _id: null, n: 4, s: 4 }]);
  });

  it('groups by an object _id and treats numerically equal keys as one group', () => {
    const input = [{ k: 1 }, { k: new Double(1) }, { k: Long.fromNumber(1) }, { k: 2 }];
    assert.equal(agg([{ $group: { _id: { key: '$k' } } }], input).length, 2);
  });

  it('computes $first, $last, $mergeObjects and standard deviations', () => {
    const input = [{ g: 1, v: 2, o: { a: 1 } }, { g: 1, v: 4, o: { b: 2 } }, { g: 1, v: 4 }, { g: 1, v: 4 }, { g: 1, v: 5 }, { g: 1, v: 5 }, { g: 1, v: 7 }, { g: 1, v: 9 }];
    const [out] = agg([{ $group: { _id: '$g', f: { $first: '$v' }, l: { $last: '$v' }, m: { $mergeObjects: '$o' }, p: { $stdDevPop: '$v' }, s: { $stdDevSamp: '$missing' } } }], input);
    assert.deepEqual(out, { _id: 1, f: 2, l: 9, m: { a: 1, b: 2 }, p: new Double(2), s: null });
  });

  it('computes $top, $bottomN, $firstN and $maxN', () => {
    const [out] = agg([{ $group: { _id: null, top: { $top: { sortBy: { qty: -1 }, output: '$_id' } }, bottom: { $bottomN: { n: 2, sortBy: { _id: 1 }, output: '$_id' } }, first: { $firstN: { n: 2, input: '$_id' } }, max: { $maxN: { n: 2, input: '$qty' } } } }]);
    assert.deepEqual(out, { _id: null, top: 3, bottom: [3, 4], first: [1, 2], max: [5, 2] });
  });

  it('widens an int sum that overflows to long', () => {
    const [out] = agg([{ $group: { _id: null, s: { $sum: '$v' } } }], [{ v: 2147483647 }, { v: 1 }]);
    assert.equal(bsonTypeName(out!.s), 'long');
  });

  it('rejects malformed group specifications', () => {
    rejects([{ $group: { total: { $sum: 1 } } }], 15955);
    rejects([{ $group: { _id: null, t: { $bogus: 1 } } }], 15952);
    rejects([{ $group: { _id: null, t: 1 } }], 40234);
    rejects([{ $group: { _id: null, t: { $sum: [1, 2] } } }], 40237);
  });
});

describe('ordering and paging stages', () => {
  it('sorts, skips and limits', () => {
    assert.deepEqual(agg([{ $sort: { qty: -1 } }, { $skip: 1 }, { $limit: 2 }]).map((d) => d._id), [1, 2]);
  });

  it('counts documents and produces nothing for empty input', () => {
    assert.deepEqual(agg([{ $count: 'n' }]), [{ n: 4 }]);
    assert.deepEqual(agg([{ $match: { item: 'none' } }, { $count: 'n' }]), []);
  });

  it('samples the requested number of distinct documents', () => {
    const out = agg([{ $sample: { size: 2 } }]);
    assert.equal(out.length, 2);
    assert.notEqual(out[0]!._id, out[1]!._id);
  });

  it('sorts groups by count with $sortByCount', () => {
    assert.deepEqual(agg([{ $sortByCount: '$item' }])[0], { _id: 'a', count: 2 });
  });

  it('rejects bad arguments to paging stages', () => {
    rejects([{ $limit: 0 }], 15958);
    rejects([{ $skip: -1 }], 15956);
    rejects([{ $sort: { a: 2 } }], 15975);
    rejects([{ $count: '$x' }], 40158);
  });

  it('streams: $limit stops pulling from its input', () => {
    let pulled = 0;
    function* endless(): Iterable<Doc> {
      for (let i = 0; ; i++) {
        pulled++;
        yield { i };
      }
    }
    assert.deepEqual([...runPipeline([{ $match: {} }, { $limit: 2 }], endless(), ctx())], [{ i: 0 }, { i: 1 }]);
    assert.equal(pulled, 2);
  });
});

describe('$unwind', () => {
  it('emits one document per array element and drops empty, null and missing', () => {
    assert.deepEqual(agg([{ $unwind: '$tags' }]).map((d) => [d._id, d.tags]), [[1, 'x'], [1, 'y'], [4, 'y']]);
  });

  it('keeps them with preserveNullAndEmptyArrays and records the index', () => {
    const out = agg([{ $unwind: { path: '$tags', includeArrayIndex: 'idx', preserveNullAndEmptyArrays: true } }]);
    const L = (n: number): Long => Long.fromNumber(n);
    assert.deepEqual(out.map((d) => [d._id, d.tags, d.idx]), [[1, 'x', L(0)], [1, 'y', L(1)], [2, undefined, null], [3, undefined, null], [4, 'y', L(0)]]);
  });

  it('treats a scalar as a one-element array', () => {
    assert.deepEqual(agg([{ $unwind: '$item' }, { $limit: 1 }])[0]!.item, 'a');
  });

  it('rejects a path without $', () => {
    rejects([{ $unwind: 'tags' }], 28818);
  });
});

describe('$lookup, $unionWith and $facet', () => {
  it('joins on localField and foreignField', () => {
    const out = agg([{ $lookup: { from: 'items', localField: 'item', foreignField: '_id', as: 'info' } }, { $project: { n: { $size: '$info' } } }]);
    assert.deepEqual(out.map((d) => d.n), [1, 1, 1, 0]);
  });

  it('joins when the local value is an array', () => {
    const out = agg([{ $lookup: { from: 'items', localField: 'keys', foreignField: '_id', as: 'info' } }], [{ _id: 1, keys: ['a', 'b', 'q'] }]);
    assert.deepEqual((out[0]!.info as Doc[]).map((d) => d._id), ['a', 'b']);
  });

  it('matches missing local values to missing or null foreign values', () => {
    const out = agg([{ $lookup: { from: 'items', localField: 'nope', foreignField: 'cats', as: 'info' } }], [{ _id: 1 }]);
    assert.deepEqual((out[0]!.info as Doc[]).map((d) => d._id), ['z']);
  });

  it('runs a correlated pipeline with let variables', () => {
    const out = agg(
      [{ $lookup: { from: 'items', let: { it: '$item' }, pipeline: [{ $match: { $expr: { $eq: ['$_id', '$$it'] } } }, { $project: { name: 1, _id: 0 } }], as: 'info' } }],
      [{ _id: 1, item: 'b' }],
    );
    assert.deepEqual(out, [{ _id: 1, item: 'b', info: [{ name: 'Bread' }] }]);
  });

  it('combines localField/foreignField with a pipeline', () => {
    const out = agg(
      [{ $lookup: { from: 'orders', localField: '_id', foreignField: 'item', pipeline: [{ $match: { qty: { $gt: 2 } } }], as: 'big' } }],
      collections.items!,
    );
    assert.deepEqual(out.map((d) => (d.big as Doc[]).map((o) => o._id)), [[3], [], []]);
  });

  it('appends another collection with $unionWith', () => {
    const out = agg([{ $unionWith: { coll: 'items', pipeline: [{ $project: { _id: 1 } }] } }], [{ _id: 0 }]);
    assert.deepEqual(out, [{ _id: 0 }, { _id: 'a' }, { _id: 'b' }, { _id: 'z' }]);
  });

  it('runs several pipelines on the same input with $facet', () => {
    const out = agg([{ $facet: { count: [{ $count: 'n' }], items: [{ $group: { _id: '$item' } }, { $sort: { _id: 1 } }] } }]);
    assert.deepEqual(out, [{ count: [{ n: 4 }], items: [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }] }]);
  });

  it('rejects a nested $facet and a $lookup without as', () => {
    rejects([{ $facet: { a: [{ $facet: { b: [] } }] } }], 40600);
    rejects([{ $lookup: { from: 'items', localField: 'a', foreignField: 'b' } }], 9);
  });
});

describe('$bucket and $bucketAuto', () => {
  it('buckets by boundaries with a default bucket and custom output', () => {
    const out = agg([{ $bucket: { groupBy: '$qty', boundaries: [0, 2, 10], default: 'other', output: { n: { $sum: 1 }, ids: { $push: '$_id' } } } }]);
    assert.deepEqual(out, [{ _id: 0, n: 1, ids: [2] }, { _id: 2, n: 2, ids: [1, 3] }, { _id: 'other', n: 1, ids: [4] }]);
  });

  it('fails when a value falls outside every bucket without a default', () => {
    assert.throws(() => agg([{ $bucket: { groupBy: '$qty', boundaries: [0, 2] } }]), (e: unknown) => e instanceof MongoError && e.code === 40066);
    rejects([{ $bucket: { groupBy: '$qty', boundaries: [5, 2] } }], 40194);
  });

  it('spreads documents evenly with $bucketAuto', () => {
    const input = [1, 2, 3, 4, 5, 6].map((v) => ({ v }));
    assert.deepEqual(agg([{ $bucketAuto: { groupBy: '$v', buckets: 3 } }], input), [
      { _id: { min: 1, max: 3 }, count: 2 },
      { _id: { min: 3, max: 5 }, count: 2 },
      { _id: { min: 5, max: 6 }, count: 2 },
    ]);
  });
});

describe('sources and validation', () => {
  it('produces documents from $documents', () => {
    assert.deepEqual(agg([{ $documents: [{ a: 1 }, { a: { $add: [1, 1] } }] }], []), [{ a: 1 }, { a: 2 }]);
  });

  it('asks the context for $collStats', () => {
    const out = agg([{ $collStats: { count: {} } }], [], ctx({ collection: 'orders', collStats: (coll) => ({ ns: `test.${coll}`, count: 4 }) }));
    assert.deepEqual(out, [{ ns: 'test.orders', count: 4 }]);
  });

  it('makes command variables and $$NOW visible to every stage', () => {
    const now = new Date('2021-01-01T00:00:00Z');
    const out = agg([{ $project: { _id: 0, v: '$$limit', now: '$$NOW' } }, { $limit: 1 }], collections.orders, ctx({ variables: { limit: 3 }, now }));
    assert.deepEqual(out, [{ v: 3, now }]);
  });

  it('rejects unknown stages, malformed stages and misplaced $out', () => {
    rejects([{ $bogus: {} }], 40324);
    rejects([{ $changeStream: {} }], 40573);
    rejects([{ $match: {}, $limit: 1 }], 40323);
    rejects([{ $out: 'x' }, { $match: {} }], 40601);
    rejects({ $match: {} }, 14);
    rejects([{ $match: {} }, { $documents: [] }], 40602);
  });

  it('accepts $out and $merge as the last stage', () => {
    validatePipeline([{ $match: {} }, { $out: 'x' }]);
    validatePipeline([{ $merge: { into: 'x' } }]);
  });

  it('refuses $out and $merge under a linearizable read concern with InvalidOptions, and nothing else', () => {
    const linearizable = { level: 'linearizable' };
    const cases: [Doc[], string][] = [[[{ $match: {} }, { $out: 'x' }], '$out'], [[{ $merge: { into: 'x' } }], '$merge']];
    for (const [pipeline, stage] of cases) {
      assert.throws(() => checkWriteStageReadConcern(pipeline, linearizable), (err: unknown) => err instanceof MongoError && err.code === 72 && err.message === `${stage} cannot be used with a 'linearizable' read concern level`);
      checkWriteStageReadConcern(pipeline, { level: 'majority' });
      checkWriteStageReadConcern(pipeline, undefined);
    }
    checkWriteStageReadConcern([{ $match: {} }], linearizable);
    checkWriteStageReadConcern([], linearizable);
  });

  it('reports unknown expression operators when the pipeline is parsed', () => {
    rejects([{ $project: { a: { $foo: 1 } } }], 168);
  });
});
