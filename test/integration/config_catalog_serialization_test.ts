import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, MongoServerError } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Catalog-changing commands that reach the config server together for one namespace: each reads
// config.*, asks the shards something, then writes, so without serialization both would decide
// on what they read before either wrote.
const ROUNDS = 3;
const DROP_DELAYS_MS = [0, 1, 2, 3, 4, 6, 8, 10, 12, 15];

function outcomes(results: PromiseSettledResult<AnyDoc>[]): { ok: AnyDoc[]; failed: MongoServerError[] } {
  const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as MongoServerError] : []));
  for (const err of failed) assert.ok(err instanceof MongoServerError, `a server error, not ${String(err)}`);
  return { ok, failed };
}

describe('catalog changes are serialized per namespace', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    await client.db('admin').command({ enableSharding: 'race', primaryShard: 'shard0' });
  });

  // As MongoDB's CreateCollectionCoordinator: the second request answers ConflictingOperationInProgress
  // while the first's coordinator runs, AlreadyInitialized once it has finished.
  it('of two shardCollection requests with different keys, one shards the collection and the other is refused', async () => {
    const admin = client.db('admin');
    for (let round = 0; round < ROUNDS; round++) {
      const ns = `race.keys${round}`;
      const keys = [{ a: 1 }, { b: 1 }];
      const results = await Promise.allSettled(keys.map((key) => admin.command({ shardCollection: ns, key })));
      const { ok, failed } = outcomes(results);
      assert.equal(ok.length, 1, `round ${round}: exactly one succeeds`);
      assert.equal(failed.length, 1);
      const refusal = failed[0]!.code === 23
        ? { codeName: 'AlreadyInitialized', errmsg: `sharding already enabled for collection ${ns}` }
        : { codeName: 'ConflictingOperationInProgress', errmsg: `Another createCollection with different arguments is already running for the same namespace ${ns}` };
      assert.deepEqual({ codeName: failed[0]!.codeName, errmsg: failed[0]!.errmsg }, refusal);
      const winner = keys[results.findIndex((r) => r.status === 'fulfilled')]!;
      const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns });
      assert.deepEqual(entry?.key, winner, 'the collection keeps the key of the request that answered ok');
      const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid: entry!.uuid }).toArray();
      assert.deepEqual(chunks.map((c) => Object.keys(c.min)), [Object.keys(winner)]);
    }
  });

  it('two identical shardCollection requests both answer ok with the collection that was sharded', async () => {
    const admin = client.db('admin');
    for (let round = 0; round < ROUNDS; round++) {
      const ns = `race.same${round}`;
      const results = await Promise.allSettled([0, 1].map(() => admin.command({ shardCollection: ns, key: { k: 1 } })));
      const { ok } = outcomes(results);
      assert.equal(ok.length, 2, `round ${round}: both succeed`);
      const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns });
      for (const reply of ok) assert.deepEqual(reply.collectionUUID, entry!.uuid, 'each reply names the collection config.collections holds');
      assert.equal(await client.db('config').collection('chunks').countDocuments({ uuid: entry!.uuid }), 1);
    }
  });

  it('of two enableSharding requests with different primary shards, one creates the database and the other answers NamespaceExists', async () => {
    const admin = client.db('admin');
    for (let round = 0; round < ROUNDS; round++) {
      const db = `racedb${round}`;
      const primaries = ['shard0', 'shard1'];
      const results = await Promise.allSettled(primaries.map((primaryShard) => admin.command({ enableSharding: db, primaryShard })));
      const { ok, failed } = outcomes(results);
      assert.equal(ok.length, 1, `round ${round}: exactly one succeeds`);
      const winner = primaries[results.findIndex((r) => r.status === 'fulfilled')]!;
      const loser = primaries.find((p) => p !== winner)!;
      assert.equal(failed[0]!.code, 48);
      assert.equal(failed[0]!.codeName, 'NamespaceExists');
      assert.equal(failed[0]!.errmsg, `database already created on a primary which is different from ${loser}`);
      const entries = await client.db('config').collection<AnyDoc>('databases').find({ _id: db }).toArray();
      assert.deepEqual(entries.map((d) => d.primary), [winner]);
    }
  });

  it('a request that waits longer than the DDL lock timeout answers LockBusy naming what holds the lock', async () => {
    // The database's primary shard holds the locks: shardCollection's coordinator while the config
    // server shards the collection, the drop coordinator's.
    const shard0 = new MongoClient(cluster.shards[0]!.uri);
    try {
      await shard0.db('admin').command({ configureFailPoint: 'overrideDDLLockTimeout', mode: 'alwaysOn', data: { timeoutMillisecs: 200 } });
      // The shardCollection holds its locks while the primary shard keeps its count waiting.
      const { count } = await shard0.db('admin').command({
        configureFailPoint: 'failCommand', mode: { times: 1 },
        data: { failCommands: ['count'], blockConnection: true, blockTimeMS: 1500, failInternalCommands: true },
      });
      const sharding = client.db('admin').command({ shardCollection: 'race.held', key: { a: 1 } });
      await shard0.db('admin').command({ waitForFailPoint: 'failCommand', timesEntered: count + 1, maxTimeMS: 10_000 });
      const refused = await client.db('race').command({ drop: 'held' }).then(() => undefined, (err: unknown) => err);
      assert.ok(refused instanceof MongoServerError, `the drop is refused: ${String(refused)}`);
      assert.equal(refused.code, 46);
      assert.equal(refused.codeName, 'LockBusy');
      assert.equal(refused.errmsg, "Failed to acquire DDL lock for namespace 'race' after 200ms that is currently locked with reason 'createCollection'");
      await sharding;
      assert.deepEqual((await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'race.held' }))?.key, { a: 1 });
    } finally {
      await shard0.db('admin').command({ configureFailPoint: 'overrideDDLLockTimeout', mode: 'off' });
      await shard0.close();
    }
  });

  it('a dropDatabase racing a shardCollection leaves no collection without its database', async () => {
    const admin = client.db('admin');
    for (let round = 0; round < DROP_DELAYS_MS.length; round++) {
      const db = `dropdb${round}`;
      await admin.command({ enableSharding: db, primaryShard: 'shard0' });
      await client.db(db).collection<AnyDoc>('c').insertOne({ _id: 1 });
      const results = await Promise.allSettled([
        admin.command({ shardCollection: `${db}.c`, key: { _id: 1 } }),
        sleep(DROP_DELAYS_MS[round]!).then(() => client.db(db).dropDatabase()),
      ]);
      assert.equal(results[1]!.status, 'fulfilled', `round ${round}: the dropDatabase answers ok`);
      const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `${db}.c` });
      const database = await client.db('config').collection<AnyDoc>('databases').findOne({ _id: db });
      if (entry !== null) assert.notEqual(database, null, `round ${round}: a sharded collection's database is in config.databases`);
      await client.db(db).dropDatabase();
    }
  });

  it('a drop racing a shardCollection leaves the catalog and the primary shard agreeing', async () => {
    const admin = client.db('admin');
    const shard0 = new MongoClient(cluster.shards[0]!.uri);
    try {
      // The drop starts a little later each round, to land at each step of the shardCollection.
      for (let round = 0; round < DROP_DELAYS_MS.length; round++) {
        const coll = `dropped${round}`;
        await client.db('race').collection<AnyDoc>(coll).insertOne({ _id: 1, d: 1 });
        await client.db('race').collection(coll).createIndex({ d: 1 });
        const results = await Promise.allSettled([
          admin.command({ shardCollection: `race.${coll}`, key: { d: 1 } }),
          sleep(DROP_DELAYS_MS[round]!).then(() => client.db('race').command({ drop: coll })),
        ]);
        assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled'], `round ${round}: both answer ok`);
        const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: `race.${coll}` });
        if (entry !== null) {
          const [info] = await shard0.db('race').listCollections({ name: coll }).toArray();
          assert.deepEqual((info as AnyDoc | undefined)?.info?.uuid, entry.uuid, `round ${round}: the sharded collection is the one on the primary shard`);
          const indexes = await shard0.db('race').collection(coll).listIndexes().toArray();
          assert.ok(indexes.some((i) => i.name === 'd_1'), `round ${round}: its shard key index is there`);
        }
        await client.db('race').command({ drop: coll });
      }
    } finally {
      await shard0.close();
    }
  });
});
