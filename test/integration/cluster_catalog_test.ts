import os from 'node:os';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, MongoClient, ObjectId, Timestamp, type Db } from 'mongodb';
import { waitFor } from '../helpers/balancer_util.js';
import { splitRefusals } from '../../src/catalog_decisions/split_point_finder_cases.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

async function onShard<T>(shard: SpawnedNode, fn: (c: MongoClient) => Promise<T>): Promise<T> {
  const c = new MongoClient(shard.uri);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const collectionNames = (c: MongoClient, db: string): Promise<string[]> =>
  c.db(db).listCollections({}, { nameOnly: true }).map((i) => i.name).toArray();

// The indexes MongoDB 7.0's config server builds (ShardingCatalogManager::_initConfigIndexes);
// every other config collection has only _id_.
const CONFIG_INDEXES: Record<string, string[]> = {
  chunks: ['_id_', 'uuid_1_lastmod_1 unique', 'uuid_1_min_1 unique', 'uuid_1_shard_1_min_1 unique', 'uuid_1_shard_1_onCurrentShardSince_1'],
  shards: ['_id_', 'host_1 unique'],
  tags: ['_id_', 'ns_1_min_1 unique', 'ns_1_tag_1'],
  collections: ['_id_'],
  databases: ['_id_'],
  settings: ['_id_'],
  mongos: ['_id_'],
  changelog: ['_id_'],
  actionlog: ['_id_'],
  locks: ['_id_'],
  version: ['_id_'],
};

describe('the config server catalog through the router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let config: Db;

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    config = client.db('config');
    await client.db('admin').command({ enableSharding: 'cat', primaryShard: 'shard0' });
  });

  const clusterId = async (): Promise<ObjectId> => {
    const versions = await config.collection<AnyDoc>('version').find({}).toArray();
    assert.equal(versions.length, 1);
    assert.ok(versions[0].clusterId instanceof ObjectId, `clusterId ${versions[0].clusterId}`);
    return versions[0].clusterId as ObjectId;
  };

  const chunksOf = async (ns: string): Promise<AnyDoc[]> => {
    const coll = await config.collection<AnyDoc>('collections').findOne({ _id: ns });
    return config.collection<AnyDoc>('chunks').find({ uuid: coll!.uuid }).sort({ min: 1 }).toArray();
  };

  it('builds the config collections with MongoDB\'s indexes', async () => {
    for (const [coll, expected] of Object.entries(CONFIG_INDEXES)) {
      const indexes = await config.collection(coll).listIndexes().toArray();
      const found = indexes.map((i) => `${i.name}${i.unique === true ? ' unique' : ''}`).sort();
      assert.deepEqual(found, expected, `config.${coll}`);
    }
    const byName = new Map((await config.collection('chunks').listIndexes().toArray()).map((i) => [i.name, i.key]));
    assert.deepEqual(byName.get('uuid_1_shard_1_min_1'), { uuid: 1, shard: 1, min: 1 });
    assert.deepEqual(byName.get('uuid_1_shard_1_onCurrentShardSince_1'), { uuid: 1, shard: 1, onCurrentShardSince: 1 });
    const dup = await config.collection<AnyDoc>('shards').insertOne({ _id: 'dup', host: `127.0.0.1:${cluster.shards[0]!.port}` }).catch((e) => e);
    assert.equal(dup.code, 11000, 'host_1 is unique');
  });

  it('caps config.changelog and config.actionlog as MongoDB does, and refuses to shard a capped collection', async () => {
    const logs = await config.listCollections({ name: { $in: ['changelog', 'actionlog'] } }).toArray();
    const options = Object.fromEntries(logs.map((c) => [c.name, (c as AnyDoc).options]));
    assert.deepEqual(options, { actionlog: { capped: true, size: 20 * 1024 * 1024 }, changelog: { capped: true, size: 200 * 1024 * 1024 } });
    await client.db('capped').createCollection('c', { capped: true, size: 4096 });
    const refused = await client.db('admin').command({ shardCollection: 'capped.c', key: { _id: 1 } }).catch((e) => e);
    assert.equal(refused.code, 72);
    assert.equal(refused.message, "can't shard a capped collection");
    assert.equal(await config.collection<AnyDoc>('collections').countDocuments({ _id: 'capped.c' }), 0);
  });

  it('gives each added shard its identity document with the cluster id', async () => {
    const id = await clusterId();
    for (const [i, shard] of cluster.shards.entries()) {
      const identity = await onShard(shard, (c) => c.db('admin').collection<AnyDoc>('system.version').findOne({ _id: 'shardIdentity' }));
      assert.ok(identity, `shard${i} has no shardIdentity`);
      assert.equal(identity.shardName, `shard${i}`);
      assert.ok(identity.clusterId instanceof ObjectId && identity.clusterId.equals(id), `clusterId ${identity.clusterId}`);
      assert.equal(identity.configsvrConnectionString, `127.0.0.1:${cluster.config.port}`);
    }
  });

  it('registers the router in config.mongos', async () => {
    const docs = await config.collection<AnyDoc>('mongos').find({}).toArray();
    assert.equal(docs.length, 1);
    const [doc] = docs;
    // mongos's own name for itself, as its serverStatus `host` gives it.
    assert.equal(doc._id, `${os.hostname()}:${cluster.routers[0]!.port}`);
    assert.equal(doc._id, (await client.db('admin').command({ serverStatus: 1 })).host);
    assert.ok(doc.ping instanceof Date && doc.ping.getTime() <= Date.now(), `ping ${doc.ping}`);
    assert.equal(typeof doc.up, 'number');
    assert.ok(doc.up >= 0);
    assert.match(doc.mongoVersion, /^7\./);
    assert.deepEqual(doc.advisoryHostFQDNs, []);
  });

  it('drops an unsharded collection and a database of unsharded collections from the primary shard', async () => {
    const cat = client.db('cat');
    await cat.collection<AnyDoc>('plain').insertMany([{ _id: 1 }, { _id: 2 }]);
    await cat.collection<AnyDoc>('kept').insertOne({ _id: 1 });
    const primary = cluster.shards[0]!;
    assert.equal(await onShard(primary, (c) => c.db('cat').collection('plain').countDocuments()), 2);
    await cat.collection('plain').drop();
    assert.deepEqual(await onShard(primary, (c) => collectionNames(c, 'cat')), ['kept']);
    assert.equal(await cat.collection('plain').countDocuments(), 0);

    const gone = client.db('gone');
    await gone.collection<AnyDoc>('a').insertOne({ _id: 1 });
    await gone.collection<AnyDoc>('b').insertOne({ _id: 1 });
    const entry = await config.collection<AnyDoc>('databases').findOne({ _id: 'gone' });
    const owner = cluster.shards[Number(String(entry!.primary).replace('shard', ''))]!;
    assert.deepEqual((await onShard(owner, (c) => collectionNames(c, 'gone'))).sort(), ['a', 'b']);
    await gone.dropDatabase();
    assert.equal(await config.collection<AnyDoc>('databases').countDocuments({ _id: 'gone' }), 0);
    assert.deepEqual(await onShard(owner, (c) => collectionNames(c, 'gone')), []);
    const dbs = await onShard(owner, (c) => c.db('admin').admin().listDatabases({ nameOnly: true }));
    assert.ok(!dbs.databases.some((d) => d.name === 'gone'), dbs.databases.map((d) => d.name).join(','));
  });

  it('drops a sharded collection\'s chunks and collection entry from the catalog', async () => {
    await client.db('admin').command({ shardCollection: 'cat.sharded', key: { k: 1 } });
    await client.db('admin').command({ split: 'cat.sharded', middle: { k: 0 } });
    await client.db('admin').command({ moveChunk: 'cat.sharded', find: { k: 0 }, to: 'shard1' });
    await client.db('cat').collection<AnyDoc>('sharded').insertMany([{ k: -1 }, { k: 1 }]);
    const { uuid } = (await config.collection<AnyDoc>('collections').findOne({ _id: 'cat.sharded' }))!;
    assert.equal(await config.collection('chunks').countDocuments({ uuid }), 2);
    await client.db('cat').collection('sharded').drop();
    assert.equal(await config.collection('chunks').countDocuments({ uuid }), 0);
    assert.equal(await config.collection<AnyDoc>('collections').countDocuments({ _id: 'cat.sharded' }), 0);
    for (const shard of cluster.shards) {
      assert.ok(!(await onShard(shard, (c) => collectionNames(c, 'cat'))).includes('sharded'));
    }
  });

  it('splits the chunk with the given bounds, or holding the found key, at its median', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'cat.sp', key: { k: 1 } });
    await client.db('cat').collection<AnyDoc>('sp').insertMany(Array.from({ length: 100 }, (_, k) => ({ k })));
    await admin.command({ split: 'cat.sp', middle: { k: 50 } });
    const before = await chunksOf('cat.sp');
    assert.equal(before.length, 2);
    const top = Math.max(...before.map((c) => c.lastmod.low as number));

    // Bounds that are not exactly one chunk's are refused, as mongos refuses them, and split nothing.
    await assert.rejects(admin.command({ split: 'cat.sp', bounds: [{ k: 50 }, { k: 75 }] }), /no chunk found with the shard key bounds/);
    await assert.rejects(admin.command({ split: 'cat.sp', bounds: [{ k: 50 }] }), /upper bound not specified/);
    await assert.rejects(admin.command({ split: 'cat.sp', find: { k: { $gte: 5 } } }), /no shard key found in chunk query/);
    assert.deepEqual(await chunksOf('cat.sp'), before);

    await admin.command({ split: 'cat.sp', bounds: [{ k: 50 }, { k: new MaxKey() }] });
    const afterBounds = await chunksOf('cat.sp');
    assert.equal(afterBounds.length, 3);
    assert.deepEqual(afterBounds[0], before[0], 'the other chunk is untouched');
    const [left, right] = afterBounds.slice(1);
    const middle = left.max.k as number;
    assert.ok(middle > 50 && middle < 100, `split at ${middle}`);
    assert.deepEqual([left.min, left.max, right.min], [{ k: 50 }, { k: middle }, { k: middle }]);
    assert.ok(right.max.k instanceof MaxKey);
    assert.deepEqual([left.lastmod.high, right.lastmod.high], [before[1].lastmod.high, before[1].lastmod.high]);
    assert.deepEqual([left.lastmod.low, right.lastmod.low], [top + 1, top + 2]);
    const log = await config.collection<AnyDoc>('changelog').findOne({ what: 'split', ns: 'cat.sp', 'details.before.min': { k: 50 } });
    assert.ok(log, 'no changelog entry for the split by bounds');
    assert.ok(log.time instanceof Date);
    assert.deepEqual([log.details.left.min, log.details.left.max, log.details.right.min], [{ k: 50 }, { k: middle }, { k: middle }]);
    assert.equal(log.details.owningShard, before[1].shard);

    await admin.command({ split: 'cat.sp', find: { k: 10 } });
    const afterFind = await chunksOf('cat.sp');
    assert.equal(afterFind.length, 4);
    assert.ok(afterFind[0].min.k instanceof MinKey);
    const cut = afterFind[0].max.k as number;
    assert.ok(cut > 0 && cut < 50 && afterFind[1].min.k === cut && afterFind[1].max.k === 50, `split at ${cut}`);
    assert.deepEqual([afterFind[0].lastmod.low, afterFind[1].lastmod.low], [top + 3, top + 4]);
    assert.equal(await client.db('cat').collection('sp').countDocuments(), 100);
  });

  it('refuses split as mongos does, with the pure module\'s cases', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'cat.refusals', key: { a: 1 } });
    await admin.command({ split: 'cat.refusals', middle: { a: 0 } });
    const before = await chunksOf('cat.refusals');
    for (const refusal of splitRefusals('cat.refusals')) {
      await assert.rejects(admin.command(refusal.cmd), (err: AnyDoc) => err.code === refusal.code && refusal.message.test(err.message), refusal.name);
    }
    assert.deepEqual(await chunksOf('cat.refusals'), before, 'nothing was split');
  });

  it('answers getShardVersion from the router\'s cache, and isdbgrid, hostInfo and getCmdLineOpts as mongos and mongod do', async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'cat.versioned', key: { k: 1 } });
    await admin.command({ split: 'cat.versioned', middle: { k: 0 } });
    await admin.command({ moveChunk: 'cat.versioned', find: { k: 0 }, to: 'shard1' });
    await client.db('cat').collection<AnyDoc>('versioned').insertMany([{ k: -1 }, { k: 1 }]);
    const entry = await config.collection<AnyDoc>('collections').findOne({ _id: 'cat.versioned' });
    const chunks = await chunksOf('cat.versioned');
    const newest = chunks.map((c) => c.lastmod as Timestamp).sort((a, b) => a.compare(b)).at(-1)!;
    const coll = await admin.command({ getShardVersion: 'cat.versioned', fullMetadata: true }, { promoteLongs: false });
    assert.ok(coll.version.equals(newest), `version ${coll.version} against the newest chunk's ${newest}`);
    assert.ok(coll.versionEpoch.equals(entry!.lastmodEpoch));
    assert.ok(coll.versionTimestamp.equals(entry!.timestamp));
    assert.deepEqual(coll.chunks, chunks.map((c) => [c.min, c.max]));
    const db = await admin.command({ getShardVersion: 'cat' });
    const dbEntry = await config.collection<AnyDoc>('databases').findOne({ _id: 'cat' });
    assert.equal(db.primaryShard, 'shard0');
    assert.deepEqual(db.version, dbEntry!.version);
    await client.db('cat').collection<AnyDoc>('plain').insertOne({ a: 1 });
    const unsharded = await admin.command({ getShardVersion: 'cat.plain' }).catch((e) => e);
    assert.equal(unsharded.code, 118);
    assert.equal(unsharded.message, 'Collection cat.plain is not sharded.');
    // validate runs on every shard holding the collection.
    const validated = await client.db('cat').command({ validate: 'versioned' });
    assert.equal(validated.valid, true);
    assert.deepEqual(Object.keys(validated.raw).sort(), ['shard0', 'shard1']);
    assert.deepEqual([validated.raw.shard0.nrecords, validated.raw.shard1.nrecords], [1, 1]);
    const sized = await client.db('cat').command({ dataSize: 'cat.versioned' });
    assert.equal(sized.numObjects, 2, 'summed over both shards');
    assert.ok(sized.size > 0);
    assert.equal((await client.db('cat').command({ getShardVersion: 'cat.versioned' }).catch((e) => e)).code, 13);
    assert.equal((await admin.command({ getShardVersion: 1 }).catch((e) => e)).code, 2);

    const grid = await admin.command({ isdbgrid: 1 });
    assert.equal(grid.isdbgrid, 1);
    assert.equal(grid.hostname, os.hostname());
    assert.equal((await admin.command({ hostInfo: 1 })).system.hostname, os.hostname());
    const routerOpts = await admin.command({ getCmdLineOpts: 1 });
    assert.equal(routerOpts.argv[1], 'router');
    assert.deepEqual(routerOpts.parsed.sharding, { configDB: `127.0.0.1:${cluster.config.port}` });
    const shardOpts = await onShard(cluster.shards[1]!, (c) => c.db('admin').command({ getCmdLineOpts: 1 }));
    assert.equal(shardOpts.parsed.storage.dbPath, cluster.shards[1]!.dbpath);
    assert.deepEqual([shardOpts.parsed.sharding.clusterRole, shardOpts.parsed.net.port], ['shardsvr', cluster.shards[1]!.port]);
  });

  it('renames an unsharded collection on its primary shard, and refuses a rename into a database that does not exist', async () => {
    const admin = client.db('admin');
    const cat = client.db('cat');
    await cat.collection<AnyDoc>('before').insertMany([{ _id: 1 }, { _id: 2 }]);
    await cat.collection<AnyDoc>('taken').insertOne({ _id: 'old' });
    const exists = await admin.command({ renameCollection: 'cat.before', to: 'cat.taken' }).catch((e) => e);
    assert.equal(exists.code, 48);
    await admin.command({ renameCollection: 'cat.before', to: 'cat.taken', dropTarget: true });
    assert.deepEqual(await cat.collection<AnyDoc>('taken').find().sort({ _id: 1 }).toArray(), [{ _id: 1 }, { _id: 2 }]);
    const onPrimary = await onShard(cluster.shards[0]!, (c) => c.db('cat').listCollections({ name: { $in: ['before', 'taken'] } }, { nameOnly: true }).toArray());
    assert.deepEqual(onPrimary.map((c) => c.name), ['taken']);
    await cat.renameCollection('taken', 'after');
    assert.equal(await cat.collection('after').countDocuments(), 2);

    // Sharded sources and targets, and into another database: ddl_coordinators_test.
    const otherDb = await admin.command({ renameCollection: 'cat.after', to: 'other.after' }).catch((e) => e);
    assert.equal(otherDb.code, 26);
    assert.equal(await cat.collection('after').countDocuments(), 2, 'nothing was renamed');
    assert.equal((await cat.command({ renameCollection: 'cat.after', to: 'cat.x' }).catch((e) => e)).code, 13);
  });

  it('keeps config.version\'s cluster id across a config server restart', async () => {
    const id = await clusterId();
    await cluster.config.stop();
    cluster.config = await restartNode(cluster.config, { role: 'config' });
    const direct = await onShard(cluster.config, (c) => c.db('config').collection<AnyDoc>('version').find({}).toArray());
    assert.equal(direct.length, 1);
    assert.ok(direct[0].clusterId.equals(id), `${direct[0].clusterId} after restart, ${id} before`);
  });

  // Last in the file, so most of the router's 10 s ping interval has passed already.
  it('has the router ping config.mongos again while it runs', async () => {
    const mongos = config.collection<AnyDoc>('mongos');
    const [first] = await mongos.find({}).toArray();
    // Twice MongoDB's interval, so a router that pings less often fails here.
    const next = await waitFor('the router to ping config.mongos again', async () => {
      const [now] = await mongos.find({}).toArray();
      return now.ping > first.ping ? now : undefined;
    }, 20_000);
    assert.ok(next.up >= first.up);
  });
});
