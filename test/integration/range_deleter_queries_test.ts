import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { chunksOf, waitFor } from '../helpers/balancer_util.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 4: "The RangeDeleter deletes a donated range once the queries that started before the
// commit have finished." A cursor opened through the router before a migration keeps reading the
// donor with the ownership it started with; the donor deletes the range only after that cursor is
// exhausted, even with _waitForDelete and no orphanCleanupDelaySecs delay.
describe('range deletion waits for the queries that still own the range', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  let donor: MongoClient;

  withCluster({ shards: 2, shardArgs: ['--setParameter', 'orphanCleanupDelaySecs=0'] }, async (f) => {
    ({ cluster, client: router } = f);
    donor = f.connect(cluster.shards[0]!.uri);
    const admin = router.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'rq', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'rq.c', key: { k: 1 } });
    await admin.command({ split: 'rq.c', middle: { k: 1000 } });
    // 40 KB documents: 40 MB per chunk, more than one 16 MB batch, so the shard's cursor stays open
    // while the router's client reads slowly.
    const pad = 'r'.repeat(40 * 1024);
    for (let i = 0; i < 2000; i += 200) {
      await router.db('rq').collection<AnyDoc>('c').insertMany(Array.from({ length: 200 }, (_, j) => ({ _id: i + j, k: i + j, pad })));
    }
  });

  it('a cursor that started before the commit reads every document; the deletion follows it', { timeout: 120_000 }, async () => {
    const cursor = router.db('rq').collection<AnyDoc>('c').find({ k: { $lt: 1000 } }, { batchSize: 10 });
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) seen.push((await cursor.next())!._id as number);

    let moved = false;
    const move = router.db('admin').command({ moveChunk: 'rq.c', find: { k: 0 }, to: 'shard1', _waitForDelete: true }).then(() => { moved = true; });
    await waitFor('the commit', async () => (await chunksOf(router.db('config'), 'rq.c')).find((c) => c.max.k === 1000)?.shard === 'shard1');
    await new Promise((r) => setTimeout(r, 1500));
    const onDonor = await donor.db('rq').collection('c').countDocuments({ k: { $lt: 1000 } });
    assert.equal(onDonor, 1000, 'the donated range is kept while the cursor is open');
    assert.equal(moved, false, 'moveChunk with _waitForDelete is still waiting for the deletion');

    for await (const doc of cursor) seen.push(doc._id as number);
    assert.equal(seen.length, 1000);
    assert.equal(new Set(seen).size, 1000);
    await move;
    assert.equal(await donor.db('rq').collection('c').countDocuments({ k: { $lt: 1000 } }), 0, 'deleted once the cursor finished');
    assert.equal(await router.db('rq').collection('c').countDocuments(), 2000);
  });

  it('a cursor that is killed releases the range too', { timeout: 120_000 }, async () => {
    const cursor = router.db('rq').collection<AnyDoc>('c').find({ k: { $gte: 1000 } }, { batchSize: 10 });
    await cursor.next();
    const move = router.db('admin').command({ moveChunk: 'rq.c', find: { k: 1000 }, to: 'shard1', _waitForDelete: true });
    await waitFor('the commit', async () => (await chunksOf(router.db('config'), 'rq.c')).find((c) => c.min.k === 1000)?.shard === 'shard1');
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await donor.db('rq').collection('c').countDocuments({ k: { $gte: 1000 } }), 1000);
    await cursor.close();
    await move;
    assert.equal(await donor.db('rq').collection('c').countDocuments(), 0);
  });
});
