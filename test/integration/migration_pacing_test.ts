import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { donorStatistics, untilDonorReads } from '../helpers/donor_load.js';
import { withCluster } from '../helpers/fixtures.js';

// 8,000 documents of ~1 KB: four _migrateClone batches of an idle donor's size (2 MB), more when
// loaded, so the donor judges its load several times.
const N = 8000;
const PAD = 'p'.repeat(1000);

async function pausedMillis(donor: MongoClient): Promise<number> {
  return (await donorStatistics(donor)).clonePausedMillisOnDonor as number;
}


describe('a donor paces its clone while it serves users', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let donor: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    donor = f.connect(cluster.shards[0]!.uri);
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'pace', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'pace.c', key: { k: 1 } });
    // [MinKey, 0) takes the users' writes and stays on shard0; [0, MaxKey) is moved.
    await admin.command({ split: 'pace.c', middle: { k: 0 } });
    await client.db('pace').collection<AnyDoc>('c').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: i, pad: PAD })));
  });

  it('clones flat out when idle, paced under load, and moves every document either way', async () => {
    const admin = client.db('admin');
    const coll = client.db('pace').collection<AnyDoc>('c');

    // The documents inserted before this test count as load until they leave the window.
    await untilDonorReads(donor, false);
    const idleBefore = await pausedMillis(donor);
    await admin.command({ moveChunk: 'pace.c', find: { k: 0 }, to: 'shard1', _waitForDelete: true });
    assert.equal(await pausedMillis(donor), idleBefore, 'an idle donor does not pause');
    await admin.command({ moveChunk: 'pace.c', find: { k: 0 }, to: 'shard0', _waitForDelete: true });

    let running = true;
    let written = 0;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; running; i++) {
        await coll.insertOne({ _id: `w${w}-${i}`, k: -1 - (i % 1000), pad: 'x' });
        written += 1;
      }
    });
    await untilDonorReads(donor, true);
    const loadedBefore = await pausedMillis(donor);
    try {
      await admin.command({ moveChunk: 'pace.c', find: { k: 0 }, to: 'shard1', _waitForDelete: true });
    } finally {
      running = false;
      await Promise.all(writers);
    }
    assert.ok(await pausedMillis(donor) > loadedBefore, 'a donor serving users pauses between clone batches');
    assert.equal(await coll.countDocuments({ k: { $gte: 0 } }), N);
    assert.equal(await coll.countDocuments({ k: { $lt: 0 } }), written);
    const onRecipient = new MongoClient(cluster.shards[1]!.uri);
    try {
      assert.equal(await onRecipient.db('pace').collection('c').countDocuments({ k: { $gte: 0 } }), N);
    } finally {
      await onRecipient.close();
    }
  });
});
