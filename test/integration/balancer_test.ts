import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import {
  balancerSuite, chunkCounts, chunksOf, commits, FAST_RANGE_DELETION_ARGS, ownedBytes, rounds, waitFor, waitRounds,
} from '../helpers/balancer_util.js';

const MB = 1024 * 1024;
const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');

// The balancer on real processes: data-size balancing (jstests balancing_based_on_size), the
// chunk-count policy, windows (balancer_window), stop/start, noBalance, setAllowMigrations, jumbo.
describe('balancer', () => {
  const ctx = balancerSuite({}, async ({ admin, config }) => {
    await admin.command({ balancerStop: 1 });
    // Through the router: config writes go to the config server.
    await config.collection('settings').updateOne({ _id: 'chunksize' as never }, { $set: { value: 1 } }, { upsert: true });
  });
  let capped: SpawnedNode | undefined;
  after(async () => {
    await capped?.stop();
    if (capped) removeDir(capped.dbpath);
  });

  async function loadOnPrimary(db: string, coll: string, docs: number, bytes: number, key: (i: number) => unknown = (i) => i): Promise<void> {
    await ctx.admin.command({ enableSharding: db, primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: `${db}.${coll}`, key: { k: 1 } });
    const pad = 'x'.repeat(bytes);
    for (let i = 0; i < docs; i += 500) {
      await ctx.client.db(db).collection<AnyDoc>(coll).insertMany(Array.from({ length: Math.min(500, docs - i) }, (_, j) => ({ _id: i + j, k: key(i + j), pad })));
    }
  }

  it('balances by data size until shards differ by less than 3 chunk sizes, then stops moving', { timeout: 180_000 }, async () => {
    await loadOnPrimary('size', 'c', 3000, 4000); // about 12 MB, all in one chunk on shard0
    assert.deepEqual(await ownedBytes(ctx.cluster, 'size.c').then((b) => b.map((x) => x > 0)), [true, false, false]);
    await ctx.admin.command({ balancerStart: 1 });
    await waitFor('size.c to become balanced', async () => {
      const status = await ctx.admin.command({ balancerCollectionStatus: 'size.c' });
      return status.balancerCompliant === true;
    }, 120_000);
    const sizes = await ownedBytes(ctx.cluster, 'size.c');
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 3 * MB, `spread within 3 chunk sizes: ${sizes}`);
    assert.ok(sizes.every((s) => s > 0), `every shard got data: ${sizes}`);
    const moved = await commits(ctx.config, 'size.c');
    await waitRounds(ctx.admin, 3);
    assert.equal(await commits(ctx.config, 'size.c'), moved, 'no more moves once balanced');
    const coll = ctx.client.db('size').collection<AnyDoc>('c');
    assert.equal(await coll.countDocuments(), 3000);
    const ids = (await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id as number);
    assert.equal(new Set(ids).size, 3000);
    // Each migration moved at most one chunk size, cut off the start of a chunk; the moved chunk's
    // size estimate is what the recipient cloned.
    const moves = (await chunksOf(ctx.config, 'size.c')).filter((c) => c.shard !== 'shard0');
    assert.ok(moves.length > 0 && moves.every((c) => c.estimatedDataSizeBytes > 0 && c.estimatedDataSizeBytes <= MB), JSON.stringify(moves.map((c) => c.estimatedDataSizeBytes)));
    const round = await ctx.config.collection('actionlog').find({ what: 'balancer.round' }).sort({ time: -1 }).limit(1).next();
    assert.equal(typeof round!.details.executionTimeMillis, 'number');
    assert.equal(round!.details.errorOccured, false);
  });

  it('noBalance and setAllowMigrations keep a collection where it is', { timeout: 120_000 }, async () => {
    await ctx.admin.command({ balancerStop: 1 });
    await loadOnPrimary('frozen', 'a', 1500, 4000);
    await loadOnPrimary('frozen', 'b', 1500, 4000);
    await ctx.config.collection('collections').updateOne({ _id: 'frozen.a' as never }, { $set: { noBalance: true } });
    await ctx.admin.command({ setAllowMigrations: 'frozen.b', allowMigrations: false });
    await assert.rejects(ctx.admin.command({ moveChunk: 'frozen.b', find: { k: 0 }, to: 'shard1' }), { codeName: 'ConflictingOperationInProgress' });
    await ctx.admin.command({ balancerStart: 1 });
    await waitRounds(ctx.admin, 5);
    assert.deepEqual([...(await chunkCounts(ctx.config, 'frozen.a')).keys()], ['shard0']);
    assert.deepEqual([...(await chunkCounts(ctx.config, 'frozen.b')).keys()], ['shard0']);
    await ctx.admin.command({ setAllowMigrations: 'frozen.b', allowMigrations: true });
    await waitFor('frozen.b to move', async () => (await commits(ctx.config, 'frozen.b')) > 0);
    await ctx.config.collection('collections').updateOne({ _id: 'frozen.a' as never }, { $set: { noBalance: false } });
    await waitFor('frozen.a to move', async () => (await commits(ctx.config, 'frozen.a')) > 0);
  });

  it('moves nothing outside the active window or while stopped', { timeout: 120_000 }, async () => {
    await ctx.admin.command({ balancerStop: 1 });
    await loadOnPrimary('window', 'c', 1500, 4000);
    const now = new Date();
    const hhmm = (d: Date): string => `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    const later = (h: number): Date => new Date(now.getTime() + h * 3600_000);
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $set: { activeWindow: { start: hhmm(later(2)), stop: hhmm(later(3)) } } });
    await ctx.admin.command({ balancerStart: 1 });
    const before = await rounds(ctx.admin);
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(await commits(ctx.config, 'window.c'), 0, 'outside the window nothing moves');
    assert.equal(await rounds(ctx.admin), before, 'no round runs outside the window');
    // Stopped the way a user does it: sh.stopBalancer() from mongosh.
    await promisify(execFile)(MONGOSH, [ctx.cluster.routers[0]!.uri, '--quiet', '--norc', '--eval', 'sh.stopBalancer()'], { timeout: 60_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
    assert.equal((await ctx.admin.command({ balancerStatus: 1 })).mode, 'off');
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $set: { activeWindow: { start: hhmm(later(-1)), stop: hhmm(later(1)) } } });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await commits(ctx.config, 'window.c'), 0, 'a stopped balancer moves nothing');
    await ctx.admin.command({ balancerStart: 1 });
    await waitFor('window.c to move inside the window', async () => (await commits(ctx.config, 'window.c')) > 0);
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $unset: { activeWindow: '' } });
  });

  it('marks a chunk that cannot be split jumbo, and moves it only when asked to', { timeout: 120_000 }, async () => {
    await ctx.admin.command({ balancerStop: 1 });
    await loadOnPrimary('jumbo', 'c', 1000, 5000, () => 7); // one shard-key value, about 5 MB
    await ctx.admin.command({ balancerStart: 1 });
    await waitFor('the chunk to be marked jumbo', async () => (await chunksOf(ctx.config, 'jumbo.c')).some((c) => c.jumbo === true));
    assert.equal(await commits(ctx.config, 'jumbo.c'), 0);
    await ctx.admin.command({ clearJumboFlag: 'jumbo.c', find: { k: 7 } });
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $set: { attemptToBalanceJumboChunks: true } });
    await waitFor('the jumbo chunk to move', async () => (await commits(ctx.config, 'jumbo.c')) > 0);
    await ctx.admin.command({ balancerStop: 1 });
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $unset: { attemptToBalanceJumboChunks: '' } });
    assert.equal(await ctx.client.db('jumbo').collection('c').countDocuments(), 1000);
  });

  it('balances by chunk count under the chunkCount policy until shards differ by less than 2', { timeout: 120_000 }, async () => {
    await ctx.admin.command({ balancerStop: 1 });
    await ctx.admin.command({ enableSharding: 'count', primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: 'count.c', key: { k: 1 } });
    for (let i = 1; i < 30; i++) await ctx.admin.command({ split: 'count.c', middle: { k: i * 10 } });
    await ctx.client.db('count').collection('c').insertMany(Array.from({ length: 300 }, (_, i) => ({ k: i })));
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $set: { policy: 'chunkCount' } });
    await ctx.admin.command({ balancerStart: 1 });
    await waitFor('count.c to spread by chunk count', async () => {
      const counts = [...(await chunkCounts(ctx.config, 'count.c')).values()];
      return counts.length === 3 && Math.max(...counts) - Math.min(...counts) < 2;
    }, 90_000);
    const moved = await commits(ctx.config, 'count.c');
    await waitRounds(ctx.admin, 3);
    assert.equal(await commits(ctx.config, 'count.c'), moved);
    assert.equal(await ctx.client.db('count').collection('c').countDocuments(), 300);
    await ctx.admin.command({ balancerStop: 1 });
    await ctx.config.collection('settings').updateOne({ _id: 'balancer' as never }, { $unset: { policy: '' } });
  });

  it('sh.status() shows the balancer state and the recent migrations', { timeout: 120_000 }, async () => {
    await ctx.admin.command({ balancerStart: 1 });
    const { stdout } = await promisify(execFile)(MONGOSH, [ctx.cluster.routers[0]!.uri, '--quiet', '--norc', '--eval', 'sh.status()'], { timeout: 60_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
    const status = stdout.replace(/\s+/g, ' ');
    assert.match(status, /'Currently enabled': 'yes'/);
    assert.match(status, /'Failed balancer rounds in last 5 attempts': 0/);
    assert.match(status, /'Migration Results for the last 24 hours': \{.*?'?\d+'?: 'Success'/, status);
  });

  it('moves nothing onto a shard above its addShard maxSize', { timeout: 180_000 }, async () => {
    await ctx.admin.command({ balancerStop: 1 });
    capped = await spawnNode({ role: 'shard', extraArgs: FAST_RANGE_DELETION_ARGS });
    await ctx.admin.command({ addShard: `127.0.0.1:${capped.port}`, name: 'capped', maxSize: 2 });
    assert.equal((await ctx.config.collection('shards').findOne({ _id: 'capped' as never }))!.maxSize, 2);
    await loadOnPrimary('cap', 'c', 3000, 4000);
    await ctx.admin.command({ balancerStart: 1 });
    // Settled: five rounds in a row without a migration.
    let last = -1;
    await waitFor('the balancer to settle', async () => {
      const now = await ctx.config.collection('changelog').countDocuments({ what: 'moveChunk.commit' });
      if (now !== last) {
        last = now;
        return false;
      }
      await waitRounds(ctx.admin, 5);
      return (await ctx.config.collection('changelog').countDocuments({ what: 'moveChunk.commit' })) === last;
    }, 150_000, 100);
    const client2 = new MongoClient(`mongodb://127.0.0.1:${capped.port}/?directConnection=true`);
    try {
      const names = ['size.c', 'frozen.a', 'frozen.b', 'window.c', 'jumbo.c', 'count.c', 'cap.c'].map((ns) => ({ ns }));
      const stats = (await client2.db('admin').command({ _shardsvrGetStatsForBalancing: 1, collections: names })).stats as AnyDoc[];
      const total = stats.reduce((sum, s) => sum + Number(s.collSize), 0);
      assert.ok(total > 0, 'the capped shard received data while under its cap');
      assert.ok(total <= 3 * MB, `at most one chunk size past its 2 MB cap: ${total}`);
    } finally {
      await client2.close();
    }
    assert.equal(await ctx.client.db('cap').collection('c').countDocuments(), 3000);
  });
});
