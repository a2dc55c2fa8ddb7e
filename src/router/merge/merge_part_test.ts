import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Doc } from '../../bson/values.js';
import type { PipelineContext } from '../../query/agg/pipeline.js';
import { runMergePart, runMergePartAsync } from './merge_part.js';
import { collect } from './merge_test_support.js';

const ctx: PipelineContext = { db: 'test', readCollection: () => [] };

test('the merge part runs the merging group itself and the other stages through runPipeline', () => {
  const partials = [{ _id: 'a', p0: 2 }, { _id: 'b', p0: 1 }, { _id: 'a', p0: 3 }];
  const out = [...runMergePart([{ $_internalMergeGroup: { n: { $sum: ['p0'] } } }, { $sort: { n: -1 } }, { $project: { _id: 0, n: 1 } }], partials, ctx)];
  assert.deepEqual(out, [{ n: 5 }, { n: 1 }]);
});

test('leading per-document stages and a limit stream: the shards are read only as far as needed', async () => {
  let read = 0;
  async function* merged(): AsyncIterable<Doc> {
    for (let i = 0; i < 1000; i++) {
      read++;
      yield { i, tags: [1, 2] };
    }
  }
  const out = await collect(runMergePartAsync([{ $match: { i: { $mod: [2, 0] } } }, { $unwind: '$tags' }, { $skip: 1 }, { $limit: 3 }, { $project: { _id: 0, i: 1, tags: 1 } }], merged(), ctx));
  assert.deepEqual(out, [{ i: 0, tags: 2 }, { i: 2, tags: 1 }, { i: 2, tags: 2 }]);
  assert.ok(read <= 4, `read ${read}`);
});

test('the stages after the first blocking stage see all remaining documents', async () => {
  async function* merged(): AsyncIterable<Doc> {
    for (let i = 0; i < 10; i++) yield { i };
  }
  const out = await collect(runMergePartAsync([{ $limit: 6 }, { $sort: { i: -1 } }, { $limit: 2 }], merged(), ctx));
  assert.deepEqual(out, [{ i: 5 }, { i: 4 }]);
});
