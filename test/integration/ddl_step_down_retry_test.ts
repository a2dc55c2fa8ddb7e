import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { spawnReplicaSet, until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import { removeDir, type AnyDoc } from '../helpers/spawn_node.js';

// Issue 32: "requests in flight to a stepped-down primary are retried where MongoDB's router
// retries them". shardCollection's coordinator is held on the shard's primary by a fail point, the
// primary steps down (the coordinator is interrupted, 11602), and the router sends
// _shardsvrCreateCollection again to the new primary, which resumes the coordinator from its
// document: the client sees shardCollection succeed, as through mongos.
describe('a DDL command whose shard primary steps down mid-way', () => {
  let cluster: SpawnedCluster;
  let rs0: SpawnedReplicaSet;
  let client: MongoClient;

  before(async () => {
    [cluster, rs0] = await Promise.all([spawnCluster({ shards: 0 }), spawnReplicaSet({ name: 'rs0', members: 3, electionTimeoutMillis: 2000, node: () => ({ role: 'shard', extraArgs: ['--enableTestCommands'] }) })]);
    client = new MongoClient(cluster.routers[0]!.uri);
    await client.db('admin').command({ addShard: `rs0/${rs0.hosts.join(',')}` });
  });

  after(async () => {
    await client?.close();
    await Promise.allSettled([cluster?.stop(), rs0?.stop()]);
    for (const n of rs0?.nodes ?? []) removeDir(n.dbpath);
  });

  async function primary(): Promise<MongoClient> {
    return until('the primary of rs0', async () => {
      for (const host of rs0.hosts) {
        const direct = new MongoClient(`mongodb://${host}/?directConnection=true`);
        const hello = await direct.db('admin').command({ hello: 1 }).catch(() => ({}) as AnyDoc);
        if (hello.isWritablePrimary === true) return direct;
        await direct.close();
      }
      return undefined;
    });
  }

  it('is answered once the new primary has finished it', { timeout: 120_000 }, async () => {
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'ddl', primaryShard: 'rs0' });
    const old = await primary();
    try {
      await old.db('admin').command({ configureFailPoint: 'hangBeforeDDLCoordinatorPhase', mode: 'alwaysOn' });
      const sharding = admin.command({ shardCollection: 'ddl.c', key: { _id: 1 } });
      sharding.catch(() => undefined);
      await until('the coordinator to be held', async () => ((await old.db('config').collection('system.sharding_ddl_coordinators').countDocuments()) > 0 ? true : undefined));
      await old.db('admin').command({ replSetStepDown: 30, secondaryCatchUpPeriodSecs: 10 }).catch(() => undefined);
      const reply = await sharding;
      assert.equal(reply.ok, 1);
      assert.equal(reply.collectionsharded, 'ddl.c');
    } finally {
      await old.db('admin').command({ configureFailPoint: 'hangBeforeDDLCoordinatorPhase', mode: 'off' }).catch(() => undefined);
      await old.close();
    }
    const collection = await client.db('config').collection('collections').findOne({ _id: 'ddl.c' as never });
    assert.deepEqual(collection?.key, { _id: 1 });
  });
});
