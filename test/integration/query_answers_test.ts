import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BSON, MongoClient, MongoServerError, type Collection, type Db } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';

// Answers a client library's own tests found wrong (issue 35): paths through DBRef fields, a
// hinted aggregate, '$'-prefixed fields in an upsert, background in listIndexes. Each is asked of
// a node and of a router over a collection sharded on k whose chunks lie on two shards.

interface Target {
  name: string;
  start(): Promise<{ uri: string; stop(): Promise<void> }>;
  // Makes `coll` of `db` what the tests read: sharded on k, k < 50 on shard0, the rest on shard1.
  prepare(client: MongoClient, db: string, coll: string): Promise<void>;
}

const DB = 'answers';

const TARGETS: Target[] = [
  {
    name: 'a node',
    async start() {
      const node: SpawnedNode = await spawnNode();
      return { uri: node.uri, stop: async () => { await node.stop(); removeDir(node.dbpath); } };
    },
    async prepare() {},
  },
  {
    name: 'a router over two shards',
    async start() {
      const cluster: SpawnedCluster = await spawnCluster({ shards: 2 });
      const client = new MongoClient(cluster.routers[0]!.uri);
      await client.db('admin').command({ enableSharding: DB, primaryShard: 'shard1' });
      await client.close();
      return { uri: cluster.routers[0]!.uri, stop: () => cluster.stop() };
    },
    async prepare(client, db, coll) {
      const admin = client.db('admin');
      await admin.command({ shardCollection: `${db}.${coll}`, key: { k: 1 } });
      await admin.command({ split: `${db}.${coll}`, middle: { k: 50 } });
      await admin.command({ moveChunk: `${db}.${coll}`, find: { k: 0 }, to: 'shard0', _waitForDelete: true });
    },
  },
];

function ids(docs: AnyDoc[]): unknown[] {
  return docs.map((d) => d._id).sort();
}

function refusedWith(code: number, message?: RegExp) {
  return (e: unknown): boolean => e instanceof MongoServerError && e.code === code && (message === undefined || message.test(e.message));
}

