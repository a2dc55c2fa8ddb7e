import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Long, MongoClient, MongoServerError, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');

// checkMetadataConsistency through a router, with inconsistencies made by writing to a shard or
// to the config server's config.* directly, as MongoDB's check_metadata_consistency.js makes them.
describe('checkMetadataConsistency through a router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let shard0: MongoClient;
  let shard1: MongoClient;
  let config: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    shard0 = f.connect(cluster.shards[0]!.uri);
    shard1 = f.connect(cluster.shards[1]!.uri);
    config = f.connect(cluster.config.uri);
    await client.db('admin').command({ balancerStop: 1 });
  });

  async function check(db: Db, target: number | string = 1, options: AnyDoc = {}): Promise<AnyDoc[]> {
    const reply = await db.command({ checkMetadataConsistency: target, ...options });
    const docs = [...(reply.cursor.firstBatch as AnyDoc[])];
    // A small cursor id comes back a number, which getMore would send as a double.
    let id = Long.fromValue(reply.cursor.id);
    const collection = String(reply.cursor.ns).slice(db.databaseName.length + 1);
    while (!id.isZero()) {
      const more = await db.command({ getMore: id, collection });
      docs.push(...(more.cursor.nextBatch as AnyDoc[]));
      id = Long.fromValue(more.cursor.id);
    }
    return docs;
  }

  async function localInfo(node: MongoClient, db: string, name: string): Promise<AnyDoc> {
    const [entry] = (await node.db(db).command({ listCollections: 1, filter: { name } })).cursor.firstBatch as AnyDoc[];
    return entry!.info as AnyDoc;
  }

  async function shardedWithChunksOnBoth(dbName: string): Promise<void> {
    const admin = client.db('admin');
    await admin.command({ enableSharding: dbName, primaryShard: 'shard0' });
    await admin.command({ shardCollection: `${dbName}.c`, key: { k: 1 } });
    await client.db(dbName).collection('c').insertMany(Array.from({ length: 20 }, (_, k) => ({ k })));
    await admin.command({ split: `${dbName}.c`, middle: { k: 10 } });
    await admin.command({ moveChunk: `${dbName}.c`, find: { k: 15 }, to: 'shard1' });
  }

  it('a healthy cluster after shardCollection, a split and a moveChunk reports nothing at any level', async () => {
    await shardedWithChunksOnBoth('healthy');
    await client.db('healthy').collection('plain').insertOne({ a: 1 });
    assert.deepEqual(await check(client.db('admin')), []);
    assert.deepEqual(await check(client.db('healthy')), []);
    assert.deepEqual(await check(client.db('healthy'), 'c'), []);
    assert.deepEqual(await check(client.db('healthy'), 'plain'), []);
  });

  it('a hashed collection presplit over both shards is consistent: each shard creates it with the catalog\'s UUID', async () => {
    await client.db('admin').command({ enableSharding: 'hashed', primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: 'hashed.c', key: { k: 'hashed' } });
    const owners = await client.db('config').collection<AnyDoc>('chunks').distinct('shard', { uuid: (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'hashed.c' }))!.uuid });
    assert.deepEqual(owners.sort(), ['shard0', 'shard1']);
    assert.deepEqual(await check(client.db('hashed')), []);
    assert.deepEqual(await check(client.db('admin')), []);
  });

  it('answers a cluster cursor of its batch size, the rest through getMore', async () => {
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'cursor', primaryShard: 'shard0' });
    for (const name of ['a', 'b', 'c']) await shard1.db('cursor').collection<AnyDoc>(name).insertOne({ _id: 1 });
    const reply = await client.db('cursor').command({ checkMetadataConsistency: 1, cursor: { batchSize: 1 } });
    assert.equal(reply.cursor.firstBatch.length, 1);
    assert.notEqual(Number(reply.cursor.id), 0);
    assert.ok(String(reply.cursor.ns).startsWith('cursor.$cmd.'));
    const all = await check(client.db('cursor'));
    assert.deepEqual(all.map((i) => i.details.namespace), ['cursor.a', 'cursor.b', 'cursor.c']);
    await client.db('cursor').dropDatabase();
    for (const name of ['a', 'b', 'c']) await shard1.db('cursor').collection(name).drop();
  });

  it('mongosh\'s db.checkMetadataConsistency() and db.coll.checkMetadataConsistency() read the cursor at each level', async () => {
    await client.db('admin').command({ enableSharding: 'shell', primaryShard: 'shard0' });
    await shard1.db('shell').collection<AnyDoc>('stray').insertOne({ _id: 1 });
    const types = async (expression: string): Promise<string> => {
      const { stdout } = await promisify(execFile)(MONGOSH, [cluster.routers[0]!.uri, '--quiet', '--norc', '--eval', `JSON.stringify(${expression}.toArray().map((d) => [d.type, d.details.namespace]))`], {
        timeout: 90_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' },
      });
      return stdout.trim();
    };
    const expected = '[["MisplacedCollection","shell.stray"]]';
    assert.equal(await types("db.getSiblingDB('shell').checkMetadataConsistency()"), expected);
    assert.equal(await types("db.getSiblingDB('shell').stray.checkMetadataConsistency()"), expected);
    assert.equal(await types("db.getSiblingDB('shell').other.checkMetadataConsistency()"), '[]');
    assert.equal(await types("db.getSiblingDB('admin').checkMetadataConsistency()"), expected);
    await shard1.db('shell').collection('stray').drop();
  });

  it('refuses an option it does not know as MongoDB 7.0\'s parser does', async () => {
    const err = await client.db('admin').command({ checkMetadataConsistency: 1, bogus: 1 }).catch((e: unknown) => e);
    assert.ok(err instanceof MongoServerError);
    assert.equal(err.code, 40415);
    assert.equal(err.message, "BSON field 'checkMetadataConsistency.bogus' is an unknown field.");
  });

  it('an unsharded collection on a shard other than the primary is a MisplacedCollection at every level', async () => {
    await client.db('admin').command({ enableSharding: 'misplaced', primaryShard: 'shard0' });
    await client.db('misplaced').collection('home').insertOne({ a: 1 });
    await shard1.db('misplaced').collection<AnyDoc>('stray').insertOne({ _id: 'foo' });
    const { uuid } = await localInfo(shard1, 'misplaced', 'stray');
    const expected = {
      type: 'MisplacedCollection', description: 'Unsharded collection found on shard different from database primary shard',
      details: { namespace: 'misplaced.stray', shard: 'shard1', localUUID: uuid },
    };
    assert.deepEqual(await check(client.db('misplaced')), [expected]);
    assert.deepEqual(await check(client.db('misplaced'), 'stray'), [expected]);
    assert.deepEqual(await check(client.db('misplaced'), 'home'), []);
    assert.deepEqual(await check(client.db('admin')), [expected]);
    await shard1.db('misplaced').collection('stray').drop();
    assert.deepEqual(await check(client.db('misplaced')), []);
  });

  it('a collection sharded while a shard had its own of the same name is a CollectionUUIDMismatch', async () => {
    await client.db('admin').command({ enableSharding: 'uuids', primaryShard: 'shard0' });
    await shard1.db('uuids').collection<AnyDoc>('c').insertOne({ _id: 'foo' });
    await client.db('admin').command({ shardCollection: 'uuids.c', key: { _id: 1 } });
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'uuids.c' }))!;
    const localUUID = (await localInfo(shard1, 'uuids', 'c')).uuid;
    const expected = {
      type: 'CollectionUUIDMismatch', description: 'Found collection on non primary shard with mismatching UUID',
      details: { namespace: 'uuids.c', shard: 'shard1', localUUID, uuid },
    };
    assert.deepEqual(await check(client.db('uuids')), [expected]);
    assert.deepEqual(await check(client.db('uuids'), 'c'), [expected]);
    assert.deepEqual(await check(client.db('admin')), [expected]);
    await shard1.db('uuids').collection('c').drop();
    assert.deepEqual(await check(client.db('uuids')), []);
  });

  it('a shard key index dropped on a shard that owns chunks is a MissingShardKeyIndex', async () => {
    await shardedWithChunksOnBoth('noindex');
    await shard1.db('noindex').collection('c').dropIndex('k_1');
    assert.deepEqual(await check(client.db('noindex'), 'c'), [{
      type: 'MissingShardKeyIndex', description: 'Found sharded collection without a shard key index',
      details: { namespace: 'noindex.c', shard: 'shard1', shardKey: { k: 1 } },
    }]);
    assert.deepEqual((await check(client.db('admin'))).map((i) => i.type), ['MissingShardKeyIndex']);
    await shard1.db('noindex').collection('c').createIndex({ k: 1 });
    assert.deepEqual(await check(client.db('noindex')), []);
  });

  it('a chunk removed from config.chunks leaves a RoutingTableRangeGap, and one widened an overlap', async () => {
    await shardedWithChunksOnBoth('gaps');
    await client.db('admin').command({ split: 'gaps.c', middle: { k: 5 } });
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'gaps.c' }))!;
    const chunks = config.db('config').collection<AnyDoc>('chunks');
    const [first, middle, last] = await chunks.find({ uuid }).sort({ min: 1 }).toArray();
    await chunks.deleteOne({ _id: middle!._id });
    const gap = await check(client.db('gaps'), 'c');
    assert.deepEqual(gap.map((i) => i.type), ['RoutingTableRangeGap']);
    assert.equal(gap[0]!.description, 'Found a gap between two consecutive chunks');
    assert.deepEqual(gap[0]!.details, { namespace: 'gaps.c', collectionUUID: uuid, chunkA: first, chunkB: last });
    assert.deepEqual((await check(client.db('admin'))).map((i) => i.type), ['RoutingTableRangeGap']);

    await chunks.updateOne({ _id: first!._id }, { $set: { max: { k: 12 } } });
    const overlap = await check(client.db('gaps'));
    assert.deepEqual(overlap.map((i) => i.type), ['RoutingTableRangeOverlap']);
    assert.deepEqual(overlap[0]!.details, { namespace: 'gaps.c', collectionUUID: uuid, chunkA: { ...first, max: { k: 12 } }, chunkB: last });
    await chunks.updateOne({ _id: first!._id }, { $set: { max: first!.max } });
    await chunks.insertOne(middle!);
    assert.deepEqual(await check(client.db('gaps')), []);
  });

  it('a routing table that stops short of MaxKey, or of chunks altogether, is reported as such', async () => {
    await shardedWithChunksOnBoth('ends');
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'ends.c' }))!;
    const chunks = config.db('config').collection<AnyDoc>('chunks');
    const all = await chunks.find({ uuid }).sort({ min: 1 }).toArray();
    await chunks.deleteOne({ _id: all[1]!._id });
    assert.deepEqual(await check(client.db('ends'), 'c'), [{
      type: 'RoutingTableMissingMaxKey', description: 'Routing table has a gap because last chunk boundary does not reach MaxKey',
      details: { namespace: 'ends.c', collectionUUID: uuid, maxKeyObj: { k: 10 }, globalMax: all[1]!.max },
    }]);
    await chunks.deleteOne({ _id: all[0]!._id });
    assert.deepEqual((await check(client.db('ends'), 'c')).map((i) => i.type), ['MissingRoutingTable']);
    await chunks.insertMany(all);
    assert.deepEqual(await check(client.db('ends')), []);
  });

  it('checkIndexes reports an index missing on one shard that owns chunks, and one whose options differ, as InconsistentIndex', async () => {
    await shardedWithChunksOnBoth('indexes');
    const description = 'Found an index of a sharded collection that is inconsistent between different shards';
    await client.db('indexes').collection('c').createIndex({ a: 1 }, { name: 'index1' });
    assert.deepEqual(await check(client.db('indexes'), 1, { checkIndexes: true }), []);
    await shard1.db('indexes').collection('c').dropIndex('index1');
    const missing = {
      type: 'InconsistentIndex', description,
      details: { namespace: 'indexes.c', info: { missingFromShards: ['shard1'], inconsistentProperties: [], indexName: 'index1' } },
    };
    assert.deepEqual(await check(client.db('indexes'), 1, { checkIndexes: true }), [missing]);
    assert.deepEqual(await check(client.db('indexes'), 'c', { checkIndexes: 1 }), [missing]);
    assert.deepEqual(await check(client.db('admin'), 1, { checkIndexes: true }), [missing]);
    // Only when asked, as in MongoDB.
    assert.deepEqual(await check(client.db('indexes')), []);

    await shard0.db('indexes').collection('c').dropIndex('index1');
    await shard0.db('indexes').collection('c').createIndex({ a: 1 }, { name: 'index1', sparse: true, expireAfterSeconds: 3600 });
    await shard1.db('indexes').collection('c').createIndex({ a: 1 }, { name: 'index1', sparse: true });
    assert.deepEqual(await check(client.db('indexes'), 1, { checkIndexes: true }), [{
      type: 'InconsistentIndex', description,
      details: { namespace: 'indexes.c', info: { missingFromShards: [], inconsistentProperties: [{ k: 'expireAfterSeconds', v: 3600 }], indexName: 'index1' } },
    }]);
    await shard0.db('indexes').collection('c').dropIndex('index1');
    await shard1.db('indexes').collection('c').dropIndex('index1');
    assert.deepEqual(await check(client.db('indexes'), 1, { checkIndexes: true }), []);
  });

  it('checkIndexes leaves out a shard that owns no chunks, as $indexStats does', async () => {
    await client.db('admin').command({ enableSharding: 'oneowner', primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: 'oneowner.c', key: { k: 1 } });
    await shard1.db('oneowner').collection('c').createIndex({ k: 1 });
    await shard1.db('oneowner').collection('c').createIndex({ b: 1 });
    const found = await check(client.db('oneowner'), 1, { checkIndexes: true });
    assert.ok(!found.some((i) => i.type === 'InconsistentIndex'), JSON.stringify(found));
    await shard1.db('oneowner').dropDatabase();
  });

  it('zone ranges written into config.tags that overlap, or bound by another key, are ZonesRangeOverlap and CorruptedZoneShardKey', async () => {
    await shardedWithChunksOnBoth('zones');
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'zones.c' }))!;
    const tags = config.db('config').collection<AnyDoc>('tags');
    const a = { ns: 'zones.c', tag: 'a', min: { k: -100 }, max: { k: 100 } };
    const b = { ns: 'zones.c', tag: 'b', min: { k: 50 }, max: { k: 150 } };
    await tags.insertMany([{ _id: { ns: 'zones.c', min: a.min }, ...a }, { _id: { ns: 'zones.c', min: b.min }, ...b }]);
    const overlap = {
      type: 'ZonesRangeOverlap', description: 'Found two overlapping zones',
      details: { namespace: 'zones.c', collectionUUID: uuid, zoneA: a, zoneB: b },
    };
    assert.deepEqual(await check(client.db('zones')), [overlap]);
    assert.deepEqual(await check(client.db('zones'), 'c'), [overlap]);
    assert.deepEqual(await check(client.db('admin')), [overlap]);

    await tags.deleteOne({ 'min.k': 50 });
    const corrupted = { ns: 'zones.c', tag: 'b', min: { k: 100 }, max: { x: 150 } };
    await tags.insertOne({ _id: { ns: 'zones.c', min: corrupted.min }, ...corrupted });
    assert.deepEqual(await check(client.db('zones')), [{
      type: 'CorruptedZoneShardKey', description: 'Found zone with a shard key pattern violation',
      details: { namespace: 'zones.c', collectionUUID: uuid, zone: corrupted, shardKeyPattern: { k: 1 } },
    }]);
    await tags.deleteMany({ ns: 'zones.c' });
    assert.deepEqual(await check(client.db('zones')), []);
  });

  it('a sharded collection whose config.databases entry is gone is hidden, and only the cluster level sees it', async () => {
    await shardedWithChunksOnBoth('hidden');
    const databases = config.db('config').collection<AnyDoc>('databases');
    const entry = (await databases.findOne({ _id: 'hidden' }))!;
    const collection = (await config.db('config').collection<AnyDoc>('collections').findOne({ _id: 'hidden.c' }))!;
    await databases.deleteOne({ _id: 'hidden' });
    assert.deepEqual(await check(client.db('admin')), [{
      type: 'HiddenShardedCollection', description: 'Found sharded collection but relative database does not exist',
      details: { namespace: 'hidden.c', collection },
    }]);
    await databases.insertOne(entry);
    assert.deepEqual(await check(client.db('admin')), []);
  });
});
