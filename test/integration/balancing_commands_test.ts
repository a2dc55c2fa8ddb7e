import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, MongoClient, type Db } from 'mongodb';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

// The sizes and cut points a shard gives the balancer: dataSize, autoSplitVector and
// _shardsvrGetStatsForBalancing, on one node.
describe('balancing commands on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;
  let db: Db;
  const pad = 'p'.repeat(1000);

  withNode({ role: 'shard' }, async (f) => {
    node = f.node;
    client = f.connect(`mongodb://127.0.0.1:${node.port}/?directConnection=true`);
    db = client.db('b');
    await db.collection<AnyDoc>('c').createIndex({ k: 1 });
    // 100 documents with keys 0..99, then 50 more with the single key 200.
    await db.collection<AnyDoc>('c').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i, pad })));
    await db.collection<AnyDoc>('c').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: 1000 + i, k: 200, pad })));
  });

  it('dataSize measures a shard-key range and the whole collection', async () => {
    const all = await db.admin().command({ dataSize: 'b.c' });
    assert.equal(all.numObjects, 150);
    const some = await db.admin().command({ dataSize: 'b.c', keyPattern: { k: 1 }, min: { k: 10 }, max: { k: 20 } });
    assert.equal(some.numObjects, 10);
    assert.ok(some.size > 10_000 && some.size < 11_000, `10 documents of ~1 KB: ${some.size}`);
    assert.ok(Math.abs(all.size - 15 * some.size) < 200);
  });

  it('autoSplitVector cuts ranges of about maxChunkSizeBytes and never separates one key', async () => {
    const docBytes = (await db.admin().command({ dataSize: 'b.c', keyPattern: { k: 1 }, min: { k: 0 }, max: { k: 1 } })).size as number;
    const reply = await db.command({ autoSplitVector: 'c', keyPattern: { k: 1 }, min: { k: new MinKey() }, max: { k: new MaxKey() }, maxChunkSizeBytes: docBytes * 30 });
    const keys = (reply.splitKeys as AnyDoc[]).map((k) => k.k);
    assert.deepEqual(keys, [30, 60, 90], 'the last piece is keys 90..99 and the 50 documents of key 200');
    assert.equal(reply.continuation, false);
    const limited = await db.command({ autoSplitVector: 'c', keyPattern: { k: 1 }, min: { k: new MinKey() }, max: { k: new MaxKey() }, maxChunkSizeBytes: docBytes * 30, limit: 1 });
    assert.deepEqual((limited.splitKeys as AnyDoc[]).map((k) => k.k), [30]);
    assert.equal(limited.continuation, true);
    const single = await db.command({ autoSplitVector: 'c', keyPattern: { k: 1 }, min: { k: 200 }, max: { k: new MaxKey() }, maxChunkSizeBytes: docBytes * 5 });
    assert.deepEqual(single.splitKeys, [], 'one key cannot be cut');
    await assert.rejects(db.command({ autoSplitVector: 'c', keyPattern: { k: 1 }, min: { k: 0 }, max: { k: 1 } }), { codeName: 'InvalidOptions' });
    await assert.rejects(db.command({ autoSplitVector: 'c', keyPattern: { z: 1 }, min: { z: 0 }, max: { z: 1 }, maxChunkSizeBytes: 10 }), { codeName: 'IndexNotFound' });
  });

  it('_shardsvrGetStatsForBalancing reports each collection\'s size', async () => {
    const reply = await db.admin().command({ _shardsvrGetStatsForBalancing: 1, collections: [{ ns: 'b.c' }, { ns: 'b.none' }] });
    const all = await db.admin().command({ dataSize: 'b.c' });
    assert.deepEqual(reply.stats, [{ namespace: 'b.c', collSize: all.size }, { namespace: 'b.none', collSize: 0 }]);
  });
});
