import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { balancerSuite, chunkCounts, waitFor } from '../helpers/balancer_util.js';

// removeShard with the balancer doing the draining (jstests remove1, remove2, remove3 in our own
// words): a shard holding chunks of two collections and the primary of a database is drained,
// its database moved with movePrimary, and removed; nothing is lost; it can be added back and
// take chunks again.
describe('removeShard drained by the balancer', () => {
  const ctx = balancerSuite({ routers: 2 });

  it('drains a shard with data and a primary database, then completes with nothing lost', { timeout: 180_000 }, async () => {
    await ctx.admin.command({ enableSharding: 'rp', primaryShard: 'shard1' });
    await ctx.admin.command({ shardCollection: 'rp.hashed', key: { x: 'hashed' }, numInitialChunks: 6 });
    await ctx.admin.command({ shardCollection: 'rp.ranged', key: { x: 1 } });
    for (const x of [1000, 2000]) await ctx.admin.command({ split: 'rp.ranged', middle: { x } });
    const db = ctx.client.db('rp');
    await db.collection<AnyDoc>('hashed').insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: i, x: i })));
    await db.collection<AnyDoc>('ranged').insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: i, x: i })));
    await db.collection<AnyDoc>('unsharded').insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: i, v: i })));
    await db.collection<AnyDoc>('unsharded').createIndex({ v: 1 }, { unique: true });
    assert.ok(((await chunkCounts(ctx.config, 'rp.hashed')).get('shard1') ?? 0) > 0);
    assert.equal((await chunkCounts(ctx.config, 'rp.ranged')).get('shard1'), 3);

    const started = await ctx.admin.command({ removeShard: 'shard1' });
    assert.equal(started.state, 'started');
    assert.deepEqual(started.dbsToMove, ['rp']);
    await waitFor('the balancer to drain shard1', async () => {
      const reply = await ctx.admin.command({ removeShard: 'shard1' });
      return reply.state === 'ongoing' && Number(reply.remaining.chunks) === 0 && Number(reply.remaining.dbs) === 1;
    }, 120_000);
    // Writes keep arriving through the other router while the database moves.
    const other = new MongoClient(ctx.cluster.routers[1]!.uri);
    try {
      const writes = (async () => {
        for (let i = 500; i < 600; i++) await other.db('rp').collection<AnyDoc>('unsharded').insertOne({ _id: i, v: i });
      })();
      await ctx.admin.command({ movePrimary: 'rp', to: 'shard0' });
      await writes;
    } finally {
      await other.close();
    }
    const done = await ctx.admin.command({ removeShard: 'shard1' });
    assert.equal(done.state, 'completed');
    assert.deepEqual(((await ctx.admin.command({ listShards: 1 })).shards as AnyDoc[]).map((s) => s._id), ['shard0', 'shard2']);
    for (const ns of ['rp.hashed', 'rp.ranged']) assert.equal((await chunkCounts(ctx.config, ns)).get('shard1'), undefined);
    assert.equal(await db.collection<AnyDoc>('hashed').countDocuments(), 3000);
    assert.equal(await db.collection<AnyDoc>('ranged').countDocuments(), 3000);
    assert.equal(await db.collection<AnyDoc>('unsharded').countDocuments(), 600);
    assert.equal((await ctx.config.collection('databases').findOne({ _id: 'rp' as never }))!.primary, 'shard0');
    await assert.rejects(db.collection<AnyDoc>('unsharded').insertOne({ _id: 9999, v: 1 }), { code: 11000 }, 'the unique index moved too');
  });

  it('takes a removed shard back and gives it chunks again', { timeout: 180_000 }, async () => {
    // remove2/remove3: the removed shard is added again and receives chunks.
    await ctx.admin.command({ addShard: `127.0.0.1:${ctx.cluster.shards[1]!.port}`, name: 'shard1' });
    await ctx.admin.command({ moveChunk: 'rp.ranged', find: { x: 0 }, to: 'shard1', _waitForDelete: true });
    assert.equal((await chunkCounts(ctx.config, 'rp.ranged')).get('shard1'), 1);
    assert.equal(await ctx.client.db('rp').collection('ranged').countDocuments(), 3000);
    assert.equal(await ctx.client.db('rp').collection('ranged').countDocuments({ x: { $lt: 1000 } }), 1000);
  });
});
