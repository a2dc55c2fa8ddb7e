import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { FAST_BALANCER_ARGS, chunkCounts, waitFor } from '../helpers/balancer_util.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 18 part 2, removeShard: the balancer spreads 24 MB in 1 MB chunks over 3 shards, so the
// third shard's chunks came from the other two, which still hold their orphans (the default
// orphanCleanupDelaySecs, 900 s). Draining it moves those chunks back onto their former owners;
// each move deletes the orphans first instead of failing, so removeShard completes within 2
// minutes of the balancer's first draining round, with nothing lost.
const NS = 'rs.c';
const DOCS = 24 * 1024;
const PAD = 'p'.repeat(1000);

describe('removeShard when the drained chunks go back to shards holding their orphans', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;

  withCluster({ shards: 3, configArgs: FAST_BALANCER_ARGS }, async (f) => {
    ({ cluster, client } = f);
  });

  it('drains the third shard in under 2 minutes with nothing lost', { timeout: 400_000 }, async () => {
    const admin = client.db('admin');
    const config = client.db('config');
    await config.collection<AnyDoc>('settings').updateOne({ _id: 'chunksize' }, { $set: { value: 1 } }, { upsert: true });
    await admin.command({ enableSharding: 'rs', primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    const coll = client.db('rs').collection<AnyDoc>('c');
    for (let from = 0; from < DOCS; from += 1024) {
      await coll.insertMany(Array.from({ length: 1024 }, (_, i) => ({ _id: from + i, k: from + i, pad: PAD })));
    }
    await waitFor('the balancer to even the shards out', async () => (await admin.command({ balancerCollectionStatus: NS })).balancerCompliant === true, 180_000, 500);

    const before = await chunkCounts(config, NS);
    const roundsBefore = Number((await admin.command({ balancerStatus: 1 })).numBalancerRounds ?? 0);
    const started = await admin.command({ removeShard: 'shard2' });
    assert.equal(started.state, 'started');
    await waitFor('the balancer\'s first round after removeShard', async () => Number((await admin.command({ balancerStatus: 1 })).numBalancerRounds ?? 0) > roundsBefore, 30_000, 100);
    const firstRound = Date.now();
    const done = await waitFor('removeShard to complete', async () => {
      const reply = await admin.command({ removeShard: 'shard2' });
      return reply.state === 'completed' ? reply : undefined;
    }, 120_000, 500);
    const tookMs = Date.now() - firstRound;
    const expedited = await Promise.all(cluster.shards.slice(0, 2).map(async (s) => {
      const direct = new MongoClient(s.uri);
      try {
        return Number((await direct.db('admin').command({ serverStatus: 1 })).shardingStatistics.docshard.rangeDeletions.expedited);
      } finally {
        await direct.close();
      }
    }));
    console.log(`removeShard completed ${tookMs} ms after the first draining round; chunks before ${JSON.stringify([...before])}; expedited deletions ${expedited.join(', ')}`);
    assert.equal(done.state, 'completed');
    assert.ok(expedited[0]! + expedited[1]! > 0, 'some drained chunks went back onto a shard that still held their orphans');
    assert.equal((await chunkCounts(config, NS)).get('shard2'), undefined);
    assert.equal(await coll.countDocuments(), DOCS);
    const ids = (await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id as number).sort((a, b) => a - b);
    assert.deepEqual(ids, Array.from({ length: DOCS }, (_, i) => i), 'every document is there, once');
  });
});
