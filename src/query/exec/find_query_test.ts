import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Decimal128, Double, Long } from 'bson';
import { StorageEngine } from '../../storage/storage_engine.js';
import { compileFilter } from '../match/matcher.js';
import type { Doc } from '../../bson/values.js';
import { MAX_BLOCKING_SORT_BYTES, prepareFind, type FindSpec } from './find_query.js';
import { withEngine } from '../../storage/test_support.js';
import { hashValue } from '../../bson/hash.js';
import { exactlyBounded, planQuery } from '../plan/query_planner.js';

const VALUES: unknown[] = [
  0, 1, 2, 5, -3, 1.5, new Double(2), new Double(2.5), new Double(NaN), new Double(Infinity), Long.fromNumber(2), Decimal128.fromString('2.000'),
  Decimal128.fromString('4.9999999999999999999'), 'a', 'b', '', null, true, { x: 1 },
];

describe('finds through exact index bounds', () => {
  it('return what a collection scan with the filter returns', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-find-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: (f) => (d) => compileFilter(f).matches(d) });
    try {
      const coll = engine.createCollection('t.k');
      engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }, { v: 2, key: { j: -1, k: 1 }, name: 'j_-1_k_1' }]);
      engine.write((unit) => {
        VALUES.forEach((v, i) => unit.insert(coll, { _id: i, k: v, j: VALUES[(i * 7) % VALUES.length] }));
        unit.insert(coll, { _id: 'missing' });
      });
      const bound = fc.constantFrom(...VALUES.filter((v) => typeof v === 'number' || v instanceof Double), 4.99, 2);
      const filters = fc.oneof(
        fc.constantFrom(...VALUES).map((v) => ({ k: v })),
        fc.tuple(fc.constantFrom('$gt', '$gte'), bound, fc.constantFrom('$lt', '$lte'), bound).map(([lo, a, hi, b]) => ({ k: { [lo]: a, [hi]: b } })),
        fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), bound).map(([op, a]) => ({ k: { [op]: a } })),
        fc.constantFrom(...VALUES).map((v) => ({ j: v })),
      );
      const ids = (filter: Doc, hint: unknown) => [...prepareFind(engine, coll, { filter, hint }).results].map((r) => String(r.doc._id)).sort();
      const range = { filter: { k: { $gte: 0, $lt: 5 } } };
      assert.equal(exactlyBounded(planQuery(range, coll.indexes), range), true, 'a two-sided numeric range needs no filter');
      fc.assert(fc.property(filters, (filter) => {
        assert.deepEqual(ids(filter, undefined), ids(filter, { $natural: 1 }), JSON.stringify(filter));
      }), { numRuns: 300 });
    } finally {
      void engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('finds that show what the plan knows', () => {
  const ids = (rows: Iterable<{ doc: Doc }>) => [...rows].map((r) => r.doc);

  it('returnKey returns the key the plan read each document under, {} from a collection scan', withEngine((engine) => {
    const coll = engine.createCollection('t.k');
    engine.createIndexes(coll, [{ v: 2, key: { a: 1, 'b.c': -1 }, name: 'a_1_b.c_-1' }, { v: 2, key: { h: 'hashed' }, name: 'h_hashed' }]);
    engine.write((unit) => {
      unit.insert(coll, { _id: 1, a: 2, b: { c: 'x' }, h: 5 });
      unit.insert(coll, { _id: 2, a: 1, b: [{ c: 'y' }, { c: 'z' }], h: 6 });
    });
    const find = (spec: Partial<FindSpec>) => ids(prepareFind(engine, coll, { filter: {}, returnKey: true, ...spec }).results);
    assert.deepEqual(find({ hint: 'a_1_b.c_-1' }), [{ a: 1, 'b.c': 'z' }, { a: 2, 'b.c': 'x' }], 'a multikey document under its first key, once');
    assert.deepEqual(find({ hint: 'a_1_b.c_-1', sort: { _id: -1 } }), [{ a: 1, 'b.c': 'z' }, { a: 2, 'b.c': 'x' }], 'kept through a blocking sort');
    assert.deepEqual(find({ filter: { h: 5 } }), [{ h: hashValue(5) }], 'a hashed index holds the hash');
    assert.deepEqual(find({ filter: { _id: 2 } }), [{ _id: 2 }], 'IDHACK reads the _id index');
    assert.deepEqual(find({ hint: { $natural: 1 } }), [{}, {}]);
    const natural = (sort: Doc) => [...prepareFind(engine, coll, { filter: {}, sort }).results].map((r) => r.doc._id);
    assert.deepEqual(natural({ $natural: -1 }), [2, 1], 'a sort on $natural alone reads the collection backwards');
    assert.deepEqual(natural({ $natural: 1 }), [1, 2]);
    assert.deepEqual(find({ hint: 'a_1_b.c_-1', sort: { _id: 1 }, projection: { a: 1, s: { $meta: 'sortKey' } } }), [{ a: 2, 'b.c': 'x', s: [1] }, { a: 1, 'b.c': 'z', s: [2] }]);
  }));

  it('showRecordId adds $recordId, and $meta projections show index key, record id and sort key', withEngine((engine) => {
    const coll = engine.createCollection('t.r');
    engine.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1' }]);
    engine.write((unit) => [{ _id: 'x', a: 2 }, { _id: 'y', a: 1 }].forEach((d) => unit.insert(coll, d)));
    const find = (spec: Partial<FindSpec>) => ids(prepareFind(engine, coll, { filter: {}, ...spec }).results);
    assert.deepEqual(find({ showRecordId: true }), [{ _id: 'x', a: 2, $recordId: Long.fromNumber(1) }, { _id: 'y', a: 1, $recordId: Long.fromNumber(2) }]);
    assert.deepEqual(find({ filter: { a: { $gte: 1 } }, projection: { _id: 0, k: { $meta: 'indexKey' }, r: { $meta: 'recordId' } } }), [
      { a: 1, k: { a: 1 }, r: Long.fromNumber(2) },
      { a: 2, k: { a: 2 }, r: Long.fromNumber(1) },
    ]);
    assert.throws(() => find({ projection: { s: { $meta: 'sortKey' } } }), { code: 2, message: 'cannot use sortKey $meta projection without a sort' });
  }));
});

describe('a blocking sort with allowDiskUse: false', () => {
  it(`fails beyond ${MAX_BLOCKING_SORT_BYTES} bytes, as MongoDB fails rather than spill`, withEngine((engine) => {
    const coll = engine.createCollection('t.big');
    const filler = 'x'.repeat(15 * 1024 * 1024);
    for (let i = 0; i < 7; i++) engine.write((unit) => unit.insert(coll, { _id: i, n: -i, filler }));
    const sorted = (allowDiskUse: boolean | undefined) => [...prepareFind(engine, coll, { filter: {}, sort: { n: 1 }, projection: { filler: 0 }, allowDiskUse }).results].length;
    assert.equal(sorted(undefined), 7);
    assert.equal(sorted(true), 7);
    assert.throws(() => sorted(false), { code: 292 });
    assert.equal([...prepareFind(engine, coll, { filter: {}, sort: { _id: 1 }, hint: '_id_', projection: { filler: 0 }, allowDiskUse: false }).results].length, 7, 'an index sort is not a blocking one');
  }));
});
