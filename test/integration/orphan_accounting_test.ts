import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BSON, MongoClient } from 'mongodb';
import { waitFor } from '../helpers/balancer_util.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 18 part 1: $shardedDataDistribution, getShardDistribution() and collStats/count through
// the router report what each shard owns by config.chunks, with orphans apart, at every moment:
// after the moves (the 900 s delay), while the range deleter runs, across kill -9 of the donor in
// the middle of a deletion, and for the recipient's copy of an aborted migration.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MONGOSH = path.join(ROOT, 'node_modules/.bin/mongosh');
const run = promisify(execFile);

const NS = 't.m';
const N = 3000;
const PAD = 'x'.repeat(100);
const DOC_BYTES = BSON.calculateObjectSize({ _id: 0, k: 0, pad: PAD });
// Slow deletion, so a test can look at the figures while the deleter runs.
const SLOW_DELETER = ['--setParameter', 'rangeDeleterBatchSize=100', '--setParameter', 'rangeDeleterBatchDelayMS=150'];

interface ShardFigures {
  shardName: string;
  numOwnedDocuments: number;
  numOrphanedDocs: number;
  ownedSizeBytes: number;
  orphanedSizeBytes: number;
}

describe('orphans are counted apart from owned documents', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;

  withCluster({ shards: 3, enableTestCommands: true, shardArgs: SLOW_DELETER }, async (f) => {
    ({ cluster, client: router } = f);
    const admin = router.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 't', primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    await router.db('t').collection<AnyDoc>('m').insertMany(Array.from({ length: N }, (_, k) => ({ _id: k, k, pad: PAD })));
    await admin.command({ split: NS, middle: { k: 1000 } });
    await admin.command({ split: NS, middle: { k: 2000 } });
    await admin.command({ moveChunk: NS, find: { k: 1000 }, to: 'shard1' });
    await admin.command({ moveChunk: NS, find: { k: 2000 }, to: 'shard2' });
  });

  async function distribution(): Promise<Map<string, ShardFigures>> {
    const [entry] = await router.db('admin').aggregate<AnyDoc>([{ $shardedDataDistribution: {} }, { $match: { ns: NS } }]).toArray();
    assert.ok(entry, `${NS} is in $shardedDataDistribution`);
    return new Map((entry.shards as ShardFigures[]).map((s) => [s.shardName, s]));
  }

  // Each shard owns 1000 documents by config.chunks, whatever orphans it holds.
  function assertOwned(figures: Map<string, ShardFigures>): void {
    for (const shard of ['shard0', 'shard1', 'shard2']) {
      const f = figures.get(shard);
      assert.ok(f, `${shard} is listed`);
      assert.equal(f.numOwnedDocuments, 1000, `${shard} owns 1000 documents: ${JSON.stringify(f)}`);
      assert.equal(f.ownedSizeBytes, 1000 * DOC_BYTES, `${shard} owns 1000 documents' bytes`);
      assert.equal(f.orphanedSizeBytes, f.numOrphanedDocs * DOC_BYTES, `${shard}'s orphaned bytes are its orphans' bytes`);
    }
  }

  async function tasksOn(shard: number): Promise<AnyDoc[]> {
    const direct = new MongoClient(cluster.shards[shard]!.uri);
    try {
      return await direct.db('config').collection<AnyDoc>('rangeDeletions').find({ nss: NS }).toArray();
    } finally {
      await direct.close();
    }
  }

  async function storedOn(shard: number): Promise<number> {
    const direct = new MongoClient(cluster.shards[shard]!.uri);
    try {
      return await direct.db('t').collection('m').countDocuments();
    } finally {
      await direct.close();
    }
  }

  it('after the moves, the donor shows its 2000 orphans apart, and its tasks carry MongoDB\'s fields', async () => {
    const figures = await distribution();
    assertOwned(figures);
    assert.equal(figures.get('shard0')!.numOrphanedDocs, 2000);
    assert.equal(figures.get('shard1')!.numOrphanedDocs, 0);
    assert.equal(figures.get('shard2')!.numOrphanedDocs, 0);
    const tasks = await tasksOn(0);
    assert.equal(tasks.length, 2);
    for (const t of tasks) {
      assert.equal(t.numOrphanDocs, 1000);
      assert.equal(t.orphanedSizeBytes, 1000 * DOC_BYTES);
      assert.equal(t.whenToClean, 'delayed');
      assert.equal(t.pending, undefined, 'ready since the commit');
      assert.deepEqual(t.keyPattern, { k: 1 });
      assert.equal(t.timestamp?._bsontype, 'Timestamp');
      assert.deepEqual(Object.keys(t.preMigrationShardVersion), ['e', 't', 'v']);
    }
    assert.deepEqual(await tasksOn(1), [], 'a committed reception leaves no task on the recipient');
  });

  it('lists the collections whose chunks are on shards, not config.system.sessions, which the config server holds', async () => {
    const all = await router.db('admin').aggregate<AnyDoc>([{ $shardedDataDistribution: {} }]).toArray();
    assert.ok(all.some((e) => e.ns === NS));
    assert.ok(!all.some((e) => e.ns === 'config.system.sessions'), JSON.stringify(all.map((e) => e.ns)));
    for (const entry of all) assert.ok((entry.shards as unknown[]).length > 0, `${String(entry.ns)} names its shards`);
  });

  it('count, collStats and $collStats through the router count what the shards own', async () => {
    const coll = router.db('t').collection('m');
    assert.equal(await coll.countDocuments(), N);
    assert.equal(await coll.estimatedDocumentCount(), N);
    const stats = await router.db('t').command({ collStats: 'm' });
    assert.equal(stats.count, N);
    const perShard = await coll.aggregate<AnyDoc>([{ $collStats: { storageStats: {}, count: {} } }]).toArray();
    for (const s of perShard) {
      assert.equal(s.storageStats.count, 1000, `${s.shard} counts what it owns`);
      assert.equal(s.count, 1000);
    }
    assert.equal(perShard.find((s) => s.shard === 'shard0').storageStats.numOrphanDocs, 2000);
  });

  it('mongosh getShardDistribution() shows each shard\'s owned documents and bytes', { timeout: 120_000 }, async () => {
    const { stdout } = await run(MONGOSH, [cluster.routers[0]!.uri, '--quiet', '--norc', '--json=relaxed', '--eval', `db.getSiblingDB('t').m.getShardDistribution()`],
      { timeout: 90_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
    const printed = (JSON.parse(stdout) as AnyDoc).value as Record<string, AnyDoc>;
    const data: string[] = [];
    for (const shard of ['shard0', 'shard1', 'shard2']) {
      const key = Object.keys(printed).find((k) => k.startsWith(`Shard ${shard} `));
      assert.ok(key, `${shard} in ${stdout}`);
      assert.equal(printed[key].docs, 1000, `${shard}: ${JSON.stringify(printed[key])}`);
      data.push(printed[key].data);
    }
    // shard1 and shard2 hold no orphans: the donor's data must read the same as theirs.
    assert.equal(new Set(data).size, 1, `every shard owns the same data: ${data.join(', ')}`);
    assert.equal(printed.Totals.docs, N);
  });

  it('while the deleter runs, and across kill -9 of the donor in the middle of it, every figure stays exact', { timeout: 120_000 }, async () => {
    // The restart starts the 900 s delay again; with no delay the deletion starts at once.
    const args = ['--enableTestCommands', ...SLOW_DELETER, '--setParameter', 'orphanCleanupDelaySecs=0'];
    await cluster.shards[0]!.kill9();
    cluster.shards[0] = await restartNode(cluster.shards[0]!, { role: 'shard', extraArgs: args });
    const seen: number[] = [];
    await waitFor('the deletion is under way', async () => {
      const figures = await distribution();
      assertOwned(figures);
      const orphans = figures.get('shard0')!.numOrphanedDocs;
      seen.push(orphans);
      return orphans < 1500 && orphans > 0;
    }, 60_000, 50);
    await cluster.shards[0]!.kill9();
    cluster.shards[0] = await restartNode(cluster.shards[0]!, { role: 'shard', extraArgs: args });
    // What a batch deleted and what it took off the counters committed together, or neither did.
    const afterCrash = await distribution();
    assertOwned(afterCrash);
    seen.push(afterCrash.get('shard0')!.numOrphanedDocs);
    await waitFor('the orphans are gone', async () => {
      const figures = await distribution();
      assertOwned(figures);
      const orphans = figures.get('shard0')!.numOrphanedDocs;
      seen.push(orphans);
      return orphans === 0;
    }, 60_000, 50);
    assert.ok(seen.every((n, i) => i === 0 || n <= seen[i - 1]!), `orphans only go down: ${seen.join(' ')}`);
    assert.equal(await storedOn(0), 1000);
    await waitFor('the tasks are gone', async () => (await tasksOn(0)).length === 0, 10_000, 50);
  });

  it('an aborted migration\'s copy on the recipient counts as orphans until its task deletes it', { timeout: 120_000 }, async () => {
    const args = ['--enableTestCommands', ...SLOW_DELETER];
    const donor = new MongoClient(cluster.shards[1]!.uri);
    await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
    const move = router.db('admin').command({ moveChunk: NS, find: { k: 1000 }, to: 'shard2' }).then(() => 'moved', (e: Error) => e.message);
    // Steady: the recipient holds a full copy under its pending task.
    await donor.db('admin').command({ waitForFailPoint: 'moveChunkHangAtStep3', timesEntered: 1, maxTimeMS: 30_000 });
    await donor.close();
    let figures = await distribution();
    assertOwned(figures);
    assert.equal(figures.get('shard2')!.numOrphanedDocs, 1000, 'the copy in flight is not the recipient\'s yet');
    const [pending] = await tasksOn(2);
    assert.equal(pending.pending, true);
    assert.equal(pending.numOrphanDocs, 1000);
    assert.deepEqual(pending.keyPattern, { k: 1 });
    // kill -9 of the donor while it is paused: its recovery aborts the migration, which makes the
    // recipient's task ready, and that one runs at once.
    await cluster.shards[1]!.kill9();
    cluster.shards[1] = await restartNode(cluster.shards[1]!, { role: 'shard', extraArgs: args });
    assert.notEqual(await move, 'moved');
    const seen: number[] = [];
    await waitFor('the recipient\'s copy is deleted', async () => {
      figures = await distribution();
      assertOwned(figures);
      seen.push(figures.get('shard2')!.numOrphanedDocs);
      return seen.at(-1) === 0;
    }, 60_000, 50);
    assert.ok(seen.some((n) => n > 0 && n < 1000), `seen while deleting: ${seen.join(' ')}`);
    assert.equal(await storedOn(2), 1000);
    // The donor's recovery logs the failure, as MigrationSourceManager::cleanupOnError does.
    const logged = await router.db('config').collection<AnyDoc>('changelog').find({ what: { $in: ['moveChunk.error', 'moveChunk.from'] }, ns: NS, 'details.to': 'shard2', 'details.min': { k: 1000 } }).toArray();
    assert.deepEqual(logged.map((e) => [e.what, e.shard]).sort(), [['moveChunk.error', 'shard1'], ['moveChunk.from', 'shard1']]);
  });
});
