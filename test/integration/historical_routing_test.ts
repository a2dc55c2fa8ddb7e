import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MinKey, MongoClient, MongoServerError, type ClientSession, type Timestamp } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 21, the historical routing table: a snapshot read or a transaction reading at cluster time
// T is routed by the routing table as of T (each chunk's config.chunks history), and each shard
// filters orphans by what it owned at T. A range that moved after T is read on its former owner,
// from its versions, even once its range deleter has removed the documents; a shard that had
// cloned a range at T without owning it yet does not add its copies; a chunk whose history does
// not reach back to T answers StaleChunkHistory (250).
describe('the routing table as of a cluster time', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let direct: MongoClient[];

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    direct = cluster.shards.map((s) => f.connect(s.uri));
    await client.db('admin').command({ enableSharding: 'hist', primaryShard: 'shard0' });
  });

  const admin = () => client.db('admin');
  const docs = (from: number, n: number, v = 0): AnyDoc[] => Array.from({ length: n }, (_, i) => ({ _id: from + i, v }));

  // [MinKey, 100) on shard0, [100, MaxKey) on shard1, with documents 0..9 and 100..109.
  async function twoShards(coll: string): Promise<void> {
    await admin().command({ shardCollection: `hist.${coll}`, key: { _id: 1 } });
    await admin().command({ split: `hist.${coll}`, middle: { _id: 100 } });
    await admin().command({ moveChunk: `hist.${coll}`, find: { _id: 100 }, to: 'shard1' });
    await client.db('hist').collection<AnyDoc>(coll).insertMany([...docs(0, 10), ...docs(100, 10)]);
  }

  // The time of a write through a causally consistent session: every commit it could see is at
  // or before it.
  async function timeOfWrite(coll: string, doc: AnyDoc): Promise<Timestamp> {
    const session = client.startSession({ causalConsistency: true });
    try {
      await client.db('hist').collection<AnyDoc>(coll).insertOne(doc, { session });
      return session.operationTime!;
    } finally {
      await session.endSession();
    }
  }

  async function snapshotFind(coll: string, at: Timestamp, filter: AnyDoc = {}): Promise<AnyDoc[]> {
    const reply = await client.db('hist').command({ find: coll, filter, sort: { _id: 1 }, batchSize: 5, readConcern: { level: 'snapshot', atClusterTime: at } });
    const out = [...reply.cursor.firstBatch as AnyDoc[]];
    // A small cursor id comes back a number, which getMore would send as a double.
    let id = Long.fromValue(reply.cursor.id);
    while (!id.isZero()) {
      const more = await client.db('hist').command({ getMore: id, collection: coll, batchSize: 5 });
      out.push(...more.cursor.nextBatch as AnyDoc[]);
      id = Long.fromValue(more.cursor.id);
    }
    return out;
  }

  async function failure(p: Promise<unknown>): Promise<MongoServerError> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
    return err;
  }

  it('a snapshot read at a time before a migration reads the moved range on its former owner, even after its range deletion', async () => {
    await twoShards('moved');
    const c = client.db('hist').collection<AnyDoc>('moved');
    const at = await timeOfWrite('moved', { _id: 10, v: 0 });
    await c.updateMany({}, { $set: { v: 1 } });
    await c.deleteMany({ _id: { $in: [1, 101] } });
    await admin().command({ moveChunk: 'hist.moved', find: { _id: 100 }, to: 'shard0', _waitForDelete: true });
    await c.insertMany([{ _id: 150, v: 2 }, { _id: 50, v: 2 }]);
    await c.updateMany({ _id: { $gte: 100 } }, { $set: { v: 3 } });
    assert.equal(await direct[1]!.db('hist').collection<AnyDoc>('moved').countDocuments({}), 0, 'the former owner deleted the range');

    const expected = [...docs(0, 11), ...docs(100, 10)];
    assert.deepEqual(await snapshotFind('moved', at), expected, 'every document as of then, once');
    assert.deepEqual(await snapshotFind('moved', at, { _id: { $gte: 100 } }), docs(100, 10), 'the moved range alone');
    assert.deepEqual(await snapshotFind('moved', at, { _id: 105 }), [{ _id: 105, v: 0 }], 'one document of it');
    const agg = await client.db('hist').command({ aggregate: 'moved', pipeline: [{ $group: { _id: '$v', n: { $sum: 1 } } }], cursor: {}, readConcern: { level: 'snapshot', atClusterTime: at } });
    assert.deepEqual(agg.cursor.firstBatch, [{ _id: 0, n: 21 }]);
    const distinct = await client.db('hist').command({ distinct: 'moved', key: '_id', query: { _id: { $gte: 100 } }, readConcern: { level: 'snapshot', atClusterTime: at } });
    assert.deepEqual(distinct.values, docs(100, 10).map((d) => d._id));

    const now = await c.find({}, { sort: { _id: 1 } }).toArray();
    assert.deepEqual(now.map((d) => d._id), [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50, 100, 102, 103, 104, 105, 106, 107, 108, 109, 150]);
  });

  it('a snapshot read at a time when the recipient held a clone of a range it did not own yet counts its documents once', async () => {
    await twoShards('cloned');
    const donor = direct[1]!.db('admin');
    const { count } = await donor.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
    const moving = admin().command({ moveChunk: 'hist.cloned', find: { _id: 100 }, to: 'shard0' });
    let at: Timestamp;
    try {
      await donor.command({ waitForFailPoint: 'moveChunkHangAtStep3', timesEntered: Number(count) + 1, maxTimeMS: 60_000 });
      // On the recipient, after its clone of [100, MaxKey): shard0 holds those documents at this time.
      at = await timeOfWrite('cloned', { _id: 10, v: 0 });
      assert.equal(await direct[0]!.db('hist').collection<AnyDoc>('cloned').countDocuments({ _id: { $gte: 100 } }), 10, 'the recipient has the clone');
    } finally {
      await donor.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
    }
    await moving;
    await client.db('hist').collection<AnyDoc>('cloned').updateMany({}, { $set: { v: 1 } });
    assert.deepEqual(await snapshotFind('cloned', at), [...docs(0, 11), ...docs(100, 10)]);
    const count2 = await client.db('hist').command({ aggregate: 'cloned', pipeline: [{ $count: 'n' }], cursor: {}, readConcern: { level: 'snapshot', atClusterTime: at } });
    assert.deepEqual(count2.cursor.firstBatch, [{ n: 21 }]);
  });

  it('a transaction begun before a migration commit reads the same snapshot after it, and may not write to the moved range', async () => {
    await twoShards('txn');
    const c = client.db('hist').collection<AnyDoc>('txn');
    const session: ClientSession = client.startSession();
    try {
      session.startTransaction();
      const first = await c.find({}, { session, sort: { _id: 1 } }).toArray();
      assert.deepEqual(first, [...docs(0, 10), ...docs(100, 10)]);
      await c.updateMany({}, { $set: { v: 1 } });
      await admin().command({ moveChunk: 'hist.txn', find: { _id: 100 }, to: 'shard0', _waitForDelete: true });
      await c.insertOne({ _id: 120, v: 1 });
      assert.deepEqual(await c.find({}, { session, sort: { _id: 1 } }).toArray(), first, 'the same snapshot, the moved range from its former owner');
      assert.deepEqual(await c.findOne({ _id: 105 }, { session }), { _id: 105, v: 0 });
      assert.equal(await c.countDocuments({ _id: { $gte: 100 } }, { session }), 10);
      // Every document changed after the snapshot: a write to one is a WriteConflict, so insert.
      await c.insertOne({ _id: 60, v: 7 }, { session });
      const conflict = await failure(c.insertOne({ _id: 160, v: 7 }, { session }));
      assert.equal(conflict.code, 272, conflict.message);
      assert.equal(conflict.codeName, 'MigrationConflict');
      assert.ok(conflict.hasErrorLabel('TransientTransactionError'), JSON.stringify(conflict.errorLabels));
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
    const now = await c.find({}, { sort: { _id: 1 } }).toArray();
    assert.ok(now.every((d) => d.v === 1), JSON.stringify(now));
    assert.equal(now.length, 21);
  });

  it('a transaction begun before a migration commit commits its writes to ranges that did not move', async () => {
    await twoShards('commit');
    const c = client.db('hist').collection<AnyDoc>('commit');
    const session = client.startSession();
    let moved = false;
    try {
      await session.withTransaction(async () => {
        assert.equal((await c.find({}, { session }).toArray()).length, 20);
        if (!moved) {
          await admin().command({ moveChunk: 'hist.commit', find: { _id: 100 }, to: 'shard0' });
          moved = true;
        }
        assert.equal((await c.find({ _id: { $gte: 100 } }, { session }).toArray()).length, 10);
        await c.updateOne({ _id: 1 }, { $inc: { v: 1 } }, { session });
      });
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, v: 1 });
  });

  it('a read at a time older than a chunk\'s history answers StaleChunkHistory (250)', async () => {
    await twoShards('merged');
    await admin().command({ split: 'hist.merged', middle: { _id: 50 } });
    const at = await timeOfWrite('merged', { _id: 10, v: 0 });
    // The merged chunk's history begins at the merge.
    await admin().command({ mergeChunks: 'hist.merged', bounds: [{ _id: new MinKey() }, { _id: 100 }] });
    const stale = await failure(snapshotFind('merged', at));
    assert.equal(stale.code, 250, stale.message);
    assert.equal(stale.codeName, 'StaleChunkHistory');
    assert.match(stale.message, /Cannot find shardId the chunk belonged to at cluster time/);
    assert.deepEqual(await snapshotFind('merged', at, { _id: { $gte: 100 } }), docs(100, 10), 'a range whose history reaches back is read');
    const session = client.startSession();
    try {
      session.startTransaction({ readConcern: { level: 'snapshot' } });
      // A transaction reads at a time the router picks now: after the merge.
      assert.equal((await client.db('hist').collection<AnyDoc>('merged').find({}, { session }).toArray()).length, 21);
      await session.commitTransaction();
    } finally {
      await session.endSession();
    }
  });
});

