import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { IndexAccess } from '../../storage/index_access.js';
import { parseCollation } from '../../bson/collation.js';
import { encodeKey } from '../../bson/key_string.js';
import { exactlyBounded, planQuery } from './query_planner.js';

const index = (id: number, spec: Doc) => new IndexAccess({ id, spec: { v: 2, ...spec }, multikey: false }, undefined);

describe('the query planner and hidden indexes', () => {
  const indexes = [index(1, { key: { _id: 1 }, name: '_id_' }), index(2, { key: { a: 1 }, name: 'a_1', hidden: true }), index(3, { key: { b: 1 }, name: 'b_1' })];

  it('never chooses a hidden index, for a filter or a sort', () => {
    assert.equal(planQuery({ filter: { a: 5 } }, indexes).kind, 'COLLSCAN');
    assert.equal(planQuery({ filter: {}, sort: { a: 1 } }, indexes).kind, 'COLLSCAN');
    const visible = planQuery({ filter: { a: 5, b: 2 } }, indexes);
    assert.ok(visible.kind === 'IXSCAN' && visible.index.name === 'b_1');
  });

  it('refuses a hint of a hidden index as one of no index, as MongoDB does', () => {
    for (const hint of ['a_1', { a: 1 }]) {
      assert.throws(() => planQuery({ filter: { a: 5 }, hint }, indexes), (e: unknown) => e instanceof MongoError && e.code === 2 && /hint provided does not correspond to an existing index/.test(e.message));
    }
  });

  it('lets internal scans that name their index use a hidden one', () => {
    const plan = planQuery({ filter: {}, hint: 'a_1', min: { a: 1 }, max: { a: 9 }, includeHidden: true }, indexes);
    assert.ok(plan.kind === 'IXSCAN' && plan.index.name === 'a_1');
  });
});

describe('the query planner and DBRef-shaped values', () => {
  const indexes = [index(1, { key: { _id: 1 }, name: '_id_' }), index(2, { key: { ref: 1 }, name: 'ref_1' })];

  it('bounds an equality on a DBRef-shaped document to one point, as for any document', () => {
    const plan = planQuery({ filter: { ref: { $ref: 'foo', $id: 7 } } }, indexes);
    assert.ok(plan.kind === 'IXSCAN' && plan.index.name === 'ref_1', plan.kind);
  });
});

describe('the query planner and index collations', () => {
  const ci = { locale: 'en', strength: 2 };
  const indexes = [index(1, { key: { _id: 1 }, name: '_id_' }), index(2, { key: { name: 1 }, name: 'name_ci', collation: ci }), index(3, { key: { tag: 1 }, name: 'tag_1' })];
  const english = parseCollation(ci);

  it('bounds strings by a collated index only under its own collation, by their collation keys', () => {
    const plan = planQuery({ filter: { name: { $in: ['Ada', 'ADA', 'bob'] } }, collation: english }, indexes);
    assert.ok(plan.kind === 'IXSCAN' && plan.index.name === 'name_ci', plan.kind);
    assert.deepEqual(plan.indexBounds, { name: ['["ada", "ada"]', '["bob", "bob"]'] });
    assert.equal(planQuery({ filter: { name: 'Ada' } }, indexes).kind, 'COLLSCAN');
    assert.equal(planQuery({ filter: { name: 'Ada' }, collation: parseCollation({ locale: 'en', strength: 1 }) }, indexes).kind, 'COLLSCAN');
    assert.equal(planQuery({ filter: { tag: 'x' }, collation: english }, indexes).kind, 'COLLSCAN', 'a simple index does not bound a collated query\'s strings');
  });

  it('bounds a string range by every string, and numbers under any collation', () => {
    const range = planQuery({ filter: { name: { $gt: 'a', $lt: 'c' } }, collation: english }, indexes);
    assert.ok(range.kind === 'IXSCAN');
    assert.deepEqual(range.indexBounds, { name: ['["", {})'] });
    const number = planQuery({ filter: { name: 5, tag: { $gte: 2 } } }, indexes);
    assert.ok(number.kind === 'IXSCAN');
  });

  it('provides no sort from a collated index, and needs the filter after it', () => {
    const plan = planQuery({ filter: { name: 'ada' }, sort: { name: 1 }, collation: english }, indexes);
    assert.ok(plan.kind === 'IXSCAN' && !plan.providesSort);
    assert.equal(exactlyBounded(plan, { filter: { name: 'ada' } }), false);
    assert.equal(planQuery({ filter: { _id: 'A' }, collation: english }, indexes).kind, 'COLLSCAN', 'no IDHACK for a string under another collation');
  });

  it("reads a collated _id index's point by the collation key", () => {
    const collatedId = [index(1, { key: { _id: 1 }, name: '_id_', collation: ci })];
    const plan = planQuery({ filter: { _id: 'ADA' }, collation: english }, collatedId);
    assert.ok(plan.kind === 'IDHACK');
    assert.deepEqual(plan.keyString, encodeKey(['ada'], [1]));
    assert.equal(planQuery({ filter: { _id: 'ADA' } }, collatedId).kind, 'COLLSCAN');
    assert.equal(planQuery({ filter: { _id: 7 } }, collatedId).kind, 'IDHACK');
  });
});
