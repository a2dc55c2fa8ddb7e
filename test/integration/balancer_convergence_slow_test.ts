import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { balancerSuite, chunksOf, commits, ownedBytes, waitFor, waitRounds } from '../helpers/balancer_util.js';

const MB = 1024 * 1024;
const TOTAL = 1024 * MB;
const DOC_BYTES = 16 * 1024;

// The convergence acceptance: 3 shards, monotonically increasing keys inserted through the
// router until 1 GB with the balancer on (default 128 MB chunk size, data-size policy): the spread
// ends within 3 chunk sizes and then nothing moves for 3 rounds; every document is there once.
describe('balancer convergence at 1 GB', () => {
  const ctx = balancerSuite();

  it('inserts 1 GB with increasing keys while balancing, and converges', { timeout: 900_000 }, async () => {
    await ctx.admin.command({ enableSharding: 'big', primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: 'big.c', key: { k: 1 } });
    const coll = ctx.client.db('big').collection<AnyDoc>('c');
    const pad = 'z'.repeat(DOC_BYTES - 40);
    const docs = Math.ceil(TOTAL / DOC_BYTES);
    const started = Date.now();
    for (let i = 0; i < docs; i += 512) {
      await coll.insertMany(Array.from({ length: Math.min(512, docs - i) }, (_, j) => ({ _id: i + j, k: i + j, pad })), { ordered: false });
    }
    const insertedMs = Date.now() - started;
    await waitFor('big.c to become balanced', async () => (await ctx.admin.command({ balancerCollectionStatus: 'big.c' })).balancerCompliant === true, 600_000, 500);
    const sizes = await ownedBytes(ctx.cluster, 'big.c');
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 3 * 128 * MB, `spread within 3 chunk sizes: ${sizes.map((s) => Math.round(s / MB))} MB`);
    const moved = await commits(ctx.config, 'big.c');
    assert.ok(moved >= 2, `data had to move: ${moved} migrations`);
    await waitRounds(ctx.admin, 3);
    assert.equal(await commits(ctx.config, 'big.c'), moved, 'no moves for 3 rounds once balanced');
    assert.equal(await coll.countDocuments(), docs);
    assert.equal(await coll.countDocuments({ k: { $gte: docs - 100 } }), 100);
    process.stdout.write(`# 1 GB: inserted in ${insertedMs} ms, balanced after ${Date.now() - started} ms, ${moved} migrations, MB per shard ${sizes.map((s) => Math.round(s / MB))}\n`);
  });

  // Under the seeds' chunk-count policy: the router's auto-splitter cuts the growing top chunk at
  // the chunk size (32 MB here, so 1 GB makes 32 or more chunks: threshold 4), and the balancer
  // moves chunks until the shards differ by less than 2.
  it('the same under the chunk-count policy reaches the seeds\' thresholds', { timeout: 900_000 }, async () => {
    await ctx.client.db('big').dropDatabase();
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $set: { policy: 'chunkCount' } }, { upsert: true });
    await ctx.config.collection('settings').updateOne({ _id: 'chunksize' as never }, { $set: { value: 32 } }, { upsert: true });
    await ctx.admin.command({ enableSharding: 'bigc', primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: 'bigc.c', key: { k: 1 } });
    const coll = ctx.client.db('bigc').collection<AnyDoc>('c');
    const pad = 'z'.repeat(DOC_BYTES - 40);
    const docs = Math.ceil(TOTAL / DOC_BYTES);
    for (let i = 0; i < docs; i += 512) {
      await coll.insertMany(Array.from({ length: Math.min(512, docs - i) }, (_, j) => ({ _id: i + j, k: i + j, pad })), { ordered: false });
    }
    const spread = async (): Promise<number[]> => {
      const counts = new Map<string, number>();
      for (const c of await chunksOf(ctx.config, 'bigc.c')) counts.set(c.shard, (counts.get(c.shard) ?? 0) + 1);
      return ['shard0', 'shard1', 'shard2'].map((s) => counts.get(s) ?? 0);
    };
    const counts = await waitFor('bigc.c chunk counts within 1 of each other', async () => {
      const c = await spread();
      return Math.max(...c) - Math.min(...c) < 2 ? c : undefined;
    }, 600_000, 500);
    const total = counts.reduce((a, b) => a + b, 0);
    assert.ok(total >= 20, `auto-splitting made at least 20 chunks: ${counts}`);
    const moved = await commits(ctx.config, 'bigc.c');
    await waitRounds(ctx.admin, 3);
    assert.equal(await commits(ctx.config, 'bigc.c'), moved, 'no moves for 3 rounds once balanced');
    assert.equal(await coll.countDocuments(), docs);
    process.stdout.write(`# 1 GB chunkCount: chunks per shard ${counts}, ${moved} migrations\n`);
  });
});
