import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';

// The crash matrix of issue 4 on real processes: pause a migration at a step with a fail point,
// kill -9 the donor or the recipient there, restart it on the same dbpath and port, and check that
// the migration ended with exactly one owner of the range, every document on it, and nothing lost.
const N = 2000;
const SPLIT = 1000;
const WAIT_MS = 20_000;

interface CrashCase {
  readonly failPoint: string;
  readonly victim: 'donor' | 'recipient';
  // Writes to the range are accepted at this step (no critical section yet), so some are made
  // while the migration is paused, just before the crash.
  readonly writesWhilePaused: boolean;
  // Where the range must end up: only a commit the config server applied before the crash moves it.
  readonly ends: 'donor' | 'recipient';
}

const CASES: readonly CrashCase[] = [
  { failPoint: 'moveChunkHangAtStep3', victim: 'donor', writesWhilePaused: true, ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep5', victim: 'donor', writesWhilePaused: false, ends: 'donor' },
  { failPoint: 'moveChunkHangAtStep6', victim: 'donor', writesWhilePaused: false, ends: 'recipient' },
  { failPoint: 'migrateThreadHangAtStep3', victim: 'recipient', writesWhilePaused: true, ends: 'donor' },
  { failPoint: 'migrateThreadHangAtStep5', victim: 'recipient', writesWhilePaused: false, ends: 'recipient' },
];

describe('a migration survives kill -9 of the donor or the recipient at its steps', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  const direct: MongoClient[] = [];
  // Every _id acknowledged through the router; all have k < SPLIT, so all are in the moved range.
  const written: string[] = [];

  before(async () => {
    cluster = await spawnCluster({ shards: 2, enableTestCommands: true });
    router = new MongoClient(cluster.routers[0]!.uri);
    for (const s of cluster.shards) direct.push(new MongoClient(s.uri));
    await router.db('admin').command({ enableSharding: 'mc', primaryShard: 'shard0' });
    await router.db('admin').command({ shardCollection: 'mc.c', key: { k: 1 } });
    await router.db('admin').command({ split: 'mc.c', middle: { k: SPLIT } });
    await router.db('mc').collection<AnyDoc>('c').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: i })));
  });

  after(async () => {
    for (const d of direct) await d.close();
    await router?.close();
    await cluster?.stop();
  });

  for (const c of CASES) {
    it(`${c.failPoint}, kill -9 the ${c.victim}: the range ends on the ${c.ends}`, async () => {
      const donor = await ownerOfRange();
      const recipient = 1 - donor;
      await writeRange(`${c.failPoint}-before`, 50);

      const victim = c.victim === 'donor' ? donor : recipient;
      const admin = direct[victim]!.db('admin');
      const { count } = await admin.command({ configureFailPoint: c.failPoint, mode: 'alwaysOn' });
      const move = router.db('admin').command({ moveChunk: 'mc.c', find: { k: 0 }, to: `shard${recipient}`, _waitForDelete: true })
        .then(() => undefined, (err: unknown) => err);
      await admin.command({ waitForFailPoint: c.failPoint, timesEntered: count + 1, maxTimeMS: WAIT_MS });
      if (c.writesWhilePaused) await writeRange(`${c.failPoint}-paused`, 20);

      await direct[victim]!.close();
      await cluster.shards[victim]!.kill9();
      cluster.shards[victim] = await restartNode(cluster.shards[victim]!, { role: 'shard', extraArgs: ['--enableTestCommands'] });
      direct[victim] = new MongoClient(cluster.shards[victim]!.uri);
      // The moveChunk fails when the donor dies; when the recipient dies the donor aborts (or
      // commits, past the recipient's commit) once it is back. Either way it ends.
      const outcome = await move;
      if (c.victim === 'donor') assert.ok(outcome instanceof Error, 'the donor died under the moveChunk');
      else assert.equal(outcome === undefined, c.ends === 'recipient', `moveChunk's reply matches the outcome: ${String(outcome)}`);

      await until('the donor forgets the migration', async () => (await countOn(donor, 'config', 'migrationCoordinators', {})) === 0);
      const owner = await ownerOfRange();
      assert.equal(owner, c.ends === 'donor' ? donor : recipient);
      const inRange = { k: { $lt: SPLIT } };
      assert.equal(await countOn(owner, 'mc', 'c', inRange), SPLIT + written.length, 'the owner has every document of the range');
      await until('the other shard deletes its orphans', async () => (await countOn(1 - owner, 'mc', 'c', inRange)) === 0);
      await until('no range deletion task is left', async () => (await countOn(0, 'config', 'rangeDeletions', {})) + (await countOn(1, 'config', 'rangeDeletions', {})) === 0);

      const coll = router.db('mc').collection<AnyDoc>('c');
      assert.equal(await coll.countDocuments({}), N + written.length);
      assert.equal(await coll.countDocuments({ _id: { $in: written } }), written.length, 'every acknowledged write is there');
    });
  }

  async function ownerOfRange(): Promise<number> {
    const chunk = await router.db('config').collection<AnyDoc>('chunks').findOne({ 'max.k': SPLIT });
    assert.ok(chunk, 'the chunk [MinKey, SPLIT) exists');
    return Number(String(chunk.shard).replace('shard', ''));
  }

  async function writeRange(prefix: string, n: number): Promise<void> {
    const docs = Array.from({ length: n }, (_, i) => ({ _id: `${prefix}-${i}`, k: (i * 37) % SPLIT }));
    await router.db('mc').collection<AnyDoc>('c').insertMany(docs);
    written.push(...docs.map((d) => d._id));
  }

  function countOn(shard: number, db: string, coll: string, filter: AnyDoc): Promise<number> {
    return direct[shard]!.db(db).collection<AnyDoc>(coll).countDocuments(filter);
  }
});

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
