import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

describe('moveChunk and moveRange through the router', () => {
  let client: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    client = f.client;
    await client.db('admin').command({ enableSharding: 'mv', primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: 'mv.c', key: { k: 1 } });
    await client.db('mv').collection<AnyDoc>('c').insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, k: i })));
  });

  it('answers ok without moving anything when the chunk is already on the target shard', async () => {
    const before = await client.db('config').collection<AnyDoc>('chunks').find({}).toArray();
    const reply = await client.db('admin').command({ moveChunk: 'mv.c', find: { k: 1 }, to: 'shard0' });
    assert.equal(reply.ok, 1);
    const afterChunks = await client.db('config').collection<AnyDoc>('chunks').find({}).toArray();
    assert.deepEqual(afterChunks.map((c) => [c.shard, c.lastmod.toString()]), before.map((c) => [c.shard, c.lastmod.toString()]));
  });

  it('refuses an unknown shard and an unsharded collection with MongoDB\'s codes', async () => {
    const unknown = await client.db('admin').command({ moveChunk: 'mv.c', find: { k: 1 }, to: 'nowhere' }).catch((e) => e);
    assert.equal(unknown.code, 70);
    await client.db('mv').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    const unsharded = await client.db('admin').command({ moveRange: 'mv.plain', min: { _id: 0 }, toShard: 'shard1' }).catch((e) => e);
    assert.equal(unsharded.code, 118);
  });
});
