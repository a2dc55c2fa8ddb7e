import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, MongoClient, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

async function onEachShard<T>(cluster: SpawnedCluster, fn: (c: MongoClient) => Promise<T>): Promise<T[]> {
  return Promise.all(cluster.shards.map(async (s) => {
    const c = new MongoClient(s.uri);
    try {
      return await fn(c);
    } finally {
      await c.close();
    }
  }));
}

describe('cluster DDL, splits and merges through the router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    db = client.db('ddl');
    await client.db('admin').command({ enableSharding: 'ddl', primaryShard: 'shard0' });
  });

  it('splits by middle and by find, merges back, bumping minor versions and logging each step', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'ddl.s', key: { k: 1 } });
    await db.collection<AnyDoc>('s').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i })));
    await admin.command({ split: 'ddl.s', middle: { k: 50 } });
    await admin.command({ split: 'ddl.s', find: { k: 10 } });
    // The collection's chunks: config.chunks also holds config.system.sessions'.
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'ddl.s' }))!;
    const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid }).sort({ min: 1 }).toArray();
    assert.equal(chunks.length, 3);
    assert.ok(chunks.every((c) => c.lastmod.high === 1), 'splits keep the major version');
    assert.deepEqual(new Set(chunks.map((c) => c.lastmod.low)).size, 3, 'each piece has its own minor version');
    await admin.command({ mergeChunks: 'ddl.s', bounds: [chunks[0]!.min, chunks[1]!.max] });
    const merged = await client.db('config').collection<AnyDoc>('chunks').find({ uuid }).sort({ min: 1 }).toArray();
    assert.equal(merged.length, 2);
    const whats = (await client.db('config').collection<AnyDoc>('changelog').find({ ns: 'ddl.s' }).toArray()).map((e) => e.what);
    assert.ok(whats.includes('split') && whats.includes('merge'), whats.join(','));
    assert.equal(await db.collection('s').countDocuments(), 100);
  });

  // mongos takes a writeConcernError from the config server for the command's failure
  // (getEffectiveStatus): the commit may yet be rolled back by a config server failover.
  it('a split or merge whose commit the config server answers with a writeConcernError fails with it; the routing is read again', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'ddl.wce', key: { k: 1 } });
    const config = new MongoClient(cluster.config.uri);
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'ddl.wce' }))!;
    const chunks = () => client.db('config').collection<AnyDoc>('chunks').find({ uuid }).sort({ min: 1 }).toArray();
    try {
      for (const [name, command] of [['_configsvrCommitChunkSplit', { split: 'ddl.wce', middle: { k: 50 } }], ['_configsvrCommitChunksMerge', { mergeChunks: 'ddl.wce', bounds: [{ k: new MinKey() }, { k: new MaxKey() }] }]] as const) {
        await config.db('admin').command({
          configureFailPoint: 'failCommand', mode: { times: 1 },
          data: { failCommands: [name], writeConcernError: { code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out' }, failInternalCommands: true },
        });
        const refused = await admin.command(command).then(() => undefined, (err: unknown) => err as AnyDoc);
        assert.equal(refused?.code, 64, `${name}: ${JSON.stringify(refused)}`);
      }
    } finally {
      await config.db('admin').command({ configureFailPoint: 'failCommand', mode: 'off' });
      await config.close();
    }
    assert.equal((await chunks()).length, 1, 'the split and the merge were both written');
    await db.collection<AnyDoc>('wce').insertMany([{ _id: 1, k: 1 }, { _id: 2, k: 99 }]);
    assert.equal(await db.collection('wce').countDocuments(), 2);
  });

  it('refuses to shard a non-empty collection without a shard key index, and creates it on an empty one', async () => {
    const admin = client.db('admin');
    await db.collection<AnyDoc>('full').insertMany([{ _id: 1, a: 1, b: 1 }, { _id: 2, a: 2, b: 2 }]);
    const refused = await admin.command({ shardCollection: 'ddl.full', key: { a: 1, b: 1 } }).catch((e) => e);
    assert.equal(refused.code, 72);
    await db.collection('full').createIndex({ a: 1, b: 1, c: 1 });
    await admin.command({ shardCollection: 'ddl.full', key: { a: 1, b: 1 } });
    assert.equal(await db.collection('full').countDocuments({ a: 2, b: 2 }), 1);
    await admin.command({ shardCollection: 'ddl.empty', key: { a: 1, h: 'hashed' }, unique: false });
    const indexes = (await db.collection('empty').listIndexes().toArray()).map((i) => i.name);
    assert.ok(indexes.includes('a_1_h_hashed'), indexes.join(','));
    await admin.command({ shardCollection: 'ddl.presplit', key: { h: 'hashed' }, numInitialChunks: 6 });
    const coll = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'ddl.presplit' });
    assert.equal(await client.db('config').collection<AnyDoc>('chunks').countDocuments({ uuid: coll!.uuid }), 6);
    const unique = await admin.command({ shardCollection: 'ddl.uniq', key: { u: 1 }, unique: true });
    assert.equal(unique.ok, 1);
    const uniq = db.collection<AnyDoc>('uniq');
    await uniq.insertOne({ u: 1 });
    assert.equal((await uniq.insertOne({ u: 1 }).catch((e) => e)).code, 11000);
  });

  it('hides documents a shard does not own from routed reads (orphan filtering)', async () => {
    const before = await db.collection('s').countDocuments();
    const direct = new MongoClient(cluster.shards[1]!.uri);
    try {
      await direct.db('ddl').collection<AnyDoc>('s').insertOne({ _id: 'orphan', k: 5 });
    } finally {
      await direct.close();
    }
    const coll = db.collection<AnyDoc>('s');
    assert.equal(await coll.countDocuments(), before);
    assert.equal(await coll.countDocuments({ k: 5 }), 1);
    assert.equal((await coll.find({ _id: 'orphan' }).toArray()).length, 0);
    const [group] = await coll.aggregate([{ $group: { _id: null, n: { $sum: 1 } } }]).toArray();
    assert.equal(group!.n, before);
    assert.deepEqual(await coll.distinct('k', { k: 5 }), [5]);
  });

  it('creates and drops indexes on every shard that owns chunks', async () => {
    await client.db('admin').command({ shardCollection: 'ddl.h', key: { k: 'hashed' } });
    await db.collection<AnyDoc>('h').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, k: i, v: i })));
    await db.collection('h').createIndex({ v: 1 });
    const names = await onEachShard(cluster, async (c) => (await c.db('ddl').collection('h').listIndexes().toArray()).map((i) => i.name).sort());
    for (const n of names) assert.deepEqual(n, ['_id_', 'k_hashed', 'v_1']);
    await db.collection('h').dropIndex('v_1');
    const after = await onEachShard(cluster, async (c) => (await c.db('ddl').collection('h').listIndexes().toArray()).map((i) => i.name).sort());
    for (const n of after) assert.deepEqual(n, ['_id_', 'k_hashed']);
  });

  it('reports write errors at their statement index across shards', async () => {
    const coll = db.collection<AnyDoc>('h');
    const res = await coll.insertMany([{ _id: 1000, k: 1000 }, { _id: 1, k: 1 }, { _id: 1001, k: 1001 }, { _id: 2, k: 2 }], { ordered: false }).catch((e) => e);
    assert.equal(res.code, 11000);
    assert.deepEqual(res.writeErrors.map((e: AnyDoc) => e.index).sort(), [1, 3]);
    assert.equal(await coll.countDocuments({ _id: { $in: [1000, 1001] } }), 2);
  });

  it("follows MongoDB 7.0's rules for shard key changes: retryable writes only, moving the document to another shard in a transaction", async () => {
    const ranged = db.collection<AnyDoc>('s');
    const ok = await ranged.updateOne({ k: 60 }, { $set: { k: 61.5 } });
    assert.equal(ok.modifiedCount, 1);
    const moved = await ranged.findOneAndUpdate({ k: 61.5 }, { $set: { k: 61.25 } }, { returnDocument: 'after' });
    assert.equal(moved?.k, 61.25);

    // Without retryWrites the driver sends no txnNumber, and a shard key change is refused outright.
    // (The driver 7.9 rewrites any IllegalOperation on a write into its MMAPv1 retryable-writes
    // message, against MongoDB as well; the server's own answer is kept as originalError.)
    const plain = new MongoClient(cluster.routers[0]!.uri, { retryWrites: false });
    try {
      const coll = plain.db('ddl').collection<AnyDoc>('s');
      const refusedBy = (err: AnyDoc): AnyDoc => err.originalError ?? err;
      const refused = refusedBy(await coll.updateOne({ k: 61.25 }, { $set: { k: 62.5 } }).catch((e) => e));
      assert.equal(refused.code, 20);
      assert.equal(refused.codeName, 'IllegalOperation');
      assert.match(refused.message, /^Must run update to shard key field in a multi-statement transaction or with retryWrites: true\.$/);
      const many = refusedBy(await coll.updateMany({ k: { $gte: 70, $lt: 72 } }, { $inc: { k: 0.5 } }).catch((e) => e));
      assert.equal(many.code, 20);
      assert.equal(await ranged.countDocuments({ k: { $in: [61.25, 70, 71] } }), 3, 'nothing changed');
      const other = await coll.updateOne({ k: 61.25 }, { $set: { note: 'fine' } });
      assert.equal(other.modifiedCount, 1, 'an update that leaves the key alone needs no retryable write');
    } finally {
      await plain.close();
    }

    const hashed = db.collection<AnyDoc>('h');
    const owner = async (k: number): Promise<string> => (await hashed.find({ k }).explain()).queryPlanner.winningPlan.shards[0].shardName;
    const from = await owner(3);
    let to = 100_000;
    while ((await owner(to)) === from) to += 1;
    // A change to a key another shard owns moves the document there, in a transaction.
    const movedAcross = await hashed.updateOne({ k: 3 }, { $set: { k: to } });
    assert.equal(movedAcross.modifiedCount, 1);
    assert.equal(await hashed.countDocuments({ k: 3 }), 0);
    assert.deepEqual(await hashed.find({ k: to }, { projection: { _id: 1 } }).toArray(), [{ _id: 3 }]);
    assert.deepEqual((await onEachShard(cluster, (c) => c.db('ddl').collection<AnyDoc>('h').countDocuments({ _id: 3 }))).sort(), [0, 1], 'one copy, on one shard');
  });

  it('drops a database everywhere: data on the shards and its catalog entries', async () => {
    await db.dropDatabase();
    const counts = await onEachShard(cluster, async (c) => (await c.db('ddl').listCollections().toArray()).length);
    assert.deepEqual(counts, [0, 0]);
    assert.equal(await client.db('config').collection<AnyDoc>('databases').countDocuments({ _id: 'ddl' }), 0);
    assert.equal(await client.db('config').collection<AnyDoc>('collections').countDocuments({ _id: /^ddl\./ }), 0);
    await db.collection<AnyDoc>('again').insertOne({ _id: 1 });
    assert.equal(await db.collection('again').countDocuments(), 1, 'the database is created again on first write');
  });
});
