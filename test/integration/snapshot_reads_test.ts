import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError, Timestamp } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 21, versions by commit timestamp: readConcern snapshot reads the whole cluster as of one
// cluster time. A collection split over two shards is read at a time before updates, deletes and
// inserts on both; a cursor keeps its snapshot across getMores while writes land; the driver's
// snapshot session reads later commands at the time of its first; a range that moved since is read
// on the shard that owned it then; a time older than what a shard keeps (here: from before its
// restart) answers SnapshotTooOld.
describe('snapshot reads at a cluster time', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'snap', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'snap.c', key: { _id: 1 } });
    await admin.command({ split: 'snap.c', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'snap.c', find: { _id: 100 }, to: 'shard1' });
  });

  const docs = (n: number, offset: number): AnyDoc[] => Array.from({ length: n }, (_, i) => ({ _id: offset + i, v: 0, tag: offset < 100 ? 'low' : 'high' }));

  async function timeAfterWrites(): Promise<Timestamp> {
    const session = client.startSession({ causalConsistency: true });
    try {
      await client.db('snap').collection<AnyDoc>('c').findOne({ _id: 0 }, { session });
      return session.operationTime!;
    } finally {
      await session.endSession();
    }
  }

  it('find, aggregate and distinct at an earlier time see both shards as they were then', async () => {
    const c = client.db('snap').collection<AnyDoc>('c');
    await c.insertMany([...docs(5, 0), ...docs(5, 100)]);
    const before = await timeAfterWrites();
    await c.updateMany({}, { $set: { v: 1 } });
    await c.deleteMany({ _id: { $in: [1, 101] } });
    await c.insertMany([{ _id: 50, v: 1, tag: 'low' }, { _id: 150, v: 1, tag: 'high' }]);

    const at = { level: 'snapshot', atClusterTime: before } as const;
    const then = await client.db('snap').command({ find: 'c', filter: {}, sort: { _id: 1 }, readConcern: at });
    assert.deepEqual(then.cursor.firstBatch, [...docs(5, 0), ...docs(5, 100)]);
    assert.deepEqual(then.cursor.atClusterTime, before, 'the reply names the time it read at');
    const agg = await client.db('snap').command({ aggregate: 'c', pipeline: [{ $group: { _id: '$v', n: { $sum: 1 } } }], cursor: {}, readConcern: at });
    assert.deepEqual(agg.cursor.firstBatch, [{ _id: 0, n: 10 }]);
    const distinct = await client.db('snap').command({ distinct: 'c', key: 'v', readConcern: at });
    assert.deepEqual(distinct.values, [0]);

    const now = await c.find({}, { sort: { _id: 1 } }).toArray();
    assert.deepEqual(now.map((d) => d._id), [0, 2, 3, 4, 50, 100, 102, 103, 104, 150]);
    assert.ok(now.every((d) => d.v === 1));
  });

  it("a cursor keeps its snapshot across getMores while writes land on both shards", async () => {
    const c = client.db('snap').collection<AnyDoc>('k');
    await client.db('admin').command({ shardCollection: 'snap.k', key: { _id: 1 } });
    await client.db('admin').command({ split: 'snap.k', middle: { _id: 100 } });
    await client.db('admin').command({ moveChunk: 'snap.k', find: { _id: 100 }, to: 'shard1' });
    await c.insertMany([...docs(20, 0), ...docs(20, 100)]);
    const session = client.startSession({ snapshot: true });
    try {
      const cursor = c.find({}, { session, batchSize: 3, sort: { _id: 1 } });
      const seen: AnyDoc[] = [];
      for await (const doc of cursor) {
        seen.push(doc);
        if (seen.length === 4) {
          await client.db('snap').collection<AnyDoc>('k').updateMany({}, { $set: { v: 9 } });
          await client.db('snap').collection<AnyDoc>('k').deleteMany({ _id: { $gte: 10, $lt: 110 } });
        }
      }
      assert.deepEqual(seen, [...docs(20, 0), ...docs(20, 100)]);
      // The session's later reads are at the time of its first.
      assert.equal(await c.countDocuments({}, { session }), 40);
      assert.deepEqual(await c.distinct('v', {}, { session }), [0]);
    } finally {
      await session.endSession();
    }
    assert.equal(await c.countDocuments({}), 20);
  });

  it('a time from before a chunk moved reads the moved range on the shard that owned it then', async () => {
    await client.db('admin').command({ shardCollection: 'snap.m', key: { _id: 1 } });
    await client.db('admin').command({ split: 'snap.m', middle: { _id: 100 } });
    await client.db('admin').command({ moveChunk: 'snap.m', find: { _id: 100 }, to: 'shard1' });
    await client.db('snap').collection<AnyDoc>('m').insertMany([{ _id: 1 }, { _id: 101 }]);
    const session = client.startSession({ causalConsistency: true });
    await client.db('snap').collection<AnyDoc>('m').findOne({ _id: 1 }, { session });
    const before = session.operationTime!;
    await session.endSession();
    await client.db('admin').command({ moveChunk: 'snap.m', find: { _id: 100 }, to: 'shard0' });
    await client.db('snap').collection<AnyDoc>('m').insertOne({ _id: 102 });
    const then = await client.db('snap').command({ find: 'm', sort: { _id: 1 }, readConcern: { level: 'snapshot', atClusterTime: before } });
    assert.deepEqual(then.cursor.firstBatch, [{ _id: 1 }, { _id: 101 }]);
    const now = await client.db('snap').command({ find: 'm', sort: { _id: 1 }, readConcern: { level: 'snapshot' } });
    assert.deepEqual(now.cursor.firstBatch, [{ _id: 1 }, { _id: 101 }, { _id: 102 }]);
  });

  it('a read that waits for a prepared transaction reads at its time once the decision comes, not the latest state; one at available does not wait', async () => {
    const shard = new MongoClient(cluster.shards[0]!.uri);
    const session = shard.startSession();
    try {
      const c = shard.db('snap').collection<AnyDoc>('prepared');
      await c.insertOne({ _id: 1, v: 0 });
      session.startTransaction();
      await c.updateOne({ _id: 1 }, { $set: { v: 1 } }, { session });
      const { prepareTimestamp } = await shard.db('admin').command({ prepareTransaction: 1 }, { session }) as { prepareTimestamp: Timestamp };
      // At the prepare's time the read waits for the decision; the commit comes after that time.
      const read = shard.db('snap').command({ find: 'prepared', readConcern: { level: 'snapshot', atClusterTime: prepareTimestamp } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Only a read at 'available' goes by the prepared transaction, as MongoDB's ignores prepare
      // conflicts (a member's initial sync clones so): it sees the document as last committed.
      const available = await shard.db('snap').command({ find: 'prepared', readConcern: { level: 'available' } });
      assert.deepEqual(available.cursor.firstBatch, [{ _id: 1, v: 0 }]);
      const commitTimestamp = new Timestamp({ t: prepareTimestamp.t, i: prepareTimestamp.i + 1 });
      await shard.db('admin').command({ commitTransaction: 1, commitTimestamp }, { session });
      assert.deepEqual((await read).cursor.firstBatch, [{ _id: 1, v: 0 }], 'the commit is after the time read at');
      assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, v: 1 });
    } finally {
      await session.endSession().catch(() => undefined);
      await shard.close();
    }
  });

  it('a time from before a shard restarted answers SnapshotTooOld: history is kept in memory', async () => {
    const c = client.db('snap').collection<AnyDoc>('r');
    await c.insertOne({ _id: 1 });
    const before = await timeAfterWrites();
    // A commit after `before`: the restarted shard's history starts after it, however soon it restarts.
    await c.insertOne({ _id: 2 });
    await cluster.shards[0]!.kill9();
    cluster.shards[0] = await restartNode(cluster.shards[0]!, { role: 'shard' });
    const err = await client.db('snap').command({ find: 'r', readConcern: { level: 'snapshot', atClusterTime: before } }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MongoServerError, String(err));
    assert.equal(err.code, 239);
    assert.equal(err.codeName, 'SnapshotTooOld');
    const latest = await client.db('snap').command({ find: 'r', readConcern: { level: 'snapshot' } });
    assert.deepEqual(latest.cursor.firstBatch, [{ _id: 1 }, { _id: 2 }]);
  });
});
