import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const N = 2000;

describe('moveChunk moves the documents of a chunk to another shard', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  const direct: MongoClient[] = [];

  withCluster({ shards: 2 }, async (f) => {
    ({ cluster, client } = f);
    for (const s of cluster.shards) direct.push(f.connect(`mongodb://127.0.0.1:${s.port}/?directConnection=true`));
    await client.db('admin').command({ enableSharding: 'mb', primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: 'mb.c', key: { k: 1 } });
    await client.db('admin').command({ split: 'mb.c', middle: { k: 1000 } });
    await client.db('mb').collection<AnyDoc>('c').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: i, pad: `v${i}` })));
  });

  it('moves [MinKey, 1000) to shard1 and deletes it from shard0', async () => {
    const reply = await client.db('admin').command({ moveChunk: 'mb.c', find: { k: 1 }, to: 'shard1', _waitForDelete: true });
    assert.equal(reply.ok, 1);
    const onShard = await Promise.all(direct.map((d) => d.db('mb').collection('c').countDocuments({})));
    assert.deepEqual(onShard, [1000, 1000]);
    assert.equal(await direct[1]!.db('mb').collection('c').countDocuments({ k: { $lt: 1000 } }), 1000);
    assert.equal(await direct[0]!.db('mb').collection('c').countDocuments({ k: { $gte: 1000 } }), 1000);

    const coll = client.db('mb').collection<AnyDoc>('c');
    assert.equal(await coll.countDocuments({}), N);
    const docs = await coll.find({}).sort({ _id: 1 }).toArray();
    assert.deepEqual(docs, Array.from({ length: N }, (_, i) => ({ _id: i, k: i, pad: `v${i}` })));

    // The collection's chunks: config.chunks also holds config.system.sessions'.
    const { uuid } = (await client.db('config').collection<AnyDoc>('collections').findOne({ _id: 'mb.c' }))!;
    const chunks = await client.db('config').collection<AnyDoc>('chunks').find({ uuid }).sort({ min: 1 }).toArray();
    assert.deepEqual(chunks.map((c) => c.shard), ['shard1', 'shard0']);
    const majors = chunks.map((c) => c.lastmod.high);
    assert.ok(majors.every((m) => m > 1), `both chunks took a new major version: ${majors}`);
    const remaining = await direct[0]!.db('config').collection('rangeDeletions').countDocuments({});
    const coordinators = await direct[0]!.db('config').collection('migrationCoordinators').countDocuments({});
    assert.deepEqual([remaining, coordinators], [0, 0]);
    assert.equal(await direct[1]!.db('config').collection('rangeDeletions').countDocuments({}), 0);
  });

  it('keeps writes made during the migration (moving the chunk back)', async () => {
    const coll = client.db('mb').collection<AnyDoc>('c');
    let stop = false;
    let next = 0;
    const writer = (async () => {
      while (!stop) {
        const i = next++;
        await coll.insertOne({ _id: `w${i}`, k: i % 1000 });
        await coll.updateOne({ _id: i % 1000 }, { $set: { pad: `u${i}` } });
      }
    })();
    await client.db('admin').command({ moveChunk: 'mb.c', find: { k: 1 }, to: 'shard0', _waitForDelete: true });
    stop = true;
    await writer;
    assert.equal(await coll.countDocuments({}), N + next);
    assert.equal(await direct[1]!.db('mb').collection('c').countDocuments({}), 0);
    assert.equal(await direct[0]!.db('mb').collection('c').countDocuments({}), N + next);
    const last = (next - 1) % 1000;
    assert.equal((await coll.findOne({ _id: last }))?.pad, `u${next - 1}`);
  });
});
