import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../helpers/spawn_cluster.js';
import { spawnReplicaSet, until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import { removeDir, type AnyDoc } from '../helpers/spawn_node.js';

// A cluster whose config server is a three-member set (`docshard router --configdb cfg/...`) and
// whose shard is a three-member set, driven through a router with the official driver; then the
// config server's primary is killed and the cluster goes on under the new one, with the same
// cluster id (config.version is the set's, replicated, not each member's own).
describe('a config server replica set', () => {
  let cfg: SpawnedReplicaSet;
  let rs0: SpawnedReplicaSet;
  let rs1: SpawnedReplicaSet;
  let router: SpawnedRouter;
  let client: MongoClient;

  before(async () => {
    [cfg, rs0, rs1] = await Promise.all([
      spawnReplicaSet({ name: 'cfg', members: 3, electionTimeoutMillis: 1500, node: () => ({ role: 'config' }) }),
      spawnReplicaSet({ name: 'rs0', members: 3 }),
      spawnReplicaSet({ name: 'rs1', members: 1 }),
    ]);
    router = await spawnRouter(`cfg/${cfg.hosts.join(',')}`);
    client = new MongoClient(router.uri);
  });

  after(async () => {
    await client?.close();
    await router?.stop();
    await Promise.allSettled([cfg?.stop(), rs0?.stop(), rs1?.stop()]);
    for (const n of [...(cfg?.nodes ?? []), ...(rs0?.nodes ?? []), ...(rs1?.nodes ?? [])]) removeDir(n.dbpath);
  });

  async function shardIdentityOf(set: SpawnedReplicaSet): Promise<AnyDoc | null> {
    const direct = new MongoClient(set.uri);
    try {
      return await direct.db('admin').collection<AnyDoc>('system.version').findOne({ _id: 'shardIdentity' });
    } finally {
      await direct.close();
    }
  }

  it('adds a set shard, which knows the config server by its set, and routes sharded writes and reads', async () => {
    assert.equal((await client.db('admin').command({ addShard: `rs0/${rs0.hosts[0]}` })).shardAdded, 'rs0');
    const identity = await shardIdentityOf(rs0);
    assert.equal(identity?.configsvrConnectionString, `cfg/${cfg.hosts.join(',')}`);
    await client.db('admin').command({ shardCollection: 'app.items', key: { _id: 1 } });
    const items = client.db('app').collection<AnyDoc>('items');
    await items.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, v: i * 2 })), { writeConcern: { w: 'majority' } });
    assert.deepEqual(await items.find({ _id: { $gte: 48 } }).sort({ _id: 1 }).toArray(), [{ _id: 48, v: 96 }, { _id: 49, v: 98 }]);
  });

  it('goes on under a new config server primary, with the same cluster id', async () => {
    const direct = new MongoClient(cfg.uri);
    let primaryHost: string;
    try {
      primaryHost = String((await direct.db('admin').command({ hello: 1 })).primary);
    } finally {
      await direct.close();
    }
    await cfg.nodes[cfg.hosts.indexOf(primaryHost)]!.kill9();
    // The router's first catalog operations may meet the old primary; they succeed once it is found gone.
    await until('a catalog write under the new primary', async () => {
      await client.db('admin').command({ shardCollection: 'app.more', key: { _id: 1 } });
      return true;
    }, 60_000, 500);
    await client.db('app').collection<AnyDoc>('more').insertOne({ _id: 1 });
    assert.equal(await client.db('app').collection('more').countDocuments(), 1);
    assert.equal((await client.db('admin').command({ addShard: `rs1/${rs1.hosts[0]}` })).shardAdded, 'rs1');
    const [first, second] = [await shardIdentityOf(rs0), await shardIdentityOf(rs1)];
    assert.ok(second?.clusterId !== undefined && String(second.clusterId) === String(first?.clusterId), `cluster ids ${String(first?.clusterId)} and ${String(second?.clusterId)}`);
    const shards = await client.db('config').collection('shards').find().sort({ _id: 1 }).toArray();
    assert.deepEqual(shards.map((s) => s.host), [`rs0/${rs0.hosts.join(',')}`, `rs1/${rs1.hosts[0]}`]);
  });
});