for (const target of TARGETS) describe(`query answers MongoDB gives, through ${target.name}`, () => {
  let server: { uri: string; stop(): Promise<void> };
  let client: MongoClient;
  let db: Db;

  async function collection(name: string): Promise<Collection<AnyDoc>> {
    await target.prepare(client, DB, name);
    return db.collection<AnyDoc>(name);
  }

  before(async () => {
    server = await target.start();
    client = new MongoClient(server.uri);
    db = client.db(DB);
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('follows query and update paths into DBRef-shaped subdocuments and keeps them as sent', async () => {
    const c = await collection('dbrefs');
    const first = {
      _id: 1, k: 10, one: { $ref: 'foo', $id: 7 }, members: [{ $ref: 'foo', $id: 7 }],
      full: { $ref: 'foo', $id: 7, $db: 'other', note: 'x' }, reordered: { $id: 9, $ref: 'a.b' },
    };
    await c.insertMany([first, { _id: 2, k: 60, one: { $ref: 'bar', $id: 8 }, members: [] }]);
    assert.deepEqual(ids(await c.find({ 'one.$id': 7 }).toArray()), [1]);
    assert.deepEqual(ids(await c.find({ 'one.$ref': 'foo' }).toArray()), [1]);
    assert.deepEqual(ids(await c.find({ 'one.$id': { $exists: true } }).toArray()), [1, 2]);
    assert.deepEqual(ids(await c.find({ 'full.$db': 'other' }).toArray()), [1]);
    assert.deepEqual(ids(await c.aggregate([{ $match: { 'one.$id': 7 } }]).toArray()), [1]);
    assert.deepEqual(ids(await c.find({ members: { $elemMatch: { $id: 7 } } }).toArray()), [1]);
    assert.deepEqual(ids(await c.find({ one: { $ref: 'foo', $id: 7 } }).toArray()), [1]);
    const [raw] = await c.find({ _id: 1 }, { raw: true }).toArray() as unknown as Buffer[];
    assert.deepEqual(Buffer.from(raw!), Buffer.from(BSON.serialize(first)), 'stored and returned byte for byte');

    const updated = await c.updateOne({ _id: 1, k: 10 }, { $set: { 'one.$id': 8 } });
    assert.equal(updated.modifiedCount, 1);
    assert.deepEqual(ids(await c.find({ 'one.$id': 8 }).toArray()), [1, 2]);
  });

  it('uses the index an aggregate hints at, and refuses a hint naming none', async () => {
    const c = await collection('hinted');
    await c.insertMany([{ _id: 1, k: 10, s: 1 }, { _id: 2, k: 60 }, { _id: 3, k: 20, s: 3 }, { _id: 4, k: 70, s: 4 }]);
    await c.createIndex({ s: 1 }, { sparse: true });
    assert.deepEqual(ids(await c.aggregate([{ $match: {} }]).toArray()), [1, 2, 3, 4]);
    // A sparse index holds no entry for _id 2: read through it, the aggregate does not see it.
    assert.deepEqual(ids(await c.aggregate([{ $match: {} }], { hint: 's_1' }).toArray()), [1, 3, 4]);
    assert.deepEqual(ids(await c.aggregate([{ $project: { k: 1 } }], { hint: { s: 1 } }).toArray()), [1, 3, 4]);
    const explained = JSON.stringify(await c.aggregate([{ $match: {} }], { hint: 's_1', explain: true }).toArray());
    assert.match(explained, /"stage":"IXSCAN","keyPattern":\{"s":1\}/, 'explain shows the hinted index');
    await assert.rejects(c.aggregate([{ $match: {} }], { hint: 'nope' }).toArray(), refusedWith(2, /hint provided does not correspond to an existing index/));
    await assert.rejects(c.aggregate([], { hint: { t: 1 } }).toArray(), refusedWith(2, /hint provided does not correspond to an existing index/));
  });

  it("inserts an upsert's '$'-prefixed fields as an insert would, and refuses them in an update of a stored document", async () => {
    const c = await collection('dollars');
    const inserted = await c.updateOne({ _id: 5, k: 5 }, { $set: { $myKey: 1 } }, { upsert: true });
    assert.equal(inserted.upsertedId, 5);
    assert.deepEqual(await c.findOne({ _id: 5 }), { _id: 5, k: 5, $myKey: 1 });
    await c.updateOne({ name: 'n' }, { $set: { $other: 2, k: 70 } }, { upsert: true });
    assert.deepEqual(await c.findOne({ name: 'n' }, { projection: { _id: 0 } }), { name: 'n', $other: 2, k: 70 });
    // A replacement that inserts is checked as an insert too (the driver's replaceOne would
    // refuse to send it).
    const replacedNew = await db.command({ update: 'dollars', updates: [{ q: { _id: 6, k: 6 }, u: { k: 6, $myKey: 1 }, upsert: true }] });
    assert.deepEqual(replacedNew.upserted, [{ index: 0, _id: 6 }]);
    assert.deepEqual(await c.findOne({ _id: 6 }), { _id: 6, k: 6, $myKey: 1 });

    const again = await db.command({ update: 'dollars', updates: [{ q: { _id: 5, k: 5 }, u: { $set: { $myKey: 2 } }, upsert: true }] });
    assert.equal(again.writeErrors?.[0]?.code, 52);
    const replaced = await db.command({ update: 'dollars', updates: [{ q: { _id: 6, k: 6 }, u: { k: 6, $myKey: 2 }, upsert: true }] });
    assert.equal(replaced.writeErrors?.[0]?.code, 52);
    assert.deepEqual((await c.find({ _id: { $in: [5, 6] } }).toArray()).map((d) => d.$myKey), [1, 1]);
  });

  it('lists an index with the background option it was given', async () => {
    const c = await collection('withOptions');
    await c.createIndex({ a: 1 }, { background: false });
    await c.createIndex({ b: 1 }, { background: true });
    const specs = Object.fromEntries((await c.listIndexes().toArray()).map((s) => [s.name, s]));
    assert.equal(specs.a_1?.background, false);
    assert.equal(specs.b_1?.background, true);
  });
});
