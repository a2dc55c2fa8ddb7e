import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, Timestamp, type Db } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';

// Every place a command reads the current time takes it from its process's Clock (src/base/clock.ts),
// given by the composition root rather than read by the query layer or the command itself: $$NOW
// where no stage gave it (a find's projection and $expr, on a shard and on the router), $$NOW in
// aggregation and update pipelines, $currentDate in updates, upserts and findAndModify, and the
// replies' localTime. Each must still answer the time of the request.
describe('the current time in commands, on a shard and on the router', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  let shard: MongoClient;
  let db: Db;

  before(async () => {
    cluster = await spawnCluster({ shards: 1 });
    router = new MongoClient(cluster.routers[0]!.uri);
    shard = new MongoClient(cluster.shards[0]!.uri);
    db = router.db('now');
    await router.db('admin').command({ enableSharding: 'now', primaryShard: 'shard0' });
    await router.db('admin').command({ shardCollection: 'now.s', key: { k: 1 } });
    await db.collection<AnyDoc>('s').insertMany([{ _id: 1, k: 1, a: 2 }, { _id: 2, k: 2, a: 1 }]);
    await db.collection<AnyDoc>('u').insertMany([{ _id: 1, a: 2 }, { _id: 2, a: 1 }]);
  });
  after(async () => {
    await router?.close();
    await shard?.close();
    await cluster?.stop();
  });

  // `run`'s dates fall between the wall clock before and after it, to the second (a Timestamp's).
  async function within<T>(run: () => Promise<T>, dates: (result: T) => unknown[]): Promise<void> {
    const from = Math.floor(Date.now() / 1000) * 1000;
    const result = await run();
    const to = Date.now();
    const found = dates(result);
    assert.ok(found.length > 0);
    for (const d of found) {
      const ms = d instanceof Date ? d.getTime() : d instanceof Timestamp ? d.high * 1000 : NaN;
      assert.ok(ms >= from && ms <= to, `${String(d)} is not between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`);
    }
  }

  it('gives $$NOW to a find projection and $expr, answered by the shard or projected by the router', async () => {
    for (const coll of ['u', 's']) {
      await within(() => db.collection<AnyDoc>(coll).find({ $expr: { $lte: ['$$NOW', '$$NOW'] } }, { projection: { t: '$$NOW' } }).toArray(), (docs) => docs.map((d) => d.t));
      // Sorted by a field the projection drops: on a sharded collection the router projects.
      await within(() => db.collection<AnyDoc>(coll).find({}, { projection: { t: '$$NOW' }, sort: { a: 1 } }).toArray(), (docs) => docs.map((d) => d.t));
    }
    await within(() => shard.db('now').collection<AnyDoc>('u').find({}, { projection: { t: '$$NOW' } }).toArray(), (docs) => docs.map((d) => d.t));
  });

  it('gives $$NOW to an aggregation and an update pipeline, and the time to $currentDate', async () => {
    const u = db.collection<AnyDoc>('u');
    await within(() => u.aggregate([{ $set: { t: '$$NOW' } }]).toArray(), (docs) => docs.map((d) => d.t));
    await within(async () => {
      await u.updateOne({ _id: 1 }, [{ $set: { p: '$$NOW' } }]);
      await u.updateOne({ _id: 1 }, { $currentDate: { d: true } });
      await u.updateOne({ _id: 1 }, { $currentDate: { ts: { $type: 'timestamp' } } });
      await u.updateOne({ _id: 3 }, { $currentDate: { d: true } }, { upsert: true });
      await u.findOneAndUpdate({ _id: 2 }, { $currentDate: { d: true } });
      await u.findOneAndUpdate({ _id: 4 }, { $currentDate: { d: true } }, { upsert: true });
      return u.find({}).toArray();
    }, (docs) => [docs[0]!.p, docs[0]!.ts, ...docs.map((d) => d.d)]);
  });

  it("answers the process's time as localTime", async () => {
    for (const client of [router, shard]) {
      await within(() => client.db('admin').command({ hello: 1 }), (reply) => [reply.localTime]);
      await within(() => client.db('admin').command({ serverStatus: 1 }), (reply) => [reply.localTime]);
    }
  });
});
