import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, type ClientSession } from 'mongodb';
import { startFaultProxy, type FaultProxy } from '../helpers/fault_proxy.js';
import { spawnRouter, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 20's reproduction: a proxy between the driver and the router passes a write on and loses
// its reply (closing the connection); the driver retries it on a new connection. The write must
// take effect once and the retry answer success.
describe('a retried write through a router takes effect once', () => {
  let cluster: SpawnedCluster;
  let proxy: FaultProxy;
  let client: MongoClient;
  // Which command's reply the proxy loses next, once.
  let dropNext: string | undefined;

  withCluster({ shards: 2 }, async (f) => {
    cluster = f.cluster;
    proxy = await startFaultProxy(cluster.routers[0]!.port, (command) => {
      if (command !== dropNext) return false;
      dropNext = undefined;
      return true;
    });
    client = f.connect(proxy.uri, { retryWrites: true });
    const admin = new MongoClient(cluster.routers[0]!.uri);
    try {
      await admin.db('admin').command({ enableSharding: 'rr', primaryShard: 'shard0' });
      await admin.db('admin').command({ shardCollection: 'rr.c', key: { _id: 1 } });
      await admin.db('admin').command({ split: 'rr.c', middle: { _id: 100 } });
      await admin.db('admin').command({ moveChunk: 'rr.c', find: { _id: 100 }, to: 'shard1' });
    } finally {
      await admin.close();
    }
  });

  after(async () => {
    await proxy?.stop();
  });

  it('updateOne({_id: 1}, {$inc: {n: 1}}) whose reply is lost increments once and answers success', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    await coll.insertOne({ _id: 1, n: 0 });
    dropNext = 'update';
    const result = await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } });
    assert.equal(proxy.dropped.get('update'), 1, 'the first reply was lost');
    assert.equal(result.modifiedCount, 1);
    assert.equal((await coll.findOne({ _id: 1 }))!.n, 1);
  });

  it('insertOne whose reply is lost answers success with its original _id, inserted once', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    dropNext = 'insert';
    const result = await coll.insertOne({ k: 'once' });
    assert.equal(proxy.dropped.get('insert'), 1);
    assert.ok(result.insertedId !== undefined);
    assert.equal(await coll.countDocuments({ k: 'once' }), 1);
    assert.equal(await coll.countDocuments({ _id: result.insertedId }), 1);
  });

  it('findOneAndUpdate whose reply is lost returns the original document', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    await coll.insertOne({ _id: 150, n: 0 });
    dropNext = 'findAndModify';
    const found = await coll.findOneAndUpdate({ _id: 150 }, { $inc: { n: 1 } }, { returnDocument: 'after' });
    assert.equal(proxy.dropped.get('findAndModify'), 1);
    assert.deepEqual(found, { _id: 150, n: 1 });
    assert.equal((await coll.findOne({ _id: 150 }))!.n, 1);
  });

  it('deleteOne whose reply is lost answers deletedCount 1', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    await coll.insertOne({ _id: 160 });
    dropNext = 'delete';
    const result = await coll.deleteOne({ _id: 160 });
    assert.equal(proxy.dropped.get('delete'), 1);
    assert.equal(result.deletedCount, 1);
  });

  it('insertMany across both shards whose reply is lost inserts each document once', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    dropNext = 'insert';
    const result = await coll.insertMany([{ _id: 50, k: 'many' }, { _id: 170, k: 'many' }, { _id: 51, k: 'many' }]);
    assert.equal(proxy.dropped.get('insert'), 2);
    assert.equal(result.insertedCount, 3);
    assert.equal(await coll.countDocuments({ k: 'many' }), 3);
  });

  // Without the shard key the router looks for a matching document before it writes; a retry's
  // filter no longer matches the document the first attempt wrote and would find one on the
  // other shard, where the statement never ran.
  it('updateOne, findOneAndUpdate and deleteOne without shard key whose replies are lost take effect once', async () => {
    const coll = client.db('rr').collection<AnyDoc>('c');
    await coll.insertMany([{ _id: 10, status: 'new' }, { _id: 110, status: 'new' }]);
    const lost = (name: string): number => proxy.dropped.get(name) ?? 0;
    const before = { update: lost('update'), findAndModify: lost('findAndModify'), delete: lost('delete') };
    dropNext = 'update';
    const updated = await coll.updateOne({ status: 'new' }, { $set: { status: 'done' } });
    assert.equal(lost('update'), before.update + 1);
    assert.deepEqual([updated.matchedCount, updated.modifiedCount], [1, 1]);
    assert.equal(await coll.countDocuments({ status: 'done' }), 1, 'one document updated');

    await coll.updateMany({ status: { $in: ['new', 'done'] } }, { $set: { status: 'new' } });
    dropNext = 'findAndModify';
    const found = await coll.findOneAndUpdate({ status: 'new' }, { $set: { status: 'taken' } }, { returnDocument: 'after' });
    assert.equal(lost('findAndModify'), before.findAndModify + 1);
    assert.equal(found?.status, 'taken');
    assert.equal(await coll.countDocuments({ status: 'taken' }), 1, 'one document taken');

    dropNext = 'delete';
    const deleted = await coll.deleteOne({ status: 'new' });
    assert.equal(lost('delete'), before.delete + 1);
    assert.equal(deleted.deletedCount, 1);
    assert.equal(await coll.countDocuments({ _id: { $in: [10, 110] } }), 1, 'one document deleted');
  });

  describe('across a chunk migration', () => {
    let direct: MongoClient;
    let session: ClientSession;
    before(async () => {
      direct = new MongoClient(cluster.routers[0]!.uri);
      session = direct.startSession();
    });
    after(async () => {
      await session?.endSession();
      await direct?.close();
    });
    const run = (cmd: AnyDoc) => direct.db('rr').command(cmd, { session });
    const move = (k: number, to: string) => direct.db('admin').command({ moveChunk: 'rr.moving', find: { _id: k }, to });

    it('a retry after the write\'s chunk moved returns the original reply and does not run again', async () => {
      const admin = direct.db('admin');
      await admin.command({ shardCollection: 'rr.moving', key: { _id: 1 } });
      await direct.db('rr').collection<AnyDoc>('moving').insertMany([{ _id: 1, n: 0 }, { _id: 2, n: 0 }]);
      const update = { update: 'moving', updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } } }, { q: { _id: 2 }, u: { $inc: { n: 1 } } }], txnNumber: Long.fromNumber(1) };
      const fam = { findAndModify: 'moving', query: { _id: 2 }, update: { $inc: { n: 10 } }, new: true, txnNumber: Long.fromNumber(2) };
      const first = await run(update);
      assert.equal(first.nModified, 2);
      await move(1, 'shard1');
      const again = await run(update);
      assert.deepEqual([again.n, again.nModified, again.retriedStmtIds], [2, 2, [0, 1]]);
      const famFirst = await run(fam);
      await move(1, 'shard0');
      const famAgain = await run(fam);
      assert.deepEqual(famAgain.value, famFirst.value, 'the retried findAndModify returns the original document');
      assert.deepEqual(await direct.db('rr').collection<AnyDoc>('moving').find().sort({ _id: 1 }).toArray(), [{ _id: 1, n: 1 }, { _id: 2, n: 11 }]);
    });

    it('history the donor could not place in a range becomes a dead end: IncompleteTransactionHistory, never a second run', async () => {
      // Written while the collection was unsharded: the shard kept no shard key for the statement.
      await direct.db('rr').collection<AnyDoc>('late').insertOne({ _id: 5, n: 0 });
      const update = { update: 'late', updates: [{ q: { _id: 5 }, u: { $inc: { n: 1 } } }], txnNumber: Long.fromNumber(3) };
      await run(update);
      await direct.db('admin').command({ shardCollection: 'rr.late', key: { _id: 1 } });
      await direct.db('admin').command({ moveChunk: 'rr.late', find: { _id: 5 }, to: 'shard1' });
      const again = await run(update);
      assert.equal(again.writeErrors?.[0]?.code, 217, JSON.stringify(again));
      assert.equal(again.writeErrors?.[0]?.codeName, 'IncompleteTransactionHistory');
      assert.equal((await direct.db('rr').collection<AnyDoc>('late').findOne({ _id: 5 }))!.n, 1);
    });
  });

  describe('across restarts', () => {
    let direct: MongoClient;
    let session: ClientSession;
    before(async () => {
      direct = new MongoClient(cluster.routers[0]!.uri);
      session = direct.startSession();
    });
    after(async () => {
      await session?.endSession();
      await direct?.close();
    });
    const run = (cmd: AnyDoc) => direct.db('rr').command(cmd, { session });
    // The client reconnects on its own once the process is back on its port.
    const eventually = async (cmd: AnyDoc): Promise<AnyDoc> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await run(cmd);
        } catch (err) {
          if (attempt > 100) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };

    it('a retry after kill -9 and restart of the shard that ran it is answered, not run again', async () => {
      await direct.db('rr').collection<AnyDoc>('c').insertOne({ _id: 40, n: 0 });
      const update = { update: 'c', updates: [{ q: { _id: 40 }, u: { $inc: { n: 1 } } }], txnNumber: Long.fromNumber(10) };
      await run(update);
      await cluster.shards[0]!.kill9();
      cluster.shards[0] = await restartNode(cluster.shards[0]!, { role: 'shard' });
      const again = await eventually(update);
      assert.deepEqual(again.retriedStmtIds, [0]);
      assert.equal((await direct.db('rr').collection<AnyDoc>('c').findOne({ _id: 40 }))!.n, 1);
    });

    it('a retry after kill -9 and restart of the router is answered, not run again: the router keeps no retry state', async () => {
      await direct.db('rr').collection<AnyDoc>('c').insertOne({ _id: 41, n: 0 });
      const fam = { findAndModify: 'c', query: { _id: 41 }, update: { $inc: { n: 1 } }, new: true, txnNumber: Long.fromNumber(11) };
      const first = await run(fam);
      const router = cluster.routers[0]!;
      await router.kill9();
      cluster.routers[0] = await spawnRouter(cluster.config.port, [], router.port);
      const again = await eventually(fam);
      assert.deepEqual(again.value, first.value);
      assert.equal((await direct.db('rr').collection<AnyDoc>('c').findOne({ _id: 41 }))!.n, 1);
    });
  });
});
