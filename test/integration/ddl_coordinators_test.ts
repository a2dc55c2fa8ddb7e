import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Long, MaxKey, MinKey, MongoClient } from 'mongodb';
import { WireClient } from '../../src/wire/client.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// shardCollection, drops, renames and shard key refinements through the DDL coordinators of the database's primary shard (src/ddl): state documents,
// persisted critical sections, joins, $currentOp, and a kill -9 of the primary at every phase.
const FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';
const CREATE_PHASES = [
  'kCheckPreconditions', 'kEnterWriteCriticalSectionOnCoordinator', 'kCreateCollectionOnCoordinator', 'kEnterCriticalSectionOnDataShards',
  'kCreateCollectionOnParticipants', 'kCommitOnShardingCatalog', 'kExitCriticalSection',
];
const COLL_MOD_PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kUpdateShards'];
const DROP_PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'];
const REFINE_PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kCommit'];
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
  let connect: (uri: string) => MongoClient;

  withCluster({ shards: 2, routers: 2, enableTestCommands: true }, async (f) => {
    // A client a test makes in place of one it closed is the suite's too, closed with it.
    connect = f.connect;
    ({ cluster, client } = f);
    shardClients = cluster.shards.map((s) => f.connect(s.uri));
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

  it('a stale router lists no collections of a database the other router dropped, as mongos answers', async () => {
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      await client.db('stalelist').collection<AnyDoc>('c').insertOne({ _id: 1 });
      const names = async (): Promise<string[]> => (await other.db('stalelist').listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      assert.deepEqual(await names(), ['c'], 'the other router caches the database');
      await client.db('stalelist').dropDatabase();
      assert.deepEqual(await names(), [], 'it learns from the shard that the database is gone, and answers none');
    } finally {
      await other.close();
    }
  });

  // mongos's appendEmptyResultSet: reads of a database config.databases does not name answer
  // nothing, and create nothing; so do they through a router that still caches it.
  it('reads of a database that does not exist answer nothing, through a fresh and through a stale router', async () => {
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      const reads = async (c: MongoClient, db: string): Promise<unknown[]> => {
        const coll = c.db(db).collection<AnyDoc>('c');
        return [
          await coll.find({}).toArray(), await coll.findOne({ _id: 1 }), await coll.countDocuments(), await coll.distinct('_id'),
          await coll.aggregate([{ $match: {} }]).toArray(), await c.db(db).command({ count: 'c' }).then((r) => r.n),
        ];
      };
      const nothing = [[], null, 0, [], [], 0];
      assert.deepEqual(await reads(client, 'neverwritten'), nothing);
      assert.equal(await client.db('config').collection<AnyDoc>('databases').countDocuments({ _id: 'neverwritten' }), 0, 'no read created it');
      await client.db('readsgone').collection<AnyDoc>('c').insertOne({ _id: 1 });
      assert.deepEqual(await reads(other, 'readsgone'), [[{ _id: 1 }], { _id: 1 }, 1, [1], [{ _id: 1 }], 1], 'the other router caches the database');
      await client.db('readsgone').dropDatabase();
      assert.deepEqual(await reads(other, 'readsgone'), nothing, 'it learns from the shard that the database is gone');
    } finally {
      await other.close();
    }
  });

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
    await restartPrimaryAndAwaitCoordinator(request);
  }

  // kill -9 of the primary and a restart: the request it held settles, and the coordinator the
  // restarted shard recovers finishes (its state document goes).
  async function restartPrimaryAndAwaitCoordinator(request: Promise<unknown>): Promise<void> {
    await shardClients[0]!.close();
    await cluster.shards[0]!.kill9();
    cluster.shards[0] = await restartNode(cluster.shards[0]!, { extraArgs: ['--enableTestCommands'] });
    shardClients[0] = connect(cluster.shards[0]!.uri);
    await request;
    await until('the recovered coordinator to finish', async () => ((await coordinatorDocs()).length === 0 ? true : undefined));
  }

  // The config server is killed while the primary holds the coordinator before its commit phase;
  // the coordinator meets it down, retries, and commits once it is back.
  async function killConfigAt(phase: string, desc: string, start: () => Promise<unknown>): Promise<void> {
    const primary = shardClients[0]!.db('admin');
    const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc, phase } });
    const request = start().catch(() => undefined);
    await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
    await cluster.config.kill9();
    const released = primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
    await sleep(300);
    cluster.config = await restartNode(cluster.config, { role: 'config', extraArgs: ['--enableTestCommands'] });
    await released;
    await request;
    await until('the coordinator to finish', async () => ((await coordinatorDocs()).length === 0 ? true : undefined));
  }

  it('drop: kill -9 of the config server before kDropCollection, restart, the drop completes', async () => {
    await shardedOnBoth('crashdropcfg', 'c');
    await killConfigAt('kDropCollection', 'DropCollectionCoordinator', () => client.db('crashdropcfg').command({ drop: 'c' }));
    await assertDropped('crashdropcfg', 'c');
  });

  it('dropDatabase: kill -9 of the config server before kDrop, restart, the database is gone', async () => {
    await shardedOnBoth('crashdbcfg', 'sharded');
    await client.db('crashdbcfg').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    await killConfigAt('kDrop', 'DropDatabaseCoordinator', () => client.db('crashdbcfg').dropDatabase());
    assert.equal(await client.db('config').collection<AnyDoc>('databases').countDocuments({ _id: 'crashdbcfg' }), 0);
    for (const shard of shardClients) assert.deepEqual(await shard.db('crashdbcfg').listCollections().toArray(), []);
    assert.deepEqual(await criticalSectionDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  });

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
  // The collection sharded on {k: 1} as both routers see it, its documents those inserted before.
  async function assertSharded(db: string, coll: string, model: AnyDoc[]): Promise<void> {
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.${coll}` });
    assert.deepEqual(entry?.key, { k: 1 });
    const [local] = await shardClients[0]!.db(db).listCollections({ name: coll }).toArray();
    assert.deepEqual((local as AnyDoc | undefined)?.info?.uuid, entry.uuid, 'config.collections has the primary\'s UUID');
    assert.equal(await client.db('config').collection('chunks').countDocuments({ uuid: entry.uuid }), 1);
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      for (const c of [client, other]) assert.deepEqual(await c.db(db).collection<AnyDoc>(coll).find().sort({ _id: 1 }).toArray(), model);
    } finally {
      await other.close();
    }
    assert.deepEqual(await coordinatorDocs(), [], 'no state document is left');
    assert.deepEqual(await criticalSectionDocs(), [], 'no critical section is left');
    assert.deepEqual(await inconsistencies(), []);
    await client.db(db).collection<AnyDoc>(coll).insertOne({ _id: 'after', k: 1000 });
  }

  async function unshardedWithIndex(db: string, coll: string): Promise<AnyDoc[]> {
    await client.db('admin').command({ enableSharding: db, primaryShard: 'shard0' });
    const model = Array.from({ length: 10 }, (_, k) => ({ _id: k, k }));
    await client.db(db).collection<AnyDoc>(coll).insertMany(model);
    await client.db(db).collection(coll).createIndex({ k: 1 });
    return model;
  }

  it('shardCollection runs as a coordinator: repeated with the same key it answers the same collection, with another AlreadyInitialized', async () => {
    const model = await unshardedWithIndex('create', 'c');
    const admin = client.db('admin');
    const first = await admin.command({ shardCollection: 'create.c', key: { k: 1 } });
    const again = await admin.command({ shardCollection: 'create.c', key: { k: 1 } });
    assert.deepEqual(again.collectionUUID, first.collectionUUID, 'the same key answers the existing collection');
    const other = await admin.command({ shardCollection: 'create.c', key: { _id: 1 } }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(other?.codeName, 'AlreadyInitialized');
    await assertSharded('create', 'c', model);
  });

  it('shardCollection refused before its commit (no index for the key on a collection with documents) answers the error and releases its critical section', async () => {
    await client.db('admin').command({ enableSharding: 'createbad', primaryShard: 'shard0' });
    await client.db('createbad').collection<AnyDoc>('c').insertOne({ _id: 1, k: 1 });
    const refused = await client.db('admin').command({ shardCollection: 'createbad.c', key: { k: 1 } }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(refused?.codeName, 'InvalidOptions');
    assert.deepEqual(await coordinatorDocs(), []);
    assert.deepEqual(await criticalSectionDocs(), []);
    await client.db('createbad').collection<AnyDoc>('c').insertOne({ _id: 2, k: 2 });
    assert.equal(await client.db('createbad').collection('c').countDocuments(), 2, 'writes go on');
  });

  // Sharded on {k: 'hashed'} while empty: two chunks on each shard, shard1's copy of the collection
  // made by the coordinator with the primary's UUID, and documents routed to both.
  async function assertPresplit(db: string, coll: string): Promise<void> {
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.${coll}` });
    assert.deepEqual(entry?.key, { k: 'hashed' });
    for (const [i, shard] of shardClients.entries()) {
      const [local] = await shard.db(db).listCollections({ name: coll }).toArray() as AnyDoc[];
      assert.deepEqual(local?.info?.uuid, entry.uuid, `shard${i} has the collection with config.collections' UUID`);
      assert.equal(await client.db('config').collection('chunks').countDocuments({ uuid: entry.uuid, shard: `shard${i}` }), 2, `shard${i} owns two chunks`);
    }
    assert.deepEqual(await coordinatorDocs(), [], 'no state document is left');
    assert.deepEqual(await criticalSectionDocs(), [], 'no critical section is left');
    assert.deepEqual(await inconsistencies(), []);
    const model = Array.from({ length: 20 }, (_, k) => ({ _id: k, k }));
    await client.db(db).collection<AnyDoc>(coll).insertMany(model);
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      for (const c of [client, other]) assert.deepEqual(await c.db(db).collection<AnyDoc>(coll).find().sort({ _id: 1 }).toArray(), model);
    } finally {
      await other.close();
    }
    for (const [i, shard] of shardClients.entries()) assert.ok(await shard.db(db).collection(coll).countDocuments() > 0, `shard${i} took documents`);
  }

  it('shardCollection creates the collection on a data shard given initial chunks, with the primary\'s UUID, and holds its writes until the commit is done', async () => {
    await client.db('admin').command({ enableSharding: 'createdata', primaryShard: 'shard0' });
    const primary = shardClients[0]!.db('admin');
    const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'CreateCollectionCoordinator', phase: 'kCommitOnShardingCatalog' } });
    try {
      const request = client.db('admin').command({ shardCollection: 'createdata.c', key: { k: 'hashed' } });
      await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
      const [doc] = await coordinatorDocs();
      assert.deepEqual(doc.dataShards.map((s: AnyDoc) => s._id), ['shard1'], 'the coordinator persisted the shard it gives chunks');
      const [onPrimary] = await shardClients[0]!.db('createdata').listCollections({ name: 'c' }).toArray() as AnyDoc[];
      const [onData] = await shardClients[1]!.db('createdata').listCollections({ name: 'c' }).toArray() as AnyDoc[];
      assert.deepEqual(onData?.info?.uuid, onPrimary?.info?.uuid, 'the data shard has the primary\'s UUID before the commit');
      assert.deepEqual((await shardClients[1]!.db('createdata').collection('c').indexes()).map((i) => i.name).sort(), ['_id_', 'k_hashed'], 'and its indexes');
      assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: 'createdata.c' }), 0, 'nothing is committed yet');
      const reason = { command: 'createCollection', ns: 'createdata.c' };
      for (const shard of shardClients) {
        const sections = await shard.db('config').collection<AnyDoc>('collection_critical_sections').find().toArray();
        assert.deepEqual(sections.map((s) => [s._id, s.blockReads, s.reason]), [['createdata.c', false, reason]], 'both shards block writes');
      }
      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      const reply = await request;
      assert.deepEqual(reply.collectionUUID, onPrimary?.info?.uuid);
    } finally {
      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
    }
    await assertPresplit('createdata', 'c');
  });

  // The commit refused (here by the config server's failCommand; a router would retry a
  // ShardNotFound, the refusal of a shard gone since the layout was planned) after the data shard
  // made its copy: the coordinator drops that copy, by UUID and only while empty, before it
  // releases the sections.
  it('shardCollection refused at its commit drops the copies it made on the data shards and releases every section', async () => {
    await client.db('admin').command({ enableSharding: 'createabort', primaryShard: 'shard0' });
    const config = new MongoClient(cluster.config.uri);
    try {
      await config.db('admin').command({
        configureFailPoint: 'failCommand', mode: { times: 1 },
        data: { failCommands: ['_configsvrShardCollection'], errorCode: 96, failInternalCommands: true },
      });
      const refused = await client.db('admin').command({ shardCollection: 'createabort.c', key: { k: 'hashed' } }).then(() => undefined, (err: unknown) => err as AnyDoc);
      assert.equal(refused?.codeName, 'OperationFailed');
    } finally {
      await config.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' });
      await config.close();
    }
    assert.deepEqual(await shardClients[1]!.db('createabort').listCollections({ name: 'c' }).toArray(), [], 'the data shard\'s copy is gone');
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: 'createabort.c' }), 0);
    assert.deepEqual(await coordinatorDocs(), [], 'no state document is left');
    assert.deepEqual(await criticalSectionDocs(), [], 'no critical section is left');
    assert.deepEqual(await inconsistencies(), []);
    await client.db('admin').command({ shardCollection: 'createabort.c', key: { k: 'hashed' } });
    await assertPresplit('createabort', 'c');

    // The participant's drop leaves a copy of another UUID, and one that holds documents.
    const shard1 = shardClients[1]!.db('createabort');
    await shard1.collection<AnyDoc>('kept').insertOne({ _id: 1 });
    const uuidOf = async (name: string): Promise<unknown> => ((await shard1.listCollections({ name }).toArray())[0] as AnyDoc | undefined)?.info?.uuid;
    const keptUUID = await uuidOf('kept');
    await shard1.command({ _shardsvrDropCollectionParticipant: 'kept', collectionUUID: keptUUID, requireCollectionEmpty: true });
    assert.equal(await shard1.collection('kept').countDocuments(), 1, 'a copy with documents stays');
    await shard1.collection<AnyDoc>('kept').deleteOne({ _id: 1 });
    await shard1.command({ _shardsvrDropCollectionParticipant: 'kept', collectionUUID: (await uuidOf('c')), requireCollectionEmpty: true });
    assert.notEqual(await uuidOf('kept'), undefined, 'a copy of another UUID stays');
    await shard1.command({ _shardsvrDropCollectionParticipant: 'kept', collectionUUID: keptUUID, requireCollectionEmpty: true });
    assert.equal(await uuidOf('kept'), undefined, 'an empty copy of that UUID goes');
  });

  for (const phase of CREATE_PHASES) {
    it(`shardCollection: kill -9 of the primary shard before ${phase}, restart, the collection is sharded on both shards`, async () => {
      const db = `crashcreate${phase.toLowerCase()}`;
      await client.db('admin').command({ enableSharding: db, primaryShard: 'shard0' });
      await killPrimaryAt(phase, 'CreateCollectionCoordinator', () => client.db('admin').command({ shardCollection: `${db}.c`, key: { k: 'hashed' } }));
      await assertPresplit(db, 'c');
    });
  }

  // What MongoDB's coordinators do with their session: each command to a participant or the config
  // server is a retryable write of it, each phase under the next txnNumber, and a recovered
  // coordinator fences them all with its next txnNumber before it goes on, so a command of an
  // earlier phase or from before its crash still on its way is refused.
  it('participants run the coordinator\'s commands under its session, refuse one of an earlier phase, and after a recovery one of its txnNumber from before the crash', async () => {
    await shardedOnBoth('fence', 'src');
    const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'fence.src' });
    const raw = new WireClient();
    const host = (node: { port: number }): string => `127.0.0.1:${node.port}`;
    const txnNumOn = async (c: MongoClient, lsid: AnyDoc): Promise<number | undefined> => {
      const record = await c.db('config').collection<AnyDoc>('transactions').findOne({ '_id.id': lsid.id });
      return record === null ? undefined : Number(record.txnNum);
    };
    const config = new MongoClient(cluster.config.uri);
    try {
      const primary = shardClients[0]!.db('admin');
      const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'RenameCollectionCoordinator', phase: 'kRenameMetadata' } });
      const request = client.db('admin').command({ renameCollection: 'fence.src', to: 'fence.dst' }).catch(() => undefined);
      await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
      const { lsid, txnNumber } = (await coordinatorDocs())[0]!.session;
      // Phases kCheckPreconditions, kFreezeMigrations, kBlockCrudAndRename, kRenameMetadata run under
      // txnNumbers 0, 1, 2, 3.
      assert.equal(Number(txnNumber), 3, 'each phase moved the session to its next txnNumber');
      assert.equal(await txnNumOn(shardClients[1]!, lsid), 2, 'the other shard ran kBlockCrudAndRename\'s commands under the coordinator\'s session');
      assert.equal(await txnNumOn(config, lsid), 1, 'the config server kFreezeMigrations\'s');
      // A command of the current phase's txnNumber is taken; one of an earlier phase is refused.
      const stale = { _shardsvrDropCollectionParticipant: 'nothing', lsid, txnNumber };
      assert.equal((await raw.command(host(cluster.shards[1]!), 'fence', stale)).ok, 1);
      const earlier = await raw.command(host(cluster.shards[1]!), 'fence', { _shardsvrParticipantBlock: 'src', blockType: 'ReadsAndWrites', reason: { command: 'renameCollection', ns: 'fence.src' }, lsid, txnNumber: Long.fromNumber(2) });
      assert.equal(earlier.codeName, 'TransactionTooOld', 'a kBlockCrudAndRename command arriving after kRenameMetadata began is refused');

      await restartPrimaryAndAwaitCoordinator(request);

      // Recovered, it fences under 4, runs kRenameMetadata under 4, then kUnblockCrud under 5.
      const next = Number(txnNumber) + 1;
      assert.equal(await txnNumOn(config, lsid), next, 'the recovered coordinator fenced the config server with its next txnNumber');
      assert.equal(await txnNumOn(shardClients[1]!, lsid), next + 1, 'and the other shard, which then ran kUnblockCrud under the one after');
      const refusals: [string, string, AnyDoc][] = [
        [host(cluster.shards[1]!), 'fence', stale],
        [host(cluster.config), 'admin', { _configsvrRenameCollectionMetadata: 'fence.src', to: 'fence.dst', sourceUUID: before!.uuid, lsid, txnNumber }],
      ];
      for (const [where, db, cmd] of refusals) {
        const reply = await raw.command(where, db, cmd);
        assert.equal(reply.codeName, 'TransactionTooOld', `${Object.keys(cmd)[0]} of the txnNumber from before the crash: ${JSON.stringify(reply)}`);
      }
      assert.equal((await raw.command(host(cluster.shards[1]!), 'fence', { ...stale, txnNumber: Long.fromNumber(next + 1) })).ok, 1, 'the last txnNumber is still taken');
      await assertRenamed('fence', 'src', 'dst', before!.uuid, before!.lastmodEpoch);
    } finally {
      await raw.close();
      await config.close();
    }
  });

  it('shardCollection: kill -9 of the config server at the commit, restart, the coordinator commits', async () => {
    const model = await unshardedWithIndex('crashcreatecfg', 'c');
    await killConfigAt('kCommitOnShardingCatalog', 'CreateCollectionCoordinator', () => client.db('admin').command({ shardCollection: 'crashcreatecfg.c', key: { k: 1 } }));
    await assertSharded('crashcreatecfg', 'c', model);
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

  async function crossDatabaseSource(from: string, to: string): Promise<AnyDoc[]> {
    const admin = client.db('admin');
    await admin.command({ enableSharding: from, primaryShard: 'shard0' });
    await admin.command({ enableSharding: to, primaryShard: 'shard0' });
    const model = Array.from({ length: 5 }, (_, i) => ({ _id: i, v: i }));
    await client.db(from).collection<AnyDoc>('c').insertMany(model);
    const other = new MongoClient(cluster.routers[1]!.uri);
    assert.equal(await other.db(from).collection('c').countDocuments(), 5, 'the second router has routed to the source');
    await other.close();
    return model;
  }

  async function assertMovedAcross(from: string, to: string, model: AnyDoc[]): Promise<void> {
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      for (const c of [client, other]) {
        assert.deepEqual(await c.db(to).collection<AnyDoc>('c').find().sort({ _id: 1 }).toArray(), model);
        assert.equal(await c.db(from).collection('c').countDocuments(), 0);
      }
    } finally {
      await other.close();
    }
    for (const shard of shardClients) assert.deepEqual(await shard.db(from).listCollections({ name: 'c' }).toArray(), []);
    assert.deepEqual(await coordinatorDocs(), []);
    assert.deepEqual(await criticalSectionDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  }

  it('renames an unsharded collection into another database of the same primary shard, and refuses another primary or a sharded source', async () => {
    const model = await crossDatabaseSource('xsrc', 'xdst');
    await client.db('admin').command({ renameCollection: 'xsrc.c', to: 'xdst.c' });
    await assertMovedAcross('xsrc', 'xdst', model);
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'xelsewhere', primaryShard: 'shard1' });
    await client.db('xelsewhere').collection<AnyDoc>('seed').insertOne({ _id: 1 });
    const elsewhere = await admin.command({ renameCollection: 'xdst.c', to: 'xelsewhere.c' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(elsewhere?.code, 13137);
    await shardedOnBoth('xsharded', 'c');
    await admin.command({ enableSharding: 'xsharded2', primaryShard: 'shard0' });
    await client.db('xsharded2').collection<AnyDoc>('seed').insertOne({ _id: 1 });
    const sharded = await admin.command({ renameCollection: 'xsharded.c', to: 'xsharded2.c' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(sharded?.codeName, 'CommandFailed');
    assert.deepEqual(await coordinatorDocs(), []);
  });

  // Beyond MongoDB, which locks the source's database only: a DDL of the target's database waits.
  it('a rename into another database holds both databases\' DDL locks', async () => {
    const model = await crossDatabaseSource('xlsrc', 'xldst');
    await client.db('xldst').collection<AnyDoc>('other').insertOne({ _id: 1 });
    const primary = shardClients[0]!.db('admin');
    const { count } = await primary.command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc: 'RenameCollectionCoordinator', phase: 'kBlockCrudAndRename' } });
    await primary.command({ configureFailPoint: 'overrideDDLLockTimeout', mode: 'alwaysOn', data: { timeoutMillisecs: 300 } });
    try {
      const rename = client.db('admin').command({ renameCollection: 'xlsrc.c', to: 'xldst.c' });
      await primary.command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
      const refused = await client.db('xldst').command({ drop: 'other' }).then(() => undefined, (err: unknown) => err as AnyDoc);
      assert.equal(refused?.codeName, 'LockBusy');
      assert.equal(refused?.errmsg, "Failed to acquire DDL lock for namespace 'xldst' after 300ms that is currently locked with reason 'renameCollection'");
      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      await rename;
    } finally {
      await primary.command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      await primary.command({ configureFailPoint: 'overrideDDLLockTimeout', mode: 'off' });
    }
    await assertMovedAcross('xlsrc', 'xldst', model);
    assert.equal(await client.db('xldst').collection('other').countDocuments(), 1, 'the refused drop dropped nothing');
  });

  it('renameCollection into another database: kill -9 of the primary shard before kBlockCrudAndRename, restart, the rename completes', async () => {
    const model = await crossDatabaseSource('xcsrc', 'xcdst');
    await killPrimaryAt('kBlockCrudAndRename', 'RenameCollectionCoordinator', () => client.db('admin').command({ renameCollection: 'xcsrc.c', to: 'xcdst.c' }));
    await assertMovedAcross('xcsrc', 'xcdst', model);
  });

  it('renameCollection: kill -9 of the config server before kRenameMetadata, restart, the rename completes', async () => {
    await shardedOnBoth('crashrencfg', 'src');
    const before = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'crashrencfg.src' });
    await killConfigAt('kRenameMetadata', 'RenameCollectionCoordinator', () => client.db('admin').command({ renameCollection: 'crashrencfg.src', to: 'crashrencfg.dst' }));
    await assertRenamed('crashrencfg', 'src', 'dst', before!.uuid, before!.lastmodEpoch);
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
  // The validator every shard holding the collection has, and what its copies refuse.
  async function assertValidatorEverywhere(db: string, coll: string): Promise<void> {
    for (const [i, shard] of shardClients.entries()) {
      const [info] = await shard.db(db).listCollections({ name: coll }).toArray() as AnyDoc[];
      assert.deepEqual(info?.options?.validator, { k: { $type: 'number' } }, `shard${i} has the validator`);
    }
    const refused = await client.db(db).collection<AnyDoc>(coll).insertOne({ _id: 'bad', k: 'text' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(refused?.code, 121, 'the router\'s insert is validated');
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.${coll}` });
    assert.equal(entry?.permitMigrations, undefined, 'migrations are back');
    assert.deepEqual(await coordinatorDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  }

  it('collMod of a sharded collection reaches every shard owning chunks through the coordinator, and a refused one changes nothing', async () => {
    await shardedOnBoth('collmod', 'c');
    const reply = await client.db('collmod').command({ collMod: 'c', validator: { k: { $type: 'number' } } });
    assert.equal(reply.ok, 1);
    await assertValidatorEverywhere('collmod', 'c');
    const refused = await client.db('collmod').command({ collMod: 'c', changeStreamPreAndPostImages: { enabled: true } }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(refused?.codeName, 'InvalidOptions');
    const missing = await client.db('collmod').command({ collMod: 'nothing', validationLevel: 'moderate' }).then(() => undefined, (err: unknown) => err as AnyDoc);
    assert.equal(missing?.codeName, 'NamespaceNotFound');
    assert.deepEqual(await coordinatorDocs(), []);
  });

  it('collMod: kill -9 of the config server before kUpdateShards, restart, every shard has the modification', async () => {
    await shardedOnBoth('crashcollmodcfg', 'c');
    await killConfigAt('kUpdateShards', 'CollModCoordinator', () => client.db('crashcollmodcfg').command({ collMod: 'c', validator: { k: { $type: 'number' } } }));
    await assertValidatorEverywhere('crashcollmodcfg', 'c');
  });

  for (const phase of COLL_MOD_PHASES) {
    it(`collMod: kill -9 of the primary shard before ${phase}, restart, every shard has the modification`, async () => {
      const db = `crashcollmod${phase.toLowerCase()}`;
      await shardedOnBoth(db, 'c');
      await killPrimaryAt(phase, 'CollModCoordinator', () => client.db(db).command({ collMod: 'c', validator: { k: { $type: 'number' } } }));
      await assertValidatorEverywhere(db, 'c');
    });
  }

  // Sharded on {k: 1} over both shards, with an index for {k: 1, j: 1} and a zone on [0, 5).
  async function refinable(db: string): Promise<AnyDoc> {
    await shardedOnBoth(db, 'c');
    await client.db(db).collection<AnyDoc>('c').updateMany({}, [{ $set: { j: { $multiply: ['$k', 10] } } }]);
    await client.db(db).collection('c').createIndex({ k: 1, j: 1 });
    const admin = client.db('admin');
    await admin.command({ addShardToZone: 'shard0', zone: 'low' });
    await admin.command({ updateZoneKeyRange: `${db}.c`, min: { k: 0 }, max: { k: 5 }, zone: 'low' });
    const other = new MongoClient(cluster.routers[1]!.uri);
    assert.equal(await other.db(db).collection('c').countDocuments(), 20, 'the second router caches the old routing');
    await other.close();
    return client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.c` });
  }

  async function assertRefined(db: string, before: AnyDoc): Promise<void> {
    const ns = `${db}.c`;
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns });
    assert.deepEqual(entry?.key, { k: 1, j: 1 });
    assert.deepEqual(entry?.uuid, before.uuid, 'the same collection');
    assert.notDeepEqual(entry?.lastmodEpoch, before.lastmodEpoch, 'under a new epoch');
    assert.equal(entry?.permitMigrations, undefined, 'migrations are back');
    // The balancer cuts the chunks at the zone's bounds meanwhile: each bound has the new field,
    // MinKey but at the global maximum, and the ranges still meet.
    const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid: before.uuid }).sort({ min: 1 }).toArray();
    const bounds = [chunks[0]!.min, ...chunks.map((c) => c.max)];
    assert.deepEqual(bounds[0], { k: new MinKey(), j: new MinKey() });
    assert.deepEqual(bounds[bounds.length - 1], { k: new MaxKey(), j: new MaxKey() });
    for (const b of bounds.slice(1, -1)) assert.deepEqual(b, { k: b.k, j: new MinKey() }, `bound ${JSON.stringify(b)}`);
    chunks.slice(1).forEach((c, i) => assert.deepEqual(c.min, chunks[i]!.max, 'the ranges meet'));
    assert.ok(bounds.some((b) => b.k === 10), 'the split at k: 10 is there');
    const zones = await client.db('config').collection<AnyDoc>('tags').find({ ns }).toArray();
    assert.deepEqual(zones.map((z) => [z.min, z.max]), [[{ k: 0, j: new MinKey() }, { k: 5, j: new MinKey() }]]);
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      for (const c of [client, other]) {
        assert.equal(await c.db(db).collection(`c`).countDocuments(), 20);
        assert.deepEqual(await c.db(db).collection<AnyDoc>('c').findOne({ k: 15, j: 150 }), { _id: 15, k: 15, j: 150 });
      }
      await other.db(db).collection<AnyDoc>('c').insertOne({ _id: 'nokey', k: 12 });
      assert.deepEqual(await client.db(db).collection<AnyDoc>('c').findOne({ k: 12, j: null }), { _id: 'nokey', k: 12 }, 'a missing suffix field counts as null');
    } finally {
      await other.close();
    }
    await client.db('admin').command({ split: ns, middle: { k: 5, j: 0 } });
    assert.deepEqual(await coordinatorDocs(), []);
    assert.deepEqual(await inconsistencies(), []);
  }

  it('refines a shard key: same UUID, new epoch, padded chunk and zone bounds, and a stale router follows', async () => {
    const before = await refinable('refine');
    await client.db('admin').command({ refineCollectionShardKey: 'refine.c', key: { k: 1, j: 1 } });
    await assertRefined('refine', before);
    const again = await client.db('admin').command({ refineCollectionShardKey: 'refine.c', key: { k: 1, j: 1 } });
    assert.equal(again.ok, 1, 'refining to the key it has is ok');
  });

  it('refineCollectionShardKey refuses a key that does not extend the current one, one without an index, and an unsharded collection', async () => {
    await shardedOnBoth('refinebad', 'c');
    const admin = client.db('admin');
    const refused = async (cmd: AnyDoc): Promise<AnyDoc> => admin.command(cmd).then(() => ({}), (err: unknown) => err as AnyDoc);
    const notExtending = await refused({ refineCollectionShardKey: 'refinebad.c', key: { j: 1 } });
    assert.equal(notExtending.code, 72);
    assert.equal(notExtending.errmsg, 'refineCollectionShardKey shard key { j: 1 } does not extend the current shard key { k: 1 }');
    const noIndex = await refused({ refineCollectionShardKey: 'refinebad.c', key: { k: 1, j: 1 } });
    assert.equal(noIndex.code, 72);
    assert.match(noIndex.errmsg, /^Please create an index that starts with the proposed shard key/);
    await client.db('refinebad').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    assert.equal((await refused({ refineCollectionShardKey: 'refinebad.plain', key: { _id: 1, j: 1 } })).code, 118);
    assert.equal((await refused({ refineCollectionShardKey: 'nosuchdb.c', key: { _id: 1, j: 1 } })).code, 26);
    assert.equal((await refused({ refineCollectionShardKey: 'refinebad.c', key: { k: 5 } })).code, 2);
    assert.deepEqual(await coordinatorDocs(), []);
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'refinebad.c' });
    assert.deepEqual(entry?.key, { k: 1 });
    assert.equal(entry?.permitMigrations, undefined, 'a refused refine leaves migrations alone');
  });

  it('refineCollectionShardKey: kill -9 of the config server before kCommit, restart, the refine completes', async () => {
    const before = await refinable('crashrefcfg');
    await killConfigAt('kCommit', 'RefineCollectionShardKeyCoordinator', () => client.db('admin').command({ refineCollectionShardKey: 'crashrefcfg.c', key: { k: 1, j: 1 } }));
    await assertRefined('crashrefcfg', before);
  });

  for (const phase of REFINE_PHASES) {
    it(`refineCollectionShardKey: kill -9 of the primary shard before ${phase}, restart, the refine completes`, async () => {
      const db = `crashref${phase.toLowerCase()}`;
      const before = await refinable(db);
      await killPrimaryAt(phase, 'RefineCollectionShardKeyCoordinator', () => client.db('admin').command({ refineCollectionShardKey: `${db}.c`, key: { k: 1, j: 1 } }));
      await assertRefined(db, before);
    });
  }
});
