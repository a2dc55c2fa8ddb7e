import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

const codeOf = (p: Promise<unknown>): Promise<number> => p.then(() => 0, (err: { code: number }) => err.code);

// 30 documents {_id: i, k: i, g: i % 3, tags: [...]}; the view keeps k >= 10 and hides `tags`.
async function seed(db: Db): Promise<void> {
  await db.collection<AnyDoc>('people').insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: i, k: i, g: i % 3, tags: [`t${i % 2}`, 'all'] })));
  await db.createCollection('adults', { viewOn: 'people', pipeline: [{ $match: { k: { $gte: 10 } } }, { $project: { tags: 0 } }] });
}

// What a client sees of a view, the same against a node and through a router.
async function checkReads(db: Db): Promise<void> {
  const view = db.collection<AnyDoc>('adults');
  const all = await view.find({}, { batchSize: 4 }).sort({ k: 1 }).toArray();
  assert.deepEqual(all.map((d) => d.k), Array.from({ length: 20 }, (_, i) => i + 10), 'a find reads through the view, across getMores');
  assert.ok(all.every((d) => d.tags === undefined), "the view's projection applies");
  assert.deepEqual(await view.find({ g: 1 }, { projection: { _id: 0, k: 1 } }).sort({ k: -1 }).skip(1).limit(2).toArray(), [{ k: 25 }, { k: 22 }]);
  assert.equal(await view.countDocuments({ g: 0 }), 6);
  assert.equal(await view.estimatedDocumentCount(), 20);
  assert.deepEqual((await view.distinct('g')).sort(), [0, 1, 2]);
  assert.deepEqual(await view.aggregate([{ $group: { _id: null, n: { $sum: 1 }, s: { $sum: '$k' } } }]).toArray(), [{ _id: null, n: 20, s: 390 }]);

  const joined = await db.collection<AnyDoc>('people').aggregate([
    { $match: { k: { $in: [5, 12] } } },
    { $lookup: { from: 'adults', localField: 'k', foreignField: 'k', as: 'adult' } },
    { $project: { k: 1, n: { $size: '$adult' } } },
    { $sort: { k: 1 } },
  ]).toArray();
  assert.deepEqual(joined, [{ _id: 5, k: 5, n: 0 }, { _id: 12, k: 12, n: 1 }], '$lookup reads a view through its pipeline');

  await db.createCollection('adultsInGroup2', { viewOn: 'adults', pipeline: [{ $match: { g: 2 } }] });
  assert.deepEqual((await db.collection<AnyDoc>('adultsInGroup2').find().sort({ k: 1 }).toArray()).map((d) => d.k), [11, 14, 17, 20, 23, 26, 29], 'a view on a view');
}

async function checkCatalogAndRefusals(db: Db): Promise<void> {
  const listed = await db.listCollections({ type: 'view' }, { nameOnly: false }).toArray() as AnyDoc[];
  assert.deepEqual(listed.map((c) => c.name).sort(), ['adults', 'adultsInGroup2']);
  const adults = listed.find((c) => c.name === 'adults')!;
  assert.deepEqual(adults.options, { viewOn: 'people', pipeline: [{ $match: { k: { $gte: 10 } } }, { $project: { tags: 0 } }] });
  assert.deepEqual(adults.info, { readOnly: true });

  const view = db.collection<AnyDoc>('adults');
  assert.equal(await codeOf(view.insertOne({ _id: 100 })), 166, 'CommandNotSupportedOnView');
  assert.equal(await codeOf(view.updateOne({ k: 10 }, { $set: { x: 1 } })), 166);
  assert.equal(await codeOf(view.deleteMany({})), 166);
  assert.equal(await codeOf(view.createIndex({ k: 1 })), 166);
  assert.equal(await codeOf(db.createCollection('adults', { viewOn: 'people' })), 48, 'NamespaceExists');
  assert.equal(await codeOf(db.createCollection('people', { viewOn: 'adults' })), 48);
  await db.createCollection('loopA', { viewOn: 'loopB' });
  assert.equal(await codeOf(db.createCollection('loopB', { viewOn: 'loopA' })), 5, 'GraphContainsCycle');
  assert.equal(await codeOf(db.createCollection('bad', { viewOn: 'people', pipeline: [{ $out: 'x' }] })), 167, 'OptionNotSupportedOnView');

  assert.equal(await db.collection('adultsInGroup2').drop(), true);
  assert.deepEqual((await db.listCollections({ type: 'view' }).toArray()).map((c) => c.name).sort(), ['adults', 'loopA']);
  assert.equal(await db.collection<AnyDoc>('people').countDocuments(), 30, 'dropping a view leaves its collection alone');
}

describe('views on a node', () => {
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    client = f.client;
    db = client.db('views');
    await seed(db);
  });

  it('reads a view as its pipeline over the collection: find, count, distinct, aggregate', () => checkReads(db));
  it('lists views, refuses writes and indexes on them, and drops them', () => checkCatalogAndRefusals(db));
});

describe('views through a router, over a sharded collection', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'views', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'views.people', key: { k: 1 } });
    await admin.command({ split: 'views.people', middle: { k: 15 } });
    await admin.command({ moveChunk: 'views.people', find: { k: 15 }, to: 'shard1', _waitForDelete: true });
    db = client.db('views');
    await seed(db);
  });

  it('reads every shard through the view: the router runs the resolved view as an aggregation', async () => {
    const onShard1 = new MongoClient(cluster.shards[1]!.uri);
    try {
      assert.equal(await onShard1.db('views').collection('people').countDocuments(), 15, 'half the collection is on the shard without the view');
    } finally {
      await onShard1.close();
    }
    await checkReads(db);
  });

  it('lists views, refuses writes and indexes on them, and drops them', () => checkCatalogAndRefusals(db));
});
