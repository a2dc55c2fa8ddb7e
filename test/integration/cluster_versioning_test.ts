import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { ROUTER_FAST_PATHS, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Router A keeps a cached routing table while router B changes the collection behind its back.
// With the router's fast paths on and off (ROUTER_FAST_PATHS): the answers must not change.
for (const setting of ROUTER_FAST_PATHS) describe(`the versioning protocol with two routers (${setting.name})`, () => {
  let cluster: SpawnedCluster;
  let a: MongoClient;
  let b: MongoClient;

  withCluster({ shards: 2, routers: 2, routerArgs: setting.routerArgs }, async (f) => {
    ({ cluster, client: a } = f);
    b = f.connect(cluster.routers[1]!.uri);
    await a.db('admin').command({ enableSharding: 'v', primaryShard: 'shard0' });
    await a.db('admin').command({ shardCollection: 'v.c', key: { k: 1 } });
    await a.db('v').collection<AnyDoc>('c').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i })));
  });

  // Documents of v.<coll> on each shard, read directly from the shards.
  async function countsOnShards(coll: string): Promise<number[]> {
    return Promise.all(cluster.shards.map(async (s) => {
      const c = new MongoClient(s.uri);
      try {
        return await c.db('v').collection(coll).countDocuments();
      } finally {
        await c.close();
      }
    }));
  }

  it('keeps answering through a stale router after a split (minor version change)', async () => {
    assert.equal(await a.db('v').collection('c').countDocuments(), 100);
    await b.db('admin').command({ split: 'v.c', middle: { k: 50 } });
    assert.equal(await a.db('v').collection('c').countDocuments({ k: { $gte: 50 } }), 50);
    await a.db('v').collection<AnyDoc>('c').insertOne({ _id: 100, k: 100 });
    assert.equal(await b.db('v').collection('c').countDocuments(), 101);
  });

  it('sends a one-shard insert refused as stale again after a move, writing it once', async () => {
    await a.db('admin').command({ shardCollection: 'v.m', key: { k: 1 } });
    await a.db('admin').command({ split: 'v.m', middle: { k: 100 } });
    const staleA = a.db('v').collection<AnyDoc>('m');
    await staleA.insertOne({ _id: 1, k: 150 });
    await b.db('admin').command({ moveChunk: 'v.m', find: { k: 150 }, to: 'shard1', _waitForDelete: true });
    // Router A still sends [100, MaxKey) to shard0, which no longer owns it.
    await staleA.insertOne({ _id: 2, k: 160 });
    const failure = await staleA.insertMany([{ _id: 3, k: 170 }, { _id: 2, k: 160 }, { _id: 4, k: 180 }]).then(() => undefined, (err: unknown) => err as { code?: number; insertedCount?: number; writeErrors?: { index: number; code: number }[] | { index: number; code: number } });
    assert.equal(failure?.code, 11000);
    assert.equal(failure?.insertedCount, 1, 'an ordered batch stops at its duplicate');
    const writeErrors = [failure?.writeErrors ?? []].flat();
    assert.deepEqual(writeErrors.map((e) => [e.index, e.code]), [[1, 11000]]);
    assert.deepEqual(await countsOnShards('m'), [0, 3]);
    assert.deepEqual((await b.db('v').collection<AnyDoc>('m').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id), [1, 2, 3]);
  });

  it('recovers from a drop and re-shard (generation change) without applying a write twice', async () => {
    const staleA = a.db('v').collection<AnyDoc>('c');
    assert.equal(await staleA.countDocuments(), 101);
    await b.db('v').collection('c').drop();
    await b.db('admin').command({ shardCollection: 'v.c', key: { k: 'hashed' } });
    const res = await staleA.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: 1000 + i, k: 1000 + i })));
    assert.equal(res.insertedCount, 50);
    await staleA.updateMany({}, { $inc: { n: 1 } });
    const docs = await b.db('v').collection<AnyDoc>('c').find({}).toArray();
    assert.equal(docs.length, 50);
    assert.ok(docs.every((d) => d.n === 1), 'each document was updated exactly once');
    const perShard = await countsOnShards('c');
    assert.equal(perShard[0]! + perShard[1]!, 50);
    assert.ok(perShard[1]! > 0, 'the re-sharded collection uses both shards');
  });
});
