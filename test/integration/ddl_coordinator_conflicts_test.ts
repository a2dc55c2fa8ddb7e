import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// What the DDL coordinators do with requests that meet a running one, routers that missed a DDL,
// and a config server that dies while a coordinator needs it.
const FAIL_POINT = 'hangBeforeDDLCoordinatorPhase';

describe('DDL coordinators: joins, conflicts, movePrimary, stale routers, config server crash', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let primary: MongoClient;

  withCluster({ shards: 2, routers: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    primary = f.connect(cluster.shards[0]!.uri);
  });

  async function sharded(db: string, coll: string, key: AnyDoc): Promise<void> {
    await client.db('admin').command({ enableSharding: db, primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: `${db}.${coll}`, key });
  }

  async function pauseBefore(desc: string, phase: string): Promise<number> {
    const { count } = await primary.db('admin').command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn', data: { desc, phase } });
    return count as number;
  }

  async function waitPaused(count: number): Promise<void> {
    await primary.db('admin').command({ waitForFailPoint: FAIL_POINT, timesEntered: count + 1, maxTimeMS: 30_000 });
  }

  async function resume(): Promise<void> {
    await primary.db('admin').command({ configureFailPoint: FAIL_POINT, mode: 'off' });
  }

  it('the same rename joins the running one; a different rename of the source answers ConflictingOperationInProgress', async () => {
    await sharded('conflict', 'src', { k: 1 });
    await client.db('conflict').collection<AnyDoc>('src').insertMany([{ _id: 1, k: 1 }, { _id: 2, k: 2 }]);
    const count = await pauseBefore('RenameCollectionCoordinator', 'kRenameMetadata');
    try {
      const admin = client.db('admin');
      const first = admin.command({ renameCollection: 'conflict.src', to: 'conflict.dst' });
      await waitPaused(count);
      const same = admin.command({ renameCollection: 'conflict.src', to: 'conflict.dst' });
      const other = await admin.command({ renameCollection: 'conflict.src', to: 'conflict.elsewhere' }).then(() => undefined, (err: unknown) => err as AnyDoc);
      assert.equal(other?.code, 117);
      assert.equal(other?.codeName, 'ConflictingOperationInProgress');
      assert.equal(other?.errmsg, 'Another renameCollection with different arguments is already running for the same namespace conflict.src');
      // A drop of the source waits for the rename's locks, then finds nothing under that name.
      const drop = client.db('conflict').command({ drop: 'src' });
      await resume();
      const [a, b] = await Promise.all([first, same]);
      assert.deepEqual([a.ok, b.ok], [1, 1]);
      assert.equal((await drop).ok, 1);
      assert.equal(await client.db('conflict').collection('dst').countDocuments(), 2, 'the drop came after the rename');
      assert.equal(await client.db('conflict').collection('elsewhere').countDocuments(), 0);
    } finally {
      await resume();
    }
  });

  it('a router that cached a sharded collection reads and writes it correctly after it was dropped and sharded again on another key', async () => {
    await sharded('stale', 'c', { a: 1 });
    await client.db('stale').collection<AnyDoc>('c').insertMany([{ _id: 1, a: 1, b: 10 }, { _id: 2, a: 2, b: 20 }]);
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      assert.equal(await other.db('stale').collection('c').countDocuments({ a: 1 }), 1, 'the second router caches {a: 1}');
      await client.db('stale').command({ drop: 'c' });
      await client.db('admin').command({ shardCollection: 'stale.c', key: { b: 1 } });
      await client.db('admin').command({ split: 'stale.c', middle: { b: 50 } });
      await client.db('admin').command({ moveChunk: 'stale.c', find: { b: 60 }, to: 'shard1' });
      await client.db('stale').collection<AnyDoc>('c').insertMany([{ _id: 3, a: 3, b: 30 }, { _id: 4, a: 4, b: 70 }]);
      assert.deepEqual((await other.db('stale').collection<AnyDoc>('c').find().sort({ _id: 1 }).toArray()).map((d) => d._id), [3, 4], 'no document of the dropped collection');
      await other.db('stale').collection<AnyDoc>('c').insertOne({ _id: 5, a: 5, b: 90 });
      await other.db('stale').collection<AnyDoc>('c').updateOne({ b: 70 }, { $set: { seen: true } });
      const shard1 = new MongoClient(cluster.shards[1]!.uri);
      try {
        assert.deepEqual((await shard1.db('stale').collection<AnyDoc>('c').find().sort({ _id: 1 }).toArray()).map((d) => [d._id, d.seen]), [[4, true], [5, undefined]], 'the stale router wrote where the new key puts it');
      } finally {
        await shard1.close();
      }
    } finally {
      await other.close();
    }
  });

  it('a coordinator whose config server is killed -9 at its commit retries until the config server is back, then finishes', async () => {
    await sharded('cfgcrash', 'c', { k: 1 });
    await client.db('cfgcrash').collection<AnyDoc>('c').insertMany([{ _id: 1, k: 1 }, { _id: 2, k: 2 }]);
    const count = await pauseBefore('DropCollectionCoordinator', 'kDropCollection');
    const drop = client.db('cfgcrash').command({ drop: 'c' });
    await waitPaused(count);
    await cluster.config.kill9();
    await resume();
    await sleep(1500); // the commit fails and is retried meanwhile
    assert.equal((await primary.db('config').collection<AnyDoc>('system.sharding_ddl_coordinators').findOne())?.phase, 'kDropCollection', 'still waiting for the config server');
    cluster.config = await restartNode(cluster.config, { role: 'config', extraArgs: ['--enableTestCommands'] });
    assert.equal((await drop).ok, 1);
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: 'cfgcrash.c' }), 0);
    assert.equal(await primary.db('config').collection('system.sharding_ddl_coordinators').countDocuments(), 0);
    for (const shard of cluster.shards) {
      const c = new MongoClient(shard.uri);
      try {
        assert.deepEqual(await c.db('cfgcrash').listCollections().toArray(), []);
        assert.equal(await c.db('config').collection('collection_critical_sections').countDocuments(), 0);
      } finally {
        await c.close();
      }
    }
    const reply = await client.db('admin').command({ checkMetadataConsistency: 1 });
    assert.deepEqual(reply.cursor.firstBatch, []);
  });
  it('a movePrimary waits for a DDL coordinator running on the donor, then moves what the DDL left', async () => {
    await client.db('admin').command({ enableSharding: 'moving', primaryShard: 'shard0' });
    await client.db('moving').collection<AnyDoc>('dropped').insertOne({ _id: 1 });
    await client.db('moving').collection<AnyDoc>('kept').insertOne({ _id: 2 });
    const count = await pauseBefore('DropCollectionCoordinator', 'kDropCollection');
    try {
      const drop = client.db('moving').command({ drop: 'dropped' });
      await waitPaused(count);
      let moved = false;
      const move = client.db('admin').command({ movePrimary: 'moving', to: 'shard1' }).then((r) => { moved = true; return r; });
      await sleep(1000);
      assert.equal(moved, false, 'the movePrimary waits for the drop');
      assert.equal((await client.db('config').collection<AnyDoc>('databases').findOne({ _id: 'moving' }))?.primary, 'shard0');
      await resume();
      assert.equal((await drop).ok, 1);
      assert.equal((await move).ok, 1);
    } finally {
      await resume();
    }
    assert.equal((await client.db('config').collection<AnyDoc>('databases').findOne({ _id: 'moving' }))?.primary, 'shard1');
    assert.deepEqual((await client.db('moving').listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name), ['kept']);
    assert.deepEqual(await client.db('moving').collection('kept').find().toArray(), [{ _id: 2 }]);
    // The donor released its lock with its section: a DDL on the database runs at once.
    await client.db('moving').command({ drop: 'kept' });
    const reply = await client.db('admin').command({ checkMetadataConsistency: 1 });
    assert.deepEqual(reply.cursor.firstBatch, []);
  });
});
