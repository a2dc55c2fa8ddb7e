import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../../bson/values.js';
import { MongoError } from '../../base/errors.js';
import { IndexAccess } from '../../storage/index_access.js';
import { planQuery } from './query_planner.js';

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
