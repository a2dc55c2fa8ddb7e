import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Long, MaxKey, MinKey, MongoClient, ObjectId, type Document } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');
const run = promisify(execFile);

// Zone commands through the router (MongoDB's addShardToZone, removeShardFromZone and
// updateZoneKeyRange), what they leave in config.shards and config.tags, and shardCollection
// laying out its initial chunks along zone ranges. The balancer is stopped so that the chunks
// stay where shardCollection put them.
describe('zones through the router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  const admin = (cmd: Document) => client.db('admin').command(cmd);
  const failure = (cmd: Document) => admin(cmd).then(() => assert.fail(`expected ${JSON.stringify(cmd)} to fail`), (e: AnyDoc) => e);
  const tags = (ns: string) => client.db('config').collection<AnyDoc>('tags').find({ ns }).sort({ min: 1 }).toArray();
  const shardTags = async (id: string) => ((await client.db('config').collection<AnyDoc>('shards').findOne({ _id: id }))?.tags ?? []) as string[];
  const chunksOf = async (ns: string) => {
    const coll = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns });
    return client.db('config').collection<AnyDoc>('chunks').find({ uuid: coll!.uuid }).sort({ min: 1 }).toArray();
  };

  withCluster({ shards: 3 }, async (f) => {
    ({ cluster, client } = f);
    await admin({ balancerStop: 1 }).catch(() => undefined);
    await admin({ enableSharding: 'zn', primaryShard: 'shard0' });
  });

  it('addShardToZone adds the zone to config.shards tags once, and refuses an unknown shard (ShardNotFound)', async () => {
    assert.equal((await admin({ addShardToZone: 'shard1', zone: 'EU' })).ok, 1);
    assert.equal((await admin({ addShardToZone: 'shard1', zone: 'EU' })).ok, 1);
    assert.equal((await admin({ addshardtozone: 'shard2', zone: 'EU' })).ok, 1);
    await admin({ addShardToZone: 'shard2', zone: 'US' });
    assert.deepEqual(await shardTags('shard1'), ['EU']);
    assert.deepEqual(await shardTags('shard2'), ['EU', 'US']);
    assert.deepEqual(await shardTags('shard0'), []);
    const unknown = await failure({ addShardToZone: 'nowhere', zone: 'EU' });
    assert.equal(unknown.code, 70);
    assert.equal(unknown.codeName, 'ShardNotFound');
    assert.equal((await failure({ addShardToZone: 'shard1' })).code, 40414);
  });

  it('updateZoneKeyRange writes config.tags, is idempotent, and checks zones, bounds and overlaps', async () => {
    assert.equal((await admin({ updateZoneKeyRange: 'zn.users', min: { k: 0 }, max: { k: 100 }, zone: 'EU' })).ok, 1);
    await admin({ updateZoneKeyRange: 'zn.users', min: { k: 0 }, max: { k: 100 }, zone: 'EU' });
    await admin({ updateZoneKeyRange: 'zn.users', min: { k: 200 }, max: { k: 300 }, zone: 'US' });
    const stored = await tags('zn.users');
    assert.equal(stored.length, 2);
    assert.ok(stored[0]._id instanceof ObjectId);
    assert.deepEqual(stored.map(({ _id, ...rest }) => rest), [
      { ns: 'zn.users', min: { k: 0 }, max: { k: 100 }, tag: 'EU' },
      { ns: 'zn.users', min: { k: 200 }, max: { k: 300 }, tag: 'US' },
    ]);
    const noZone = await failure({ updateZoneKeyRange: 'zn.users', min: { k: 500 }, max: { k: 600 }, zone: 'ASIA' });
    assert.equal(noZone.code, 177);
    assert.equal(noZone.codeName, 'ZoneNotFound');
    const overlap = await failure({ updateZoneKeyRange: 'zn.users', min: { k: 50 }, max: { k: 150 }, zone: 'EU' });
    assert.equal(overlap.code, 178);
    assert.equal(overlap.codeName, 'RangeOverlapConflict');
    assert.equal((await failure({ updateZoneKeyRange: 'zn.users', min: { k: 0 }, max: { k: 100 }, zone: 'US' })).code, 178);
    assert.equal((await failure({ updateZoneKeyRange: 'zn.users', min: { k: 5 }, max: { k: 5 }, zone: 'EU' })).code, 2);
    assert.equal((await failure({ updateZoneKeyRange: 'zn.users', min: { j: 0 }, max: { k: 5 }, zone: 'EU' })).code, 61);
    assert.equal((await failure({ updateZoneKeyRange: 'zn.users', min: { k: 0 }, max: { k: 5 }, zone: 5 })).code, 14);
    assert.equal((await failure({ updateZoneKeyRange: 'zn.users', min: { k: 0 }, max: { k: 5 } })).code, 40414);
    assert.equal((await failure({ updateZoneKeyRange: 'nodot', min: { k: 0 }, max: { k: 5 }, zone: 'EU' })).code, 73);
    assert.equal((await tags('zn.users')).length, 2);
  });

  it('zone: null removes exactly that range; removing a range that is not there is ok', async () => {
    await admin({ updateZoneKeyRange: 'zn.gone', min: { k: 0 }, max: { k: 10 }, zone: 'EU' });
    assert.equal((await admin({ updateZoneKeyRange: 'zn.gone', min: { k: 0 }, max: { k: 5 }, zone: null })).ok, 1);
    assert.equal((await tags('zn.gone')).length, 1);
    assert.equal((await admin({ updateZoneKeyRange: 'zn.gone', min: { k: 0 }, max: { k: 10 }, zone: null })).ok, 1);
    assert.deepEqual(await tags('zn.gone'), []);
    assert.equal((await admin({ updateZoneKeyRange: 'zn.gone', min: { k: 0 }, max: { k: 10 }, zone: null })).ok, 1);
  });

  it('removeShardFromZone keeps a zone on its last shard while a range uses it (ZoneStillInUse)', async () => {
    // US is only on shard2, and zn.users has a US range.
    const inUse = await failure({ removeShardFromZone: 'shard2', zone: 'US' });
    assert.equal(inUse.code, 163);
    assert.equal(inUse.codeName, 'ZoneStillInUse');
    assert.equal((await failure({ removeShardFromZone: 'nowhere', zone: 'US' })).code, 70);
    // EU is on shard1 and shard2, so one of them may leave it; a zone the shard lacks is fine.
    assert.equal((await admin({ removeShardFromZone: 'shard1', zone: 'EU' })).ok, 1);
    assert.equal((await admin({ removeshardfromzone: 'shard0', zone: 'EU' })).ok, 1);
    assert.deepEqual(await shardTags('shard1'), []);
    await admin({ addShardToZone: 'shard1', zone: 'EU' });
    // Once the range is gone, the last shard of a zone can leave it.
    await admin({ addShardToZone: 'shard0', zone: 'TMP' });
    await admin({ updateZoneKeyRange: 'zn.tmp', min: { k: 0 }, max: { k: 1 }, zone: 'TMP' });
    assert.equal((await failure({ removeShardFromZone: 'shard0', zone: 'TMP' })).code, 163);
    await admin({ updateZoneKeyRange: 'zn.tmp', min: { k: 0 }, max: { k: 1 }, zone: null });
    await admin({ removeShardFromZone: 'shard0', zone: 'TMP' });
    assert.deepEqual(await shardTags('shard0'), []);
  });

  it('shardCollection of an empty collection lays out chunks along the zone ranges, on the zone shards', async () => {
    // zn.users: EU [0, 100) on shard1/shard2, US [200, 300) on shard2; primary shard0.
    const reply = await admin({ shardCollection: 'zn.users', key: { k: 1 } });
    assert.equal(reply.ok, 1);
    const chunks = await chunksOf('zn.users');
    const bound = (v: unknown) => (v instanceof MinKey ? 'MinKey' : v instanceof MaxKey ? 'MaxKey' : String(v));
    assert.deepEqual(chunks.map((c) => `[${bound(c.min.k)}, ${bound(c.max.k)}) ${c.shard}`), [
      '[MinKey, 0) shard0', '[0, 100) shard1', '[100, 200) shard1', '[200, 300) shard2', '[300, MaxKey) shard2',
    ]);
    assert.deepEqual(chunks.map((c) => c.lastmod.i), [0, 1, 2, 3, 4]);
    // The documents go where the chunks say.
    const users = client.db('zn').collection<AnyDoc>('users');
    await users.insertMany([{ _id: 1, k: -5 }, { _id: 2, k: 50 }, { _id: 3, k: 250 }, { _id: 4, k: 1000 }]);
    assert.deepEqual((await users.find({}).sort({ k: 1 }).toArray()).map((d) => d.k), [-5, 50, 250, 1000]);
    const onShard1 = new MongoClient(`mongodb://127.0.0.1:${cluster.shards[1]!.port}/?directConnection=true`);
    try {
      assert.deepEqual((await onShard1.db('zn').collection<AnyDoc>('users').find({}).toArray()).map((d) => d.k), [50]);
    } finally {
      await onShard1.close();
    }
  });

  it('a range of a sharded collection must be a shard key prefix and is stored with the full key', async () => {
    await admin({ shardCollection: 'zn.orders', key: { region: 1, id: 1 } });
    await admin({ updateZoneKeyRange: 'zn.orders', min: { region: 'eu' }, max: { region: 'ev' }, zone: 'EU' });
    const [range] = await tags('zn.orders');
    assert.deepEqual(range.min, { region: 'eu', id: new MinKey() });
    assert.deepEqual(range.max, { region: 'ev', id: new MinKey() });
    const notPrefix = await failure({ updateZoneKeyRange: 'zn.orders', min: { id: 0 }, max: { id: 5 }, zone: 'EU' });
    assert.equal(notPrefix.code, 61);
    assert.equal(notPrefix.codeName, 'ShardKeyNotFound');
    // The prefix form removes the stored full-key range.
    await admin({ updateZoneKeyRange: 'zn.orders', min: { region: 'eu' }, max: { region: 'ev' }, zone: null });
    assert.deepEqual(await tags('zn.orders'), []);
  });

  it('shardCollection refuses a key that does not match the zone ranges (InvalidOptions)', async () => {
    await admin({ updateZoneKeyRange: 'zn.mismatch', min: { a: 0 }, max: { a: 10 }, zone: 'EU' });
    const err = await failure({ shardCollection: 'zn.mismatch', key: { b: 1 } });
    assert.equal(err.code, 72);
    assert.equal(await client.db('config').collection('collections').countDocuments({ _id: 'zn.mismatch' as AnyDoc }), 0);
  });

  it('a non-empty collection with zones starts as one chunk on the primary shard', async () => {
    await client.db('zn').collection<AnyDoc>('full').insertOne({ _id: 1, k: 1 });
    await admin({ updateZoneKeyRange: 'zn.full', min: { k: 0 }, max: { k: 10 }, zone: 'EU' });
    await client.db('zn').collection('full').createIndex({ k: 1 });
    await admin({ shardCollection: 'zn.full', key: { k: 1 } });
    const chunks = await chunksOf('zn.full');
    assert.deepEqual(chunks.map((c) => c.shard), ['shard0']);
  });

  it('presplitHashedZones splits a whole-range zone of a hashed key over the zone shards', async () => {
    await admin({ updateZoneKeyRange: 'zn.hashed', min: { h: new MinKey() }, max: { h: new MaxKey() }, zone: 'EU' });
    await admin({ shardCollection: 'zn.hashed', key: { h: 'hashed' }, presplitHashedZones: true });
    const chunks = await chunksOf('zn.hashed');
    assert.deepEqual(chunks.map((c) => c.shard), ['shard1', 'shard1', 'shard2', 'shard2']);
    assert.ok(chunks[1]!.min.h instanceof Long);
    assert.equal((await failure({ shardCollection: 'zn.hashed2', key: { h: 'hashed' }, presplitHashedZones: true })).code, 31387);
  });

  it('dropping a collection removes its zone ranges, sharded or not', async () => {
    await client.db('zn').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    await admin({ updateZoneKeyRange: 'zn.plain', min: { k: 0 }, max: { k: 10 }, zone: 'EU' });
    await client.db('zn').collection('plain').drop();
    assert.deepEqual(await tags('zn.plain'), []);
    assert.equal((await tags('zn.users')).length, 2);
    await client.db('zn').collection('users').drop();
    assert.deepEqual(await tags('zn.users'), []);
  });

  it("mongosh's sh.addShardToZone, sh.updateZoneKeyRange, sh.removeRangeFromZone and sh.removeShardFromZone", { timeout: 120_000 }, async () => {
    const mongosh = async (script: string): Promise<string> => {
      const args = [`mongodb://127.0.0.1:${cluster.routers[0]!.port}/test`, '--quiet', '--norc', '--eval', script];
      const { stdout } = await run(MONGOSH, args, { timeout: 60_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
      return stdout.trim();
    };
    const added = await mongosh("sh.addShardToZone('shard0', 'SH'); sh.updateZoneKeyRange('zn.sh', {k: 0}, {k: 5}, 'SH')");
    assert.match(added, /ok: 1/);
    assert.deepEqual(await shardTags('shard0'), ['SH']);
    assert.deepEqual((await tags('zn.sh')).map((t) => [t.tag, t.min, t.max]), [['SH', { k: 0 }, { k: 5 }]]);
    const removed = await mongosh("sh.removeRangeFromZone('zn.sh', {k: 0}, {k: 5}); sh.removeShardFromZone('shard0', 'SH')");
    assert.match(removed, /ok: 1/);
    assert.deepEqual(await tags('zn.sh'), []);
    assert.deepEqual(await shardTags('shard0'), []);
  });
});
