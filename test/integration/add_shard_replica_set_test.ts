import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';
import { removeDir, spawnNode, type SpawnedNode } from '../helpers/spawn_node.js';

// addShard of a replica set as MongoDB 7.0 checks it: the set name against what the members say,
// every seed a member, a standalone or a member given in the wrong form, a set that is another
// cluster's shard; each refusal leaves the catalog and the set as they were. Accepted, the set is
// stored with every member its primary reports.
describe('addShard of a replica set', () => {
  let cluster: SpawnedCluster;
  let other: SpawnedCluster;
  let rs0: SpawnedReplicaSet;
  let rs1: SpawnedReplicaSet;
  let standalone: SpawnedNode;
  let client: MongoClient;

  before(async () => {
    [cluster, other, rs0, rs1, standalone] = await Promise.all([
      spawnCluster({ shards: 0 }), spawnCluster({ shards: 0 }),
      spawnReplicaSet({ name: 'rs0', members: 3 }), spawnReplicaSet({ name: 'rs1', members: 1 }), spawnNode({ role: 'shard' }),
    ]);
    client = new MongoClient(cluster.routers[0]!.uri);
  });

  after(async () => {
    await client?.close();
    await Promise.allSettled([cluster?.stop(), other?.stop(), rs0?.stop(), rs1?.stop(), standalone?.stop()]);
    for (const n of [...(rs0?.nodes ?? []), ...(rs1?.nodes ?? []), ...(standalone ? [standalone] : [])]) removeDir(n.dbpath);
  });

  async function refused(addShard: string, code: number, message: RegExp): Promise<void> {
    await assert.rejects(client.db('admin').command({ addShard }), (err: unknown) => {
      assert.ok(err instanceof MongoServerError, String(err));
      assert.equal(err.code, code, err.message);
      assert.match(err.message, message);
      return true;
    });
    assert.deepEqual(await client.db('config').collection('shards').find().toArray(), [], 'a refused addShard wrote nothing');
  }

  async function shardIdentityOf(set: SpawnedReplicaSet): Promise<unknown> {
    const direct = new MongoClient(set.uri);
    try {
      return await direct.db('admin').collection('system.version').findOne({ _id: 'shardIdentity' as never });
    } finally {
      await direct.close();
    }
  }

  it('refuses a set name the members do not report', async () => {
    await refused(`wrong/${rs0.hosts[0]}`, 96, /does not match the actual set name rs0/);
  });

  it('refuses a seed that is no member of the named set', async () => {
    await refused(`rs0/${rs0.hosts[0]},${rs1.hosts[0]}`, 96, new RegExp(`host ${rs1.hosts[0]} does not belong to replica set rs0`));
  });

  it('refuses a member given without its set name, and a standalone given with one', async () => {
    await refused(rs0.hosts[1]!, 96, /host is part of set rs0; use replica set url format/);
    await refused(`rs0/127.0.0.1:${standalone.port}`, 96, /did not return a set name/);
  });

  it('refuses a set that is already the shard of another cluster', async () => {
    const otherClient = new MongoClient(other.routers[0]!.uri);
    try {
      await otherClient.db('admin').command({ addShard: `rs1/${rs1.hosts[0]}` });
    } finally {
      await otherClient.close();
    }
    const before = await shardIdentityOf(rs1);
    await refused(`rs1/${rs1.hosts[0]}`, 40372, /another cluster/);
    assert.deepEqual(await shardIdentityOf(rs1), before, 'the other cluster\'s identity stays');
  });

  it('left every refused set without a shard identity', async () => {
    assert.equal(await shardIdentityOf(rs0), null);
  });

  it('adds a set from one seed under its name, storing every member, and answers a repeat with the same shard', async () => {
    const reply = await client.db('admin').command({ addShard: `rs0/${rs0.hosts[2]}` });
    assert.equal(reply.shardAdded, 'rs0');
    const shards = await client.db('config').collection('shards').find().toArray();
    assert.deepEqual(shards.map((s) => [s._id, s.host]), [['rs0', `rs0/${rs0.hosts.join(',')}`]]);
    assert.equal((await client.db('admin').command({ addShard: `rs0/${rs0.hosts[0]}` })).shardAdded, 'rs0');
    await assert.rejects(client.db('admin').command({ addShard: `rs0/${rs0.hosts[0]}`, name: 'another' }), /A shard already exists containing the replica set 'rs0'/);
    const identity = await shardIdentityOf(rs0) as { shardName?: string } | null;
    assert.equal(identity?.shardName, 'rs0');
  });
});
