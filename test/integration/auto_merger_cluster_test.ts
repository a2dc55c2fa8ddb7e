import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { balancerSuite, chunksOf, FAST_BALANCER_ARGS, waitFor, waitRounds } from '../helpers/balancer_util.js';

// The AutoMerger (7.0): contiguous chunks of one shard that have not moved within the history
// window become one chunk; zone boundaries and other shards' chunks separate runs; the
// {_id: 'automerge', enabled: false} setting turns it off.
describe('AutoMerger', () => {
  const ctx = balancerSuite({
    shards: 2,
    configArgs: [...FAST_BALANCER_ARGS, '--setParameter', 'autoMergerIntervalSecs=0', '--setParameter', 'minSnapshotHistoryWindowInSeconds=1'],
  }, async ({ admin }) => { await admin.command({ balancerStop: 1 }); });

  async function splitInto(ns: string, points: number[]): Promise<void> {
    const db = ns.slice(0, ns.indexOf('.'));
    await ctx.admin.command({ enableSharding: db, primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: ns, key: { k: 1 } });
    for (const k of points) await ctx.admin.command({ split: ns, middle: { k } });
    await ctx.client.db(db).collection(ns.slice(db.length + 1)).insertMany(Array.from({ length: 100 }, (_, i) => ({ k: i })));
  }

  const layout = async (ns: string): Promise<string[]> => (await chunksOf(ctx.config, ns)).map((c) => `${typeof c.min.k === 'number' ? c.min.k : 'MinKey'}:${c.shard}`);

  it('merges runs of settled chunks on one shard, not across other shards or zone boundaries', { timeout: 120_000 }, async () => {
    await ctx.config.collection('settings').updateOne({ _id: 'automerge' as never }, { $set: { enabled: false } }, { upsert: true });
    await splitInto('am.c', [10, 20, 30, 40, 50, 60, 70, 80, 90]);
    await ctx.admin.command({ moveChunk: 'am.c', find: { k: 50 }, to: 'shard1', _waitForDelete: true });
    await ctx.admin.command({ addShardToZone: 'shard0', zone: 'Z' });
    await ctx.admin.command({ updateZoneKeyRange: 'am.c', min: { k: 70 }, max: { k: 90 }, zone: 'Z' });
    await ctx.admin.command({ balancerStart: 1 });
    await waitRounds(ctx.admin, 5);
    assert.equal((await chunksOf(ctx.config, 'am.c')).length, 10, 'automerge disabled: nothing merged');

    await ctx.config.collection('settings').updateOne({ _id: 'automerge' as never }, { $set: { enabled: true } });
    await waitFor('the chunks to merge', async () => (await chunksOf(ctx.config, 'am.c')).length === 5, 60_000);
    assert.deepEqual(await layout('am.c'), ['MinKey:shard0', '50:shard1', '60:shard0', '70:shard0', '90:shard0'], 'runs split by shard1 and the zone range');
    assert.equal(await ctx.client.db('am').collection('c').countDocuments(), 100);
    const merges = await ctx.config.collection('changelog').countDocuments({ what: 'merge', ns: 'am.c' });
    assert.equal(merges, 2, 'one merge per run');
  });

  it('configureCollectionBalancing sets a collection\'s chunk size and keeps the AutoMerger off it', { timeout: 120_000 }, async () => {
    // Stopped while the chunks are made: they count as settled up to a second after they are (the
    // cluster time is in whole seconds), and a round in between would merge them.
    await ctx.admin.command({ balancerStop: 1 });
    await splitInto('amoff.c', [10, 20, 30]);
    await ctx.admin.command({ configureCollectionBalancing: 'amoff.c', chunkSize: 64, enableAutoMerger: false });
    await ctx.admin.command({ balancerStart: 1 });
    const coll = await ctx.config.collection('collections').findOne({ _id: 'amoff.c' as never });
    assert.equal(coll!.maxChunkSizeBytes, 64 * 1024 * 1024);
    assert.equal(coll!.enableAutoMerge, false);
    await new Promise((r) => setTimeout(r, 1500));
    await waitRounds(ctx.admin, 5);
    assert.equal((await chunksOf(ctx.config, 'amoff.c')).length, 4);
    await ctx.admin.command({ configureCollectionBalancing: 'amoff.c', chunkSize: 0, enableAutoMerger: true });
    assert.equal((await ctx.config.collection('collections').findOne({ _id: 'amoff.c' as never }))!.maxChunkSizeBytes, undefined);
    await waitFor('amoff.c to merge', async () => (await chunksOf(ctx.config, 'amoff.c')).length === 1, 60_000);
    await assert.rejects(ctx.admin.command({ configureCollectionBalancing: 'amoff.c', chunkSize: 2048 }), { codeName: 'InvalidOptions' });
    await assert.rejects(ctx.admin.command({ configureCollectionBalancing: 'none.c', chunkSize: 1 }), { codeName: 'NamespaceNotSharded' });
  });
});
