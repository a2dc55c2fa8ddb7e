import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';

// Drops and renames through the DDL coordinators of the database's primary shard (src/ddl): state documents,
// persisted critical sections, joins, $currentOp, and a kill -9 of the primary at every phase.
const FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';
const DROP_PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'];
const RENAME_PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kBlockCrudAndRename', 'kRenameMetadata', 'kUnblockCrud'];

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
    cluster = await spawnCluster({ shards: 2, routers: 2, enableTestCommands: true });
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
  // The renamed collection as both routers see it: the second one cached the old name's routing.
  async function assertRenamed(db: string, from: string, to: string, uuid: unknown, epoch: unknown): Promise<void> {
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.${to}` });
    assert.deepEqual(entry?.uuid, uuid, 'the target keeps the source UUID');
    assert.notDeepEqual(entry?.lastmodEpoch, epoch, 'under a new epoch');
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: `${db}.${from}` }), 0);
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      for (const c of [client, other]) {
        assert.equal(await c.db(db).collection(to).countDocuments(), 20);
        assert.deepEqual(await c.db(db).collection<AnyDoc>(to).findOne({ k: 15 }), { _id: 15, k: 15 });
        assert.equal(await c.db(db).collection(from).countDocuments(), 0);
        await c.db(db).collection<AnyDoc>(to).updateOne({ k: 3 }, { $set: { seen: true } });
      }
    } finally {
      await other.close();
    }
    assert.deepEqual(await coordinatorDocs(), []);
    assert.deepEqual(await criticalSectionDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  }

  it('renames a sharded collection: same UUID, new epoch, data and routing under the new name through a stale router', async () => {
    await shardedOnBoth('ren', 'src');
    const other = new MongoClient(cluster.routers[1]!.uri);
    assert.equal(await other.db('ren').collection('src').countDocuments(), 20, 'the second router caches the old routing');
    await other.close();
    const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'ren.src' });
    await client.db('admin').command({ renameCollection: 'ren.src', to: 'ren.dst' });
    await assertRenamed('ren', 'src', 'dst', before!.uuid, before!.lastmodEpoch);
  });

  it('renames an unsharded collection over a sharded target with dropTarget, and refuses without it', async () => {
    await shardedOnBoth('rent', 'target');
    await client.db('rent').collection<AnyDoc>('plain').insertMany([{ _id: 'a' }, { _id: 'b' }]);
    const refused = await client.db('admin').command({ renameCollection: 'rent.plain', to: 'rent.target' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(refused?.code, 48);
    assert.equal(refused?.codeName, 'NamespaceExists');
    assert.deepEqual(await coordinatorDocs(), [], 'a refused rename leaves no state document');
    const missing = await client.db('admin').command({ renameCollection: 'rent.nothing', to: 'rent.other' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(missing?.code, 26);
    await client.db('admin').command({ renameCollection: 'rent.plain', to: 'rent.target', dropTarget: true });
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: 'rent.target' }), 0, 'the target is no longer sharded');
    assert.deepEqual((await client.db('rent').collection<AnyDoc>('target').find().sort({ _id: 1 }).toArray()).map((d) => d._id), ['a', 'b']);
    for (const shard of shardClients) assert.deepEqual(await shard.db('rent').listCollections({ name: 'plain' }).toArray(), []);
    assert.deepEqual(await shardClients[1]!.db('rent').listCollections({ name: 'target' }).toArray(), [], 'the dropped target left no copy on the other shard');
    assert.deepEqual(await inconsistencies(), []);
  });

  for (const phase of RENAME_PHASES) {
    it(`renameCollection: kill -9 of the primary shard before ${phase}, restart, the rename completes`, async () => {
      const db = `crashren${phase.toLowerCase()}`;
      await shardedOnBoth(db, 'src');
      const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.src` });
      await killPrimaryAt(phase, 'RenameCollectionCoordinator', () => client.db('admin').command({ renameCollection: `${db}.src`, to: `${db}.dst` }));
      await assertRenamed(db, 'src', 'dst', before!.uuid, before!.lastmodEpoch);
    });
  }
});