// How far back a migration's commit keeps chunk history follows the config server's parameters
// (MongoDB's getHistoryWindowInSeconds): here the floor, 10 seconds. The shards keep their versions
// 300 seconds, so what a read older than the chunk history meets is the router's StaleChunkHistory.
describe('chunk history kept by migration commits', () => {
  let client: MongoClient;

  const short = ['--setParameter', 'minSnapshotHistoryWindowInSeconds=1', '--setParameter', 'transactionLifetimeLimitSeconds=1'];
  withCluster({ shards: 2, configArgs: short }, async (f) => {
    client = f.client;
    await client.db('admin').command({ enableSharding: 'kept', primaryShard: 'shard0' });
  });

  async function now(): Promise<Timestamp> {
    const session = client.startSession({ causalConsistency: true });
    try {
      await client.db('kept').collection<AnyDoc>('c').insertOne({ _id: -1 - Math.random() }, { session });
      return session.operationTime!;
    } finally {
      await session.endSession();
    }
  }

  it('drops entries older than the window at a commit, and a read before the kept history answers StaleChunkHistory (250)', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'kept.c', key: { _id: 1 } });
    await admin.command({ split: 'kept.c', middle: { _id: 100 } });
    await client.db('kept').collection<AnyDoc>('c').insertMany([{ _id: 100, v: 0 }, { _id: 101, v: 0 }]);
    const beforeFirst = await now();
    await admin.command({ moveChunk: 'kept.c', find: { _id: 100 }, to: 'shard1', _waitForDelete: true });
    const betweenMoves = await now();
    await client.db('kept').collection<AnyDoc>('c').updateMany({ _id: { $gte: 100 } }, { $set: { v: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 11_500));
    await admin.command({ moveChunk: 'kept.c', find: { _id: 100 }, to: 'shard0', _waitForDelete: true });

    const uuid = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'kept.c' }))!.uuid;
    const chunk = (await client.db('config').collection<AnyDoc>('chunks').findOne({ uuid, 'min._id': 100 }))!;
    assert.deepEqual((chunk.history as AnyDoc[]).map((h) => h.shard), ['shard0', 'shard1'], 'the creation entry went, the entry before the commit stays');

    const at = (t: Timestamp) => ({ find: 'c', filter: { _id: { $gte: 100 } }, sort: { _id: 1 }, readConcern: { level: 'snapshot', atClusterTime: t } });
    const then = await client.db('kept').command(at(betweenMoves));
    assert.deepEqual(then.cursor.firstBatch, [{ _id: 100, v: 0 }, { _id: 101, v: 0 }], 'read on shard1, which deleted the range since');
    const err = await client.db('kept').command(at(beforeFirst)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MongoServerError, String(err));
    assert.equal(err.code, 250, err.message);
  });
});
