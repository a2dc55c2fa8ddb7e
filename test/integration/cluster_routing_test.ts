import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import { ROUTER_FAST_PATHS, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const DOCS = 100_000;

async function perShardCounts(cluster: SpawnedCluster, ns: string): Promise<number[]> {
  const [db, coll] = [ns.slice(0, ns.indexOf('.')), ns.slice(ns.indexOf('.') + 1)];
  return Promise.all(cluster.shards.map(async (s) => {
    const c = new MongoClient(s.uri);
    try {
      return await c.db(db).collection(coll).countDocuments();
    } finally {
      await c.close();
    }
  }));
}

function targetedShards(explain: AnyDoc): string[] {
  return (explain.queryPlanner.winningPlan.shards as AnyDoc[]).map((s) => s.shardName).sort();
}

// With the router's fast paths on and off (ROUTER_FAST_PATHS): the answers must not change.
for (const setting of ROUTER_FAST_PATHS) describe(`a three-shard cluster through the router (${setting.name})`, () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;

  withCluster({ shards: 3, routerArgs: setting.routerArgs }, async (f) => {
    ({ cluster, client } = f);
    db = client.db('app');
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'app', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'app.ranged', key: { k: 1 } });
    await admin.command({ split: 'app.ranged', middle: { k: DOCS / 3 } });
    await admin.command({ split: 'app.ranged', middle: { k: (2 * DOCS) / 3 } });
    await admin.command({ shardCollection: 'app.hashed', key: { k: 'hashed' } });
  });

  it('spreads a hashed collection over every shard and targets equality to one shard', { timeout: 120_000 }, async () => {
    const coll = db.collection<AnyDoc>('hashed');
    // Unordered, as MongoDB advises for bulk loads into a hashed collection: an ordered batch must
    // be sent as runs of consecutive documents bound for the same shard.
    for (let b = 0; b < DOCS; b += 1000) await coll.insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: b + j, k: b + j, g: (b + j) % 7 })), { ordered: false });
    const counts = await perShardCounts(cluster, 'app.hashed');
    assert.equal(counts.reduce((a, b) => a + b, 0), DOCS);
    assert.ok(counts.every((n) => n > DOCS / 10), `every shard holds a share: ${counts.join(', ')}`);
    const eq = await coll.find({ k: 1234 }).explain('executionStats');
    assert.equal(targetedShards(eq).length, 1);
    assert.deepEqual(await coll.find({ k: 1234 }).toArray(), [{ _id: 1234, k: 1234, g: 1234 % 7 }]);
    const range = await coll.find({ k: { $gte: 10, $lt: 20 } }).explain('executionStats');
    assert.equal(targetedShards(range).length, 3, 'a range on a hashed key reaches every shard');
    assert.equal(await coll.countDocuments({ k: { $gte: 10, $lt: 20 } }), 10);
  });

  it('routes a ranged collection by chunk and merges sorted, skipped and limited finds', { timeout: 120_000 }, async () => {
    const coll = db.collection<AnyDoc>('ranged');
    const chunks = await client.db('config').collection('chunks').find({}).toArray();
    assert.ok(chunks.length >= 3 + 4);
    for (let b = 0; b < DOCS; b += 1000) await coll.insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: b + j, k: b + j, g: (b + j) % 7 })));
    assert.equal(await coll.countDocuments(), DOCS);
    const eq = await coll.find({ k: 10 }).explain('executionStats');
    assert.deepEqual(targetedShards(eq), ['shard0']);
    const sorted = await coll.find({ g: 3 }).sort({ k: -1 }).skip(5).limit(20).toArray();
    const expected = Array.from({ length: DOCS }, (_, i) => i).filter((i) => i % 7 === 3).sort((a, b) => b - a).slice(5, 25);
    assert.deepEqual(sorted.map((d) => d.k), expected);
    const totals = await coll.aggregate([{ $group: { _id: '$g', n: { $sum: 1 }, s: { $sum: '$k' } } }, { $sort: { _id: 1 } }]).toArray();
    assert.equal(totals.length, 7);
    for (const t of totals) {
      const members = Array.from({ length: DOCS }, (_, i) => i).filter((i) => i % 7 === t._id);
      assert.equal(t.n, members.length);
      assert.equal(t.s, members.reduce((a, b) => a + b, 0));
    }
    const updated = await coll.updateMany({ k: { $lt: 100 } }, { $set: { touched: true } });
    assert.equal(updated.modifiedCount, 100);
    const one = await coll.updateOne({ g: 5, touched: true }, { $set: { once: true } });
    assert.equal(one.modifiedCount, 1);
    assert.equal(await coll.countDocuments({ once: true }), 1);
    const removed = await coll.deleteMany({ k: { $gte: DOCS - 10 } });
    assert.equal(removed.deletedCount, 10);
  });

  it('writes $merge and $out results through the router, with MongoDB\'s modes and errors', async () => {
    const src = db.collection<AnyDoc>('mergesrc');
    await src.insertMany([{ _id: 1, v: 'a' }, { _id: 2, v: 'b' }, { _id: 3, v: 'c' }]);
    await client.db('admin').command({ shardCollection: 'app.mergedst', key: { _id: 'hashed' } });
    const dst = db.collection<AnyDoc>('mergedst');
    const codeOf = (p: Promise<unknown>): Promise<number> => p.then(() => 0, (err: { code: number }) => err.code);

    await src.aggregate([{ $merge: { into: 'mergedst' } }]).toArray();
    assert.deepEqual(await dst.find().sort({ _id: 1 }).toArray(), [{ _id: 1, v: 'a' }, { _id: 2, v: 'b' }, { _id: 3, v: 'c' }]);
    assert.ok((await perShardCounts(cluster, 'app.mergedst')).filter((n) => n > 0).length > 1, 'the results land on the shards that own them');
    assert.equal(await codeOf(src.aggregate([{ $merge: { into: 'mergedst', whenMatched: 'fail' } }]).toArray()), 11000);

    await src.updateOne({ _id: 1 }, { $set: { v: 'changed' } });
    await src.insertOne({ _id: 4, v: 'd' });
    await src.aggregate([{ $merge: { into: 'mergedst', whenMatched: 'keepExisting', whenNotMatched: 'discard' } }]).toArray();
    assert.deepEqual(await dst.find().sort({ _id: 1 }).toArray(), [{ _id: 1, v: 'a' }, { _id: 2, v: 'b' }, { _id: 3, v: 'c' }]);
    assert.equal(await codeOf(src.aggregate([{ $merge: { into: 'mergedst', whenNotMatched: 'fail' } }]).toArray()), 13113);
    assert.equal(await codeOf(src.aggregate([{ $merge: { into: 'mergedst', whenMatched: 'overwrite' } }]).toArray()), 2);

    await src.aggregate([{ $match: { _id: { $gte: 3 } } }, { $out: 'outdst' }]).toArray();
    assert.deepEqual(await db.collection('outdst').find().sort({ _id: 1 }).toArray(), [{ _id: 3, v: 'c' }, { _id: 4, v: 'd' }]);
    assert.equal(await codeOf(src.aggregate([{ $out: 'outdst' }], { readConcern: { level: 'linearizable' } }).toArray()), 72);
  });

  it('keeps unsharded collections on the primary shard and drops collections everywhere', async () => {
    const coll = db.collection<AnyDoc>('plain');
    await coll.insertMany([{ _id: 1 }, { _id: 2 }]);
    assert.deepEqual(await perShardCounts(cluster, 'app.plain'), [2, 0, 0]);
    await coll.createIndex({ x: 1 });
    assert.deepEqual((await coll.listIndexes().toArray()).map((i) => i.name), ['_id_', 'x_1']);
    assert.equal(await db.collection('hashed').drop(), true);
    assert.deepEqual(await perShardCounts(cluster, 'app.hashed'), [0, 0, 0]);
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: 'app.hashed' }), 0);
  });

  it('answers hello as a router and serves config reads for sh.status()', async () => {
    const hello = await client.db('admin').command({ hello: 1 });
    assert.equal(hello.msg, 'isdbgrid');
    const version = await client.db('config').collection('version').find().toArray();
    assert.equal(version.length, 1);
    const shards = await client.db('admin').command({ listShards: 1 });
    assert.deepEqual(shards.shards.map((s: AnyDoc) => s._id), ['shard0', 'shard1', 'shard2']);
    const dbs = await client.db('config').collection<AnyDoc>('databases').find({ _id: 'app' }).toArray();
    assert.equal(dbs[0]!.primary, 'shard0');
  });
});
