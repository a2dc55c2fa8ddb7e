import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { spawnSetCluster, type SetCluster } from '../helpers/spawn_set_cluster.js';

// Issue 34's moveCollection and unshardCollection (MongoDB 8.0) through routers over two shards
// that are (one-member) sets, as reshard_collection_test sets them up: both are reshardings to
// {_id: 1} whose collection ends tracked unsplittable, its one chunk on the destination.
describe('moveCollection and unshardCollection', () => {
  let cluster: SetCluster;
  let client: MongoClient;
  let second: MongoClient;
  let shardIds: string[];
  withProcesses(async (p) => {
    cluster = await spawnSetCluster(p, { shards: 2, members: 1, configMembers: 1, routers: 2, args: ['--enableTestCommands'] });
    client = p.connect(cluster.routers[0]!.uri);
    second = p.connect(cluster.routers[1]!.uri);
    shardIds = ((await client.db('admin').command({ listShards: 1 })).shards as AnyDoc[]).map((s) => String(s._id));
    await client.db('admin').command({ enableSharding: 'mv', primaryShard: shardIds[0] });
  });

  const admin = () => client.db('admin');
  const config = () => client.db('config');

  // A shard's own copy of mv.<coll>, read directly: its documents' _ids, none if it has none.
  async function idsOnShard(i: number, coll: string): Promise<unknown[]> {
    const c = new MongoClient(`mongodb://${cluster.shards[i]!.hosts[0]}/?directConnection=true`);
    try {
      return (await c.db('mv').collection<AnyDoc>(coll).find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
    } finally {
      await c.close();
    }
  }

  async function collectionsOnShard(i: number): Promise<string[]> {
    const c = new MongoClient(`mongodb://${cluster.shards[i]!.hosts[0]}/?directConnection=true`);
    try {
      return (await c.db('mv').listCollections({}, { nameOnly: true }).toArray()).map((d) => d.name);
    } finally {
      await c.close();
    }
  }

  // config.collections' entry and its chunks: what a refused command must leave as it was.
  async function catalogOf(ns: string): Promise<{ entry: AnyDoc | null; chunks: AnyDoc[] }> {
    const entry = await config().collection<AnyDoc>('collections').findOne({ _id: ns });
    const chunks = entry === null ? [] : await config().collection<AnyDoc>('chunks').find({ uuid: entry.uuid }, { projection: { lastmod: 0 } }).sort({ min: 1 }).toArray();
    return { entry, chunks };
  }

  async function assertConsistent(): Promise<void> {
    const reply = await admin().command({ checkMetadataConsistency: 1 });
    const found = (reply.cursor as AnyDoc).firstBatch as AnyDoc[];
    assert.deepEqual(found.map((i) => `${i.type}: ${JSON.stringify(i.details)}`), []);
  }

  async function refused(cmd: AnyDoc, codeName: string): Promise<void> {
    await assert.rejects(admin().command(cmd), (e: unknown) => e instanceof MongoServerError && e.codeName === codeName, `${JSON.stringify(cmd)} answers ${codeName}`);
  }

  it('moves an unsharded collection to another shard while a client writes; a second router finds it there', { timeout: 60_000 }, async (t) => {
    const docs = client.db('mv').collection<AnyDoc>('moved');
    await docs.insertMany(Array.from({ length: 300 }, (_, i) => ({ _id: i, v: 0 })));
    await docs.createIndex({ v: 1 });
    assert.equal((await catalogOf('mv.moved')).entry, null, 'untracked before the move');
    // The second router routes it as untracked, to the primary, until the move tells it otherwise.
    const viaSecond = second.db('mv').collection<AnyDoc>('moved');
    assert.equal(await viaSecond.countDocuments({}), 300);
    const expected = new Map<number, number>(Array.from({ length: 300 }, (_, i) => [i, 0]));
    let stop = false;
    let during = 0;
    let moving = false;
    const writer = (async () => {
      for (let n = 300; !stop; n++) {
        if (n % 2 === 0) {
          await docs.insertOne({ _id: n, v: 0 });
          expected.set(n, 0);
        } else {
          const id = n % 300;
          await docs.updateOne({ _id: id }, { $inc: { v: 1 } });
          expected.set(id, expected.get(id)! + 1);
        }
        if (moving) during++;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    moving = true;
    const started = performance.now();
    assert.deepEqual(ownFields(await admin().command({ moveCollection: 'mv.moved', toShard: shardIds[1] })), { ok: 1 });
    const tookMs = performance.now() - started;
    moving = false;
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop = true;
    await writer;
    t.diagnostic(`moveCollection took ${Math.round(tookMs)} ms; ${during} writes acknowledged during it, ${expected.size} documents`);
    assert.ok(during > 0, 'the client wrote during the move');

    const { entry, chunks } = await catalogOf('mv.moved');
    assert.equal(entry?.unsplittable, true);
    assert.deepEqual(entry?.key, { _id: 1 });
    assert.deepEqual(chunks.map((c) => c.shard), [shardIds[1]]);
    const onDestination = await idsOnShard(1, 'moved');
    assert.equal(onDestination.length, expected.size, 'every acknowledged insert once on the destination');
    assert.deepEqual(new Set(onDestination), new Set(expected.keys()));
    assert.deepEqual(await idsOnShard(0, 'moved'), [], 'nothing left on the source');
    // Through the second router, which cached it untracked: the values written, and a write.
    const found = new Map((await viaSecond.find({}).toArray()).map((d) => [d._id as number, d.v as number]));
    assert.deepEqual(found, expected);
    await viaSecond.insertOne({ _id: -1, v: 0 });
    assert.ok((await idsOnShard(1, 'moved')).includes(-1), 'a write through the second router lands on the destination');
    assert.equal(await docs.countDocuments({}), expected.size + 1);
    assert.deepEqual((await docs.indexes()).map((i) => i.name).sort(), ['_id_', 'v_1']);
    const stats = await client.db('mv').command({ collStats: 'moved' });
    assert.equal(stats.sharded, false, 'an unsplittable collection is not sharded');
    // Creating it again, or an index of it, happens on its shard alone: no copy on the primary.
    await assert.rejects(client.db('mv').createCollection('moved', { capped: true, size: 1 << 20 }), (e: unknown) => e instanceof MongoServerError && e.codeName === 'NamespaceExists');
    await docs.createIndex({ w: 1 });
    assert.deepEqual((await docs.indexes()).map((i) => i.name).sort(), ['_id_', 'v_1', 'w_1']);
    assert.ok(!(await collectionsOnShard(0)).includes('moved'), 'no copy on the primary');
    for (const router of [client, second]) {
      assert.deepEqual((await router.db('mv').listCollections({ name: 'moved' }).toArray()).map((c) => c.name), ['moved'], 'listed once, from its shard');
    }
    await assertConsistent();
  });

  it('unshards a sharded collection onto one shard', { timeout: 60_000 }, async () => {
    const ns = 'mv.spread';
    await admin().command({ shardCollection: ns, key: { x: 1 } });
    const docs = client.db('mv').collection<AnyDoc>('spread');
    await docs.insertMany(Array.from({ length: 400 }, (_, i) => ({ _id: i, x: i })));
    await admin().command({ split: ns, middle: { x: 200 } });
    await admin().command({ moveChunk: ns, find: { x: 300 }, to: shardIds[1] });
    assert.deepEqual((await catalogOf(ns)).chunks.map((c) => c.shard), [shardIds[0], shardIds[1]]);

    assert.deepEqual(ownFields(await admin().command({ unshardCollection: ns, toShard: shardIds[1] })), { ok: 1 });
    const { entry, chunks } = await catalogOf(ns);
    assert.equal(entry?.unsplittable, true);
    assert.deepEqual(entry?.key, { _id: 1 });
    assert.deepEqual(chunks.map((c) => c.shard), [shardIds[1]]);
    assert.equal((await idsOnShard(1, 'spread')).length, 400);
    assert.deepEqual(await idsOnShard(0, 'spread'), []);
    assert.equal(await docs.countDocuments({}), 400);
    assert.equal(await second.db('mv').collection('spread').countDocuments({ x: { $gte: 100 } }), 300);
    await assertConsistent();

    // Without toShard: the shard holding the least data takes it.
    await admin().command({ shardCollection: 'mv.few', key: { x: 1 } });
    await client.db('mv').collection<AnyDoc>('few').insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, x: i })));
    await admin().command({ split: 'mv.few', middle: { x: 10 } });
    await admin().command({ moveChunk: 'mv.few', find: { x: 15 }, to: shardIds[1] });
    await admin().command({ unshardCollection: 'mv.few' });
    const few = await catalogOf('mv.few');
    assert.equal(few.entry?.unsplittable, true);
    assert.equal(few.chunks.length, 1);
    const holder = shardIds.indexOf(String(few.chunks[0]!.shard));
    assert.deepEqual([(await idsOnShard(holder, 'few')).length, (await idsOnShard(1 - holder, 'few')).length], [20, 0]);
    await assertConsistent();
  });

  it('refuses bad input with MongoDB\'s errors and changes nothing', { timeout: 60_000 }, async () => {
    await admin().command({ shardCollection: 'mv.sharded', key: { a: 1 } });
    await client.db('mv').collection<AnyDoc>('sharded').insertOne({ _id: 1, a: 1 });
    await client.db('mv').collection<AnyDoc>('plain').insertOne({ _id: 1 });
    const before = await Promise.all(['mv.sharded', 'mv.plain', 'mv.missing', 'mv.moved'].map(catalogOf));

    await refused({ moveCollection: 'mv.sharded', toShard: shardIds[1] }, 'NamespaceNotFound');
    await refused({ moveCollection: 'mv.missing', toShard: shardIds[1] }, 'NamespaceNotFound');
    await refused({ moveCollection: 'nodb.c', toShard: shardIds[1] }, 'NamespaceNotFound');
    await refused({ moveCollection: 'mv.plain', toShard: 'noSuchShard' }, 'ShardNotFound');
    await refused({ moveCollection: 'mv.plain' }, 'IDLFailedToParse');
    await refused({ moveCollection: 'config.system.sessions', toShard: shardIds[1] }, 'IllegalOperation');
    await refused({ moveCollection: 'admin.system.version', toShard: shardIds[1] }, 'IllegalOperation');
    await refused({ moveCollection: 'mv.system.views', toShard: shardIds[1] }, 'IllegalOperation');
    await refused({ unshardCollection: 'mv.plain', toShard: shardIds[1] }, 'NamespaceNotFound');
    await refused({ unshardCollection: 'mv.moved', toShard: shardIds[0] }, 'NamespaceNotSharded');
    // An unsplittable collection is not split nor migrated.
    await refused({ split: 'mv.moved', middle: { _id: 100 } }, 'NamespaceNotSharded');
    await refused({ moveChunk: 'mv.moved', find: { _id: 1 }, to: shardIds[0] }, 'NamespaceNotSharded');
    await refused({ balancerCollectionStatus: 'mv.moved' }, 'NamespaceNotSharded');
    await refused({ reshardCollection: 'mv.moved', key: { v: 1 } }, 'NamespaceNotSharded');

    assert.deepEqual(await Promise.all(['mv.sharded', 'mv.plain', 'mv.missing', 'mv.moved'].map(catalogOf)), before);
    assert.deepEqual(await idsOnShard(0, 'plain'), [1]);
    assert.deepEqual(await idsOnShard(1, 'plain'), []);
    assert.deepEqual(await idsOnShard(1, 'missing'), []);
    assert.ok(!(await collectionsOnShard(0)).includes('missing'), 'no collection created on the primary');
    assert.equal(await config().collection<AnyDoc>('databases').countDocuments({ _id: 'nodb' }), 0);
    assert.equal(await client.db('mv').collection('sharded').countDocuments({}), 1);
    await assertConsistent();
  });

  it('shards an unsplittable collection on its database\'s primary, refuses one elsewhere', { timeout: 60_000 }, async () => {
    const docs = client.db('mv').collection<AnyDoc>('back');
    await docs.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, a: i % 5 })));
    await docs.createIndex({ a: 1 });
    // A move to where it is registers it, unsplittable on the primary, and moves nothing.
    await admin().command({ moveCollection: 'mv.back', toShard: shardIds[0] });
    const registered = await catalogOf('mv.back');
    assert.deepEqual([registered.entry?.unsplittable, registered.chunks.map((c) => c.shard)], [true, [shardIds[0]]]);
    assert.deepEqual((await idsOnShard(0, 'back')).length, 50);
    // mv.moved lies on the second shard since the first case.
    await client.db('mv').collection<AnyDoc>('moved').createIndex({ a: 1 });
    const off = await catalogOf('mv.moved');
    await refused({ shardCollection: 'mv.moved', key: { a: 1 } }, 'IllegalOperation');
    assert.deepEqual(await catalogOf('mv.moved'), off);
    await admin().command({ shardCollection: 'mv.back', key: { a: 1 } });
    const { entry, chunks } = await catalogOf('mv.back');
    assert.deepEqual([entry?.key, entry?.unsplittable, chunks.map((c) => c.shard)], [{ a: 1 }, undefined, [shardIds[0]]]);
    assert.equal((await client.db('mv').command({ collStats: 'back' })).sharded, true);
    await admin().command({ split: 'mv.back', middle: { a: 2 } });
    assert.equal(await second.db('mv').collection('back').countDocuments({ a: { $gte: 2 } }), 30);
    await assertConsistent();
  });

  // Holds the config server's coordinator of `ns`'s resharding before its critical section (the
  // fail point reshard_collection_test holds it with), runs `check` meanwhile, and answers how the
  // command that started it ended.
  async function whileHeld(start: () => Promise<unknown>, check: () => Promise<void>): Promise<unknown> {
    const FAIL_POINT = 'reshardingPauseCoordinatorBeforeBlockingWrites';
    const direct = new MongoClient(`mongodb://${cluster.config.hosts[0]}/?directConnection=true`);
    try {
      const { count } = await direct.db('admin').command({ configureFailPoint: FAIL_POINT, mode: 'alwaysOn' });
      const ended = start().then(() => undefined, (err: unknown) => err);
      try {
        await direct.db('admin').command({ waitForFailPoint: FAIL_POINT, timesEntered: (count as number) + 1, maxTimeMS: 30_000 });
        await check();
      } finally {
        await direct.db('admin').command({ configureFailPoint: FAIL_POINT, mode: 'off' });
      }
      return await ended;
    } finally {
      await direct.close();
    }
  }

  const aborted = (err: unknown) => err instanceof MongoServerError && err.codeName === 'ReshardCollectionAborted';

  // The config server's serverStatus shardingStatistics: the reshardings it ran, by provenance.
  async function reshardingStatistics(): Promise<AnyDoc> {
    const direct = new MongoClient(`mongodb://${cluster.config.hosts[0]}/?directConnection=true`);
    try {
      const { resharding, moveCollection, unshardCollection } = (await direct.db('admin').command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
      return { resharding, moveCollection, unshardCollection };
    } finally {
      await direct.close();
    }
  }

  it('abortMoveCollection and abortUnshardCollection abort only their own kind of operation', { timeout: 60_000 }, async () => {
    await client.db('mv').collection<AnyDoc>('held').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i })));
    const statsBefore = await reshardingStatistics();
    // The first case's move and the second's two unshards committed (the move to where a collection is started none).
    assert.ok((statsBefore.moveCollection as AnyDoc).countSucceeded >= 1 && (statsBefore.unshardCollection as AnyDoc).countSucceeded >= 1, JSON.stringify(statsBefore));
    const moving = await whileHeld(() => admin().command({ moveCollection: 'mv.held', toShard: shardIds[1] }), async () => {
      await refused({ abortUnshardCollection: 'mv.held' }, 'IllegalOperation');
      await refused({ abortReshardCollection: 'mv.held' }, 'IllegalOperation');
      assert.deepEqual(ownFields(await admin().command({ abortMoveCollection: 'mv.held' })), { ok: 1 });
    });
    assert.ok(aborted(moving), String(moving));
    // Registered by the move, unsplittable on the primary, where every document still is.
    const held = await catalogOf('mv.held');
    assert.deepEqual([held.entry?.unsplittable, held.chunks.map((c) => c.shard)], [true, [shardIds[0]]]);
    assert.equal((await idsOnShard(0, 'held')).length, 100);
    assert.deepEqual(await idsOnShard(1, 'held'), []);
    assert.ok(!(await collectionsOnShard(1)).some((n) => n.startsWith('system.resharding.')), 'no temporary collection left');
    assert.equal(await config().collection('reshardingOperations').countDocuments(), 0);
    await refused({ abortMoveCollection: 'mv.held' }, 'NoSuchReshardCollection');

    const ns = 'mv.heldSharded';
    await admin().command({ shardCollection: ns, key: { x: 1 } });
    await client.db('mv').collection<AnyDoc>('heldSharded').insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, x: i })));
    await admin().command({ split: ns, middle: { x: 50 } });
    await admin().command({ moveChunk: ns, find: { x: 75 }, to: shardIds[1] });
    const before = await catalogOf(ns);
    const unsharding = await whileHeld(() => admin().command({ unshardCollection: ns, toShard: shardIds[0] }), async () => {
      await refused({ abortMoveCollection: ns }, 'IllegalOperation');
      await admin().command({ abortUnshardCollection: ns });
    });
    assert.ok(aborted(unsharding), String(unsharding));
    assert.deepEqual(await catalogOf(ns), before, 'still sharded on {x: 1}, its chunks where they were');
    assert.equal((await idsOnShard(1, 'heldSharded')).length, 50, 'the second shard keeps its chunk\'s documents');
    assert.equal(await second.db('mv').collection('heldSharded').countDocuments({}), 100);
    await refused({ abortUnshardCollection: ns }, 'NoSuchReshardCollection');
    await refused({ abortMoveCollection: 'mv' }, 'InvalidNamespace');
    await assertConsistent();
    // One of each started and canceled here, the resharding counters untouched.
    const bump = (c: AnyDoc) => ({ ...c, countStarted: (c.countStarted as number) + 1, countCanceled: (c.countCanceled as number) + 1 });
    assert.deepEqual(await reshardingStatistics(), {
      resharding: statsBefore.resharding, moveCollection: bump(statsBefore.moveCollection as AnyDoc), unshardCollection: bump(statsBefore.unshardCollection as AnyDoc),
    });
  });

  it('renames and drops an unsplittable collection that lies off the primary, and its database', { timeout: 60_000 }, async () => {
    // mv.spread: unsplittable on the second shard since the unshard above.
    await client.db('admin').command({ renameCollection: 'mv.spread', to: 'mv.spread2' });
    assert.equal((await catalogOf('mv.spread')).entry, null);
    assert.deepEqual((await catalogOf('mv.spread2')).chunks.map((c) => c.shard), [shardIds[1]]);
    assert.equal(await second.db('mv').collection('spread2').countDocuments({}), 400);
    await assertConsistent();
    assert.equal(await client.db('mv').collection('moved').drop(), true);
    assert.equal((await catalogOf('mv.moved')).entry, null);
    assert.deepEqual(await idsOnShard(1, 'moved'), []);
    assert.equal(await second.db('mv').collection('moved').countDocuments({}), 0);
    await assertConsistent();
    // mv.spread2 still lies on the second shard: dropDatabase takes it there too.
    await client.db('mv').dropDatabase();
    assert.deepEqual([await collectionsOnShard(0), await collectionsOnShard(1)], [[], []]);
    assert.equal(await config().collection('collections').countDocuments({ _id: /^mv\./ }), 0);
    await assertConsistent();
  });
});

// A reply without the fields every reply carries ($clusterTime, operationTime): MongoDB's is {ok: 1}.
function ownFields(reply: AnyDoc): AnyDoc {
  const { $clusterTime: _time, operationTime: _op, ...own } = reply;
  return own;
}
