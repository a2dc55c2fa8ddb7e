import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../../bson/values.js';
import { ClusterCursor } from './cluster_cursor.js';
import { streamOf } from './test_support.js';

function cursorOver(docs: Doc[]): { cursor: ClusterCursor; closes: () => number } {
  let closes = 0;
  const cursor = new ClusterCursor(streamOf(docs), async () => {
    closes++;
  });
  return { cursor, closes: () => closes };
}

test('a cluster cursor returns its documents in batches and reports when none remain', async () => {
  const { cursor, closes } = cursorOver([{ a: 1 }, { a: 2 }, { a: 3 }]);
  assert.deepEqual(await cursor.nextBatch(2), { docs: [{ a: 1 }, { a: 2 }], more: true });
  assert.deepEqual(await cursor.nextBatch(2), { docs: [{ a: 3 }], more: false });
  assert.equal(await cursor.next(), undefined);
  assert.equal(cursor.returnedSoFar, 3);
  assert.equal(closes(), 0);
});

test('hasNext does not consume a document', async () => {
  const { cursor } = cursorOver([{ a: 1 }]);
  assert.equal(await cursor.hasNext(), true);
  assert.equal(await cursor.hasNext(), true);
  assert.deepEqual(await cursor.next(), { a: 1 });
  assert.equal(await cursor.hasNext(), false);
});

test('closing a cluster cursor ends the merged stream and releases the shard cursors once', async () => {
  let ended = false;
  async function* merged(): AsyncIterable<Doc> {
    try {
      for (let i = 0; ; i++) yield { i };
    } finally {
      ended = true;
    }
  }
  let closes = 0;
  const cursor = new ClusterCursor(merged(), async () => {
    closes++;
  });
  assert.deepEqual(await cursor.next(), { i: 0 });
  await cursor.close();
  await cursor.close();
  assert.ok(ended);
  assert.equal(closes, 1);
  assert.equal(await cursor.next(), undefined);
});

test('a failing merge closes the cursor and reports the error', async () => {
  async function* merged(): AsyncIterable<Doc> {
    yield { a: 1 };
    throw new Error('shard down');
  }
  let closes = 0;
  const cursor = new ClusterCursor(merged(), async () => {
    closes++;
  });
  assert.deepEqual(await cursor.next(), { a: 1 });
  await assert.rejects(cursor.next(), /shard down/);
  assert.equal(closes, 1);
  assert.equal(await cursor.next(), undefined);
});

test('two calls at once on one cursor are refused', async () => {
  const { cursor } = cursorOver([{ a: 1 }, { a: 2 }]);
  const first = cursor.next();
  await assert.rejects(cursor.next(), { code: 1 });
  assert.deepEqual(await first, { a: 1 });
});
