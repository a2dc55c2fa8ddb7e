import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';

// Drops through the DDL coordinators of the database's primary shard (src/ddl): state documents,
// persisted critical sections, joins, $currentOp, and a kill -9 of the primary at every phase.
const FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';
const DROP_PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('DDL coordinators on the primary shard', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let shardClients: MongoClient[];

  before(async () => {
    cluster = await spawnCluster({ shards: 2, enableTestCommands: true });
    client = new MongoClient(cluster.routers[0]!.uri);
    shardClients = cluster.shards.map((s) => new MongoClient(s.uri));
  });

  after(async () => {
    await Promise.all([client?.close(), ...(shardClients ?? []).map((c) => c.close())]);
    await cluster?.stop();
  });

  // A sharded collection with documents on both shards.
  async function shardedOnBoth(db: string, coll: string): Promise<void> {
    const admin = client.db('admin');
    await admin.command({ enableSharding: db, primaryShard: 'shard0' });
    await admin.command({ shardCollection: `${db}.${coll}`, key: { k: 1 } });
    await client.db(db).collection<AnyDoc>(coll).insertMany(Array.from({ length: 20 }, (_, k) => ({ _id: k, k })));
    await admin.command({ split: `${db}.${coll}`, middle: { k: 10 } });
    await admin.command({ moveChunk: `${db}.${coll}`, find: { k: 15 }, to: 'shard1' });
  }

  async function coordinatorDocs(shard = 0): Promise<AnyDoc[]> {
    return shardClients[shard]!.db('config').collection<AnyDoc>('system.sharding_ddl_coordinators').find().toArray();
  }

  async function criticalSectionDocs(): Promise<AnyDoc[]> {
    const all = await Promise.all(shardClients.map((c) => c.db('config').collection<AnyDoc>('collection_critical_sections').find().toArray()));
    return all.flat();
  }

  async function inconsistencies(): Promise<AnyDoc[]> {
    const reply = await client.db('admin').command({ checkMetadataConsistency: 1 });
    return reply.cursor.firstBatch as AnyDoc[];
  }

  async function assertDropped(db: string, coll: string): Promise<void> {
    const ns = `${db}.${coll}`;
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: ns }), 0, 'config.collections forgets it');
    for (const [i, shard] of shardClients.entries()) {
      assert.deepEqual(await shard.db(db).listCollections({ name: coll }).toArray(), [], `shard${i} holds no copy`);
      assert.equal(await shard.db('config').collection<AnyDoc>('rangeDeletions').countDocuments({ nss: ns }), 0, `shard${i} keeps no range deletion task`);
    }
    assert.deepEqual(await coordinatorDocs(), [], 'no state document is left');
    assert.deepEqual(await criticalSectionDocs(), [], 'no critical section is left');
    assert.deepEqual(await inconsistencies(), []);
  }

  it('drops a sharded collection everywhere and leaves nothing of the coordinator', async () => {
    await shardedOnBoth('dropone', 'c');
    const reply = await client.db('dropone').command({ drop: 'c' });
    assert.equal(reply.ok, 1);
    assert.equal(reply.ns, 'dropone.c');
    await assertDropped('dropone', 'c');
    // The namespace is usable again, unsharded, at once: no lock or section is held.
    await client.db('dropone').collection<AnyDoc>('c').insertOne({ _id: 'again' });
    assert.equal(await client.db('dropone').collection('c').countDocuments(), 1);
  });

  it('shows the coordinator in $currentOp, persists its phase and critical sections, holds CRUD, and lets a second drop join', async () => {
    await shardedOnBoth('dropheld', 'c');
    const primary = shardClients[0]!.db('admin');
    const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'DropCollectionCoordinator', phase: 'kDropCollection' } });
    try {
      const first = client.db('dropheld').command({ drop: 'c' });
      await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
      const second = client.db('dropheld').command({ drop: 'c' });

      const [doc] = await coordinatorDocs();
      assert.deepEqual(doc._id, { namespace: 'dropheld.c', operationType: 'dropCollection' });
      assert.equal(doc.phase, 'kDropCollection');
      assert.deepEqual(doc.request, { _shardsvrDropCollection: 'c' });
      assert.ok(doc.databaseVersion?.uuid !== undefined, 'the router attached the database version');
      assert.ok(doc.session?.lsid?.id !== undefined && doc.session.txnNumber !== undefined);
      assert.deepEqual(doc.shards.map((s: AnyDoc) => s._id), ['shard0', 'shard1']);

      const sections = await criticalSectionDocs();
      assert.deepEqual(sections.map((s) => [s._id, s.blockReads, s.reason]), [
        ['dropheld.c', true, { command: 'dropCollection', ns: 'dropheld.c' }],
        ['dropheld.c', true, { command: 'dropCollection', ns: 'dropheld.c' }],
      ]);

      const ops = await client.db('admin').aggregate<AnyDoc>([{ $currentOp: {} }, { $match: { desc: 'DropCollectionCoordinator' } }]).toArray();
      assert.equal(ops.length, 1);
      assert.equal(ops[0]!.ns, 'dropheld.c');
      assert.equal(ops[0]!.currentPhase, 'kDropCollection');
      assert.deepEqual(ops[0]!.command, { _shardsvrDropCollection: 'c' });
      assert.equal(ops[0]!.active, true);

      // Reads wait behind the critical section, and find the collection gone once it is released.
      const read = client.db('dropheld').collection('c').find({}).toArray();
      const early = await Promise.race([read.then(() => 'answered'), sleep(500).then(() => 'held')]);
      assert.equal(early, 'held', 'a read waits while the collection is blocked');

      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      const [a, b] = await Promise.all([first, second]);
      assert.deepEqual([a.ok, b.ok], [1, 1], 'both drops answer ok');
      assert.deepEqual(await read, [], 'the held read sees the collection dropped');
      await assertDropped('dropheld', 'c');
    } finally {
      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
    }
  });

  // The primary is killed once the phase is persisted and before its work: the restarted shard
  // takes the coordinator up again from its state document and finishes the drop.
  async function killPrimaryAt(phase: string, desc: string, start: () => Promise<unknown>): Promise<void> {
    const primary = shardClients[0]!.db('admin');
    const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc, phase } });
    const request = start().catch(() => undefined); // its connection dies with the shard
    await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
    assert.equal((await coordinatorDocs())[0]?.phase, phase, 'the phase is persisted before the shard dies');
    await shardClients[0]!.close();
    await cluster.shards[0]!.kill9();
    cluster.shards[0] = await restartNode(cluster.shards[0]!, { extraArgs: ['--enableTestCommands'] });
    shardClients[0] = new MongoClient(cluster.shards[0]!.uri);
    await request;
    await until('the recovered coordinator to finish', async () => ((await coordinatorDocs()).length === 0 ? true : undefined));
  }

  for (const phase of DROP_PHASES) {
    it(`drop: kill -9 of the primary shard before ${phase}, restart, the drop completes`, async () => {
      const db = `crash${phase.toLowerCase()}`;
      await shardedOnBoth(db, 'c');
      await killPrimaryAt(phase, 'DropCollectionCoordinator', () => client.db(db).command({ drop: 'c' }));
      await assertDropped(db, 'c');
      await client.db(db).collection<AnyDoc>('c').insertOne({ _id: 1 });
      assert.equal(await client.db(db).collection('c').countDocuments(), 1, 'the namespace takes writes again');
    });
  }

  it('dropDatabase: kill -9 of the primary shard in kDrop, restart, the database is gone with its sharded and unsharded collections', async () => {
    await shardedOnBoth('crashdb', 'sharded');
    await client.db('crashdb').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    await killPrimaryAt('kDrop', 'DropDatabaseCoordinator', () => client.db('crashdb').dropDatabase());
    assert.equal(await client.db('config').collection<AnyDoc>('databases').countDocuments({ _id: 'crashdb' }), 0);
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: /^crashdb\./ }), 0);
    for (const shard of shardClients) assert.deepEqual(await shard.db('crashdb').listCollections().toArray(), []);
    assert.deepEqual(await criticalSectionDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  });
});
