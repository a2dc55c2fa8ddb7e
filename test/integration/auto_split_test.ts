import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { chunksOf, waitFor } from '../helpers/balancer_util.js';
import { withCluster } from '../helpers/fixtures.js';

const DOCS = 2000;
const PAD = 'x'.repeat(4000); // 2000 documents of ~4 KB: ~8 MB
const BATCH = 100;

// The router's auto-splitter (seed 001 "Chunk Auto-Splitting"): with a 1 MB chunk size, a
// collection loaded through the router ends up in chunks of about 1 MB, split by the router off
// the write path; config.settings {_id: 'autosplit', enabled: false} and config.collections
// noAutoSplit turn it off. The balancer is stopped so that only the router changes the chunks.
describe('auto-splitting on the router', () => {
  let client: MongoClient;
  let admin: Db;
  let config: Db;

  withCluster({ shards: 2 }, async (f) => {
    client = f.client;
    admin = client.db('admin');
    config = client.db('config');
    await admin.command({ balancerStop: 1 });
    // Through the router, which drops its cached auto-split settings on such a write.
    await config.collection('settings').updateOne({ _id: 'chunksize' as never }, { $set: { value: 1 } }, { upsert: true });
    await admin.command({ enableSharding: 'as', primaryShard: 'shard0' });
  });

  async function shard(coll: string): Promise<void> {
    await admin.command({ shardCollection: `as.${coll}`, key: { k: 1 } });
  }

  async function load(coll: string, from = 0, count = DOCS): Promise<void> {
    const c = client.db('as').collection<AnyDoc>(coll);
    for (let i = from; i < from + count; i += BATCH) {
      await c.insertMany(Array.from({ length: BATCH }, (_, j) => ({ _id: i + j, k: i + j, pad: PAD })));
    }
  }

  async function setAutoSplit(enabled: boolean): Promise<void> {
    await config.collection('settings').updateOne({ _id: 'autosplit' as never }, { $set: { enabled } }, { upsert: true });
  }

  it('splits a growing collection into chunks of about the chunk size, losing no document', { timeout: 120_000 }, async () => {
    await shard('grow');
    await load('grow');
    const chunks = await waitFor('as.grow to be split into at least 4 chunks', async () => {
      const cs = await chunksOf(config, 'as.grow');
      return cs.length >= 4 ? cs : undefined;
    }, 60_000);
    // ~8 MB in pieces of about 1 MB: nowhere near one chunk per batch either.
    assert.ok(chunks.length <= 12, `about 8 chunks of 1 MB: ${chunks.length}`);
    assert.ok(chunks.every((c) => c.shard === 'shard0'), 'splits move nothing');
    for (let i = 1; i < chunks.length; i++) assert.deepEqual(chunks[i]!.min, chunks[i - 1]!.max, 'contiguous');
    const coll = client.db('as').collection<AnyDoc>('grow');
    assert.equal(await coll.countDocuments(), DOCS);
    const ids = (await coll.find({}, { projection: { _id: 1 } }).sort({ k: 1 }).toArray()).map((d) => d._id as number);
    assert.deepEqual(ids, Array.from({ length: DOCS }, (_, i) => i));
    // Routing works across the new chunks: an equality on the key reaches one shard and finds it.
    assert.equal((await coll.findOne({ k: 1234 }))?._id, 1234);
    const splits = await config.collection('changelog').countDocuments({ ns: 'as.grow', what: { $in: ['split', 'multi-split'] } });
    assert.ok(splits >= 1, `the config server logged the splits: ${splits}`);
  });

  it('leaves a collection with noAutoSplit in one chunk', { timeout: 120_000 }, async () => {
    await shard('flagged');
    const flagged = await config.collection('collections').updateOne({ _id: 'as.flagged' as never }, { $set: { noAutoSplit: true } });
    assert.equal(flagged.modifiedCount, 1);
    await load('flagged');
    await sleep(1500);
    assert.equal((await chunksOf(config, 'as.flagged')).length, 1);
    assert.equal(await client.db('as').collection('flagged').countDocuments(), DOCS);
  });

  it('splits nothing while autosplit is disabled, and splits again once it is enabled', { timeout: 120_000 }, async () => {
    await setAutoSplit(false);
    await shard('off');
    await load('off');
    await sleep(1500);
    assert.equal((await chunksOf(config, 'as.off')).length, 1, 'no split while disabled');
    assert.equal(await client.db('as').collection('off').countDocuments(), DOCS);

    // The same router, the same collection: only the setting changed.
    await setAutoSplit(true);
    await load('off', DOCS, 5 * BATCH);
    await waitFor('as.off to be split once autosplit is enabled', async () => (await chunksOf(config, 'as.off')).length >= 4, 60_000);
    assert.equal(await client.db('as').collection('off').countDocuments(), DOCS + 5 * BATCH);
  });
});
