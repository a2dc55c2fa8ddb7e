import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../bson/values.js';
import { recipientWriteFor, type ApplyContext } from './recipient_apply.js';

// A recipient that holds new keys k >= 0, fed by donor A (old key x < 100) and donor B (x >= 100).
function applyAll(held: Map<unknown, Doc>, donor: 'A' | 'B', events: readonly Doc[]): void {
  const ctx: ApplyContext = {
    mine: (doc) => (doc.k as number) >= 0,
    fromDonor: (doc) => (donor === 'A' ? (doc.x as number) < 100 : (doc.x as number) >= 100),
    held: (id) => held.get(id),
  };
  for (const event of events) {
    const write = recipientWriteFor(event, ctx);
    if (write.type === 'upsert') held.set(write.doc._id, write.doc);
    else if (write.type === 'delete') held.delete(write.id);
  }
}

const insert = (doc: Doc): Doc => ({ operationType: 'insert', documentKey: { _id: doc._id }, fullDocument: doc });
const update = (id: number, now: Doc | null): Doc => ({ operationType: 'update', documentKey: { _id: id }, fullDocument: now });
const del = (id: number): Doc => ({ operationType: 'delete', documentKey: { _id: id } });

// Each donor's events, as a stream hands them out; an update's document is the donor's as it is
// when the stream is read again (updateLookup), which is its last state or none.
const A = [insert({ _id: 1, x: 1, k: 1 }), update(1, null), del(1), insert({ _id: 2, x: 2, k: 5 }), update(2, { _id: 2, x: 2, k: -5 }), del(3)];
const B = [insert({ _id: 1, x: 150, k: 1 }), insert({ _id: 4, x: 104, k: 4 }), update(4, { _id: 4, x: 104, k: 9 })];

const clone = (): Map<unknown, Doc> => new Map<unknown, Doc>([[3, { _id: 3, x: 3, k: 3 }], [2, { _id: 2, x: 2, k: 2 }]]);
const sorted = (m: Map<unknown, Doc>): [unknown, Doc][] => [...m.entries()].sort((a, b) => Number(a[0]) - Number(b[0]));

test('a suffix of one donor\'s events applied again (its stream resumed from an older token) leaves what applying them once left', () => {
  const once = clone();
  applyAll(once, 'B', B);
  for (let from = 0; from < B.length; from++) {
    const again = clone();
    applyAll(again, 'B', B);
    applyAll(again, 'B', B.slice(from));
    assert.deepEqual(sorted(again), sorted(once), `B again from ${from}`);
  }
});

test('but a document a shard key update moved from one donor to another is lost when the first donor\'s events are applied again after the second\'s: each batch\'s resume token is persisted in the write unit of the batch, and none is applied twice', () => {
  const once = clone();
  applyAll(once, 'A', A);
  applyAll(once, 'B', B);
  assert.deepEqual(sorted(once), [[1, { _id: 1, x: 150, k: 1 }], [4, { _id: 4, x: 104, k: 9 }]]);
  const again = clone();
  applyAll(again, 'A', A);
  applyAll(again, 'B', B);
  applyAll(again, 'A', A);
  assert.deepEqual(sorted(again), [[4, { _id: 4, x: 104, k: 9 }]], 'A\'s stale insert and its delete take the copy B wrote');
});
