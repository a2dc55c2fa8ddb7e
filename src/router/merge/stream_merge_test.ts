import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Doc } from '../../bson/values.js';
import { compileSort } from '../../query/sort.js';
import { parseCollation } from '../../bson/collation.js';
import { applySkipLimit, mergeSorted } from './stream_merge.js';
import { collect, streamOf } from './merge_test_support.js';

// A shard stream that records how far it was read and whether it was closed.
function trackedStream(docs: Doc[]): { stream: AsyncIterable<Doc>; state: { read: number; closed: boolean } } {
  const state = { read: 0, closed: false };
  async function* gen(): AsyncIterable<Doc> {
    try {
      for (const doc of docs) {
        state.read++;
        yield doc;
      }
    } finally {
      state.closed = true;
    }
  }
  return { stream: gen(), state };
}

test('a sorted merge of sorted shard streams equals sorting all documents', async () => {
  const sort = { a: 1, b: -1 };
  const cmp = compileSort(sort);
  const value = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'y', null), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }));
  const doc = fc.record({ a: value, b: value }, { requiredKeys: [] });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(doc, { maxLength: 12 }), { minLength: 1, maxLength: 4 }), async (shards) => {
      const numbered = shards.map((docs, s) => docs.map((d, i) => ({ ...d, _id: `${s}-${i}` })).sort(cmp));
      const merged = await collect(mergeSorted(numbered.map(streamOf), sort));
      const all = numbered.flat().sort(cmp);
      assert.equal(merged.length, all.length);
      for (let i = 1; i < merged.length; i++) assert.ok(cmp(merged[i - 1]!, merged[i]!) <= 0);
      // Stable in shard order: equal keys come out as the concatenation in shard order does.
      assert.deepEqual(merged, all);
    }),
    { seed: 7, numRuns: 200 },
  );
});

test('a sorted merge compares strings under the collation it is given', async () => {
  const shards = [[{ s: 'a' }, { s: 'B' }], [{ s: 'A' }, { s: 'b' }]];
  const merged = await collect(mergeSorted(shards.map(streamOf), { s: 1 }, parseCollation({ locale: 'en', strength: 2 })));
  assert.deepEqual(merged, [{ s: 'a' }, { s: 'A' }, { s: 'B' }, { s: 'b' }]);
});

test('an unsorted merge returns every document of every shard, each shard in its order', async () => {
  const shards = [[{ _id: 1 }, { _id: 2 }, { _id: 3 }], [], [{ _id: 10 }, { _id: 11 }]];
  const merged = await collect(mergeSorted(shards.map(streamOf), undefined));
  assert.equal(merged.length, 5);
  assert.deepEqual(merged.filter((d) => (d._id as number) < 10), shards[0]);
  assert.deepEqual(merged.filter((d) => (d._id as number) >= 10), shards[2]);
});

test('an unsorted merge does not wait for a slow shard', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  async function* slow(): AsyncIterable<Doc> {
    await gate;
    yield { _id: 'slow' };
  }
  const merged = mergeSorted([slow(), streamOf([{ _id: 'fast1' }, { _id: 'fast2' }])], {})[Symbol.asyncIterator]();
  assert.deepEqual((await merged.next()).value, { _id: 'fast1' });
  assert.deepEqual((await merged.next()).value, { _id: 'fast2' });
  release();
  assert.deepEqual((await merged.next()).value, { _id: 'slow' });
  assert.equal((await merged.next()).done, true);
});

test('skip and limit stop reading the shards and close every shard stream', async () => {
  for (const sort of [{ _id: 1 }, undefined]) {
    const a = trackedStream(Array.from({ length: 50 }, (_, i) => ({ _id: 2 * i })));
    const b = trackedStream(Array.from({ length: 50 }, (_, i) => ({ _id: 2 * i + 1 })));
    const out = await collect(applySkipLimit(mergeSorted([a.stream, b.stream], sort), 3, 4));
    assert.equal(out.length, 4);
    if (sort !== undefined) assert.deepEqual(out, [{ _id: 3 }, { _id: 4 }, { _id: 5 }, { _id: 6 }]);
    assert.ok(a.state.read + b.state.read <= 10, `read ${a.state.read + b.state.read}`);
    assert.ok(a.state.closed && b.state.closed);
  }
});

test('a failing shard fails the merge and the other shards are closed', async () => {
  for (const sort of [{ _id: 1 }, undefined]) {
    const good = trackedStream(Array.from({ length: 10 }, (_, i) => ({ _id: i })));
    async function* bad(): AsyncIterable<Doc> {
      yield { _id: 0.5 };
      throw new Error('shard down');
    }
    await assert.rejects(collect(mergeSorted([good.stream, bad()], sort)), /shard down/);
    assert.ok(good.state.closed);
  }
});

test('a limit of 0 means no limit', async () => {
  const out = await collect(applySkipLimit(streamOf([{ a: 1 }, { a: 2 }, { a: 3 }]), 1, 0));
  assert.deepEqual(out, [{ a: 2 }, { a: 3 }]);
});
