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
import { prepareFind } from './find_query.js';
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
