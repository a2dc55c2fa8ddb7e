import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import { ROUTER_FAST_PATHS, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recording_proxy.js';
import { withCluster } from '../helpers/fixtures.js';

// The router's fast paths (src/router/fast_paths.ts): a driver's insert whose documents all
// belong to one shard, its updateOne and its point read by shard key, are passed on as bytes. Each must answer
// exactly what the general path answers, send the shard what it sends, count as it counts, and
// the router's serverStatus counts what they answered; anything else (several shards, stale
// routing, views) takes the general path. Every test runs twice: with the fast paths on, and with
// --setParameter routerFastPaths=false, where the general path answers everything.
// Collection fp.c is sharded on {k: 1}: k < 100 on shard0, k ≥ 100 on shard1. Database fpr lives
// on `recorded`, a shard added by the address of a proxy that keeps what the shard is sent.
for (const setting of ROUTER_FAST_PATHS) describe(`router fast paths (${setting.name})`, () => {
  const on = setting.fastPaths;
  // What the fast paths answer of `n` requests they could take: all, or none when off.
  const taken = (n: number): number => (on ? n : 0);
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let other: MongoClient;
  let shards: MongoClient[];
  let db: Db;
  let recordedShard: SpawnedNode;
  let proxy: RecordingProxy;

  withCluster({ shards: 2, routers: 2, routerArgs: setting.routerArgs }, async (f) => {
    ({ cluster, client } = f);
    other = f.connect(cluster.routers[1]!.uri);
    shards = cluster.shards.map((s) => f.connect(`mongodb://127.0.0.1:${s.port}/?directConnection=true`));
    recordedShard = await f.processes.node({ role: 'shard' });
    proxy = await startRecordingProxy(recordedShard.port);
    const admin = client.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ addShard: `127.0.0.1:${proxy.port}`, name: 'recorded' });
    await admin.command({ enableSharding: 'fp', primaryShard: 'shard0' });
    await admin.command({ enableSharding: 'fpr', primaryShard: 'recorded' });
    await admin.command({ shardCollection: 'fp.c', key: { k: 1 } });
    await admin.command({ split: 'fp.c', middle: { k: 100 } });
    await admin.command({ moveChunk: 'fp.c', find: { k: 100 }, to: 'shard1' });
    db = client.db('fp');
    // The first request of a namespace loads its routing (the general path); later ones find it cached.
    await db.collection<AnyDoc>('c').insertOne({ _id: 'warm', k: 0 });
    await db.collection<AnyDoc>('u').insertOne({ _id: 'warm' });
    await client.db('fpr').collection<AnyDoc>('r').insertOne({ _id: 'warm' });
  });
  after(async () => {
    await proxy?.stop();
  });

  it('reports its routerFastPaths setting', async () => {
    const admin = client.db('admin');
    assert.equal((await admin.command({ getParameter: 1, routerFastPaths: 1 })).routerFastPaths, on);
    assert.equal((await admin.command({ getCmdLineOpts: 1 })).parsed.setParameter.routerFastPaths, on);
  });

  async function fastPaths(): Promise<{ insert: number; update: number; find: number }> {
    const status = await client.db('admin').command({ serverStatus: 1 });
    return status.docshard.fastPaths as { insert: number; update: number; find: number };
  }

  // The times differ by design (README): a fast path answers the shard's operationTime, the
  // general path the router's cluster time, which may have moved on between the two.
  const untimed = ({ $clusterTime: _c, operationTime: _o, ...reply }: Document): Document => reply;

  async function onShard(i: number, coll: string, filter: Document): Promise<Document[]> {
    return shards[i]!.db('fp').collection(coll).find(filter).toArray();
  }

  it('answers single-shard inserts and point reads, storing each document on its owner', async () => {
    const c = db.collection<AnyDoc>('c');
    const before = await fastPaths();
    await c.insertOne({ _id: 'a', k: 5 });
    await c.insertOne({ _id: 'b', k: 150 });
    await c.insertMany([{ _id: 'c', k: 6 }, { _id: 'd', k: 7.5 }]);
    await db.collection<AnyDoc>('u').insertOne({ _id: 'u1', x: 1 });
    assert.deepEqual((await c.findOne({ k: 5 }))?._id, 'a');
    assert.deepEqual((await c.findOne({ k: 150 }))?._id, 'b');
    assert.equal(await c.findOne({ k: 99 }), null);
    assert.deepEqual(await db.collection<AnyDoc>('u').findOne({ x: 1 }), { _id: 'u1', x: 1 });
    const afterwards = await fastPaths();
    assert.equal(afterwards.insert - before.insert, taken(4));
    assert.equal(afterwards.find - before.find, taken(4));
    assert.deepEqual((await onShard(0, 'c', { k: { $gt: 0 } })).map((d) => d._id).sort(), ['a', 'c', 'd']);
    assert.deepEqual((await onShard(1, 'c', {})).map((d) => d._id), ['b']);
    assert.deepEqual(await onShard(0, 'u', { _id: 'u1' }), [{ _id: 'u1', x: 1 }]);
  });

  it('leaves inserts spanning shards and other reads to the general path', async () => {
    const c = db.collection<AnyDoc>('c');
    const before = await fastPaths();
    await c.insertMany([{ _id: 'e', k: 8 }, { _id: 'f', k: 151 }]);
    assert.equal((await c.find({ k: { $gte: 8, $lte: 151 } }).sort({ k: 1 }).toArray()).length >= 2, true);
    assert.deepEqual(await c.findOne({ k: 8 }, { projection: { _id: 1 } }), { _id: 'e' });
    const afterwards = await fastPaths();
    assert.deepEqual(afterwards, before);
    assert.deepEqual((await onShard(0, 'c', { _id: 'e' })).length, 1);
    assert.deepEqual((await onShard(1, 'c', { _id: 'f' })).length, 1);
  });

  it('gives write errors exactly as the general path does', async () => {
    const c = db.collection<AnyDoc>('c');
    await c.insertMany([{ _id: 'd1', k: 20 }, { _id: 'd2', k: 21 }]);
    // `comment` is outside the fast path's shape: the same command then takes the general path.
    const cases: [string, Document][] = [
      ['one duplicate', { documents: [{ _id: 'd1', k: 20 }] }],
      ['ordered, stopping at the first', { documents: [{ _id: 'd1', k: 20 }, { _id: 'd2', k: 21 }], ordered: true }],
      ['unordered, every error', { documents: [{ _id: 'd2', k: 21 }, { _id: 'd1', k: 20 }], ordered: false }],
    ];
    for (const [what, args] of cases) {
      const before = await fastPaths();
      const fast = await db.command({ insert: 'c', ...args });
      const middle = await fastPaths();
      const general = await db.command({ insert: 'c', ...args, comment: 'general path' });
      assert.equal(middle.insert - before.insert, taken(1), `${what}: the fast path answered`);
      assert.equal((await fastPaths()).insert, middle.insert, `${what}: the general path answered`);
      assert.deepEqual(untimed(fast), untimed(general), what);
      assert.ok(fast.operationTime !== undefined && general.operationTime !== undefined, `${what}: both answer an operationTime`);
      assert.ok(Array.isArray(fast.writeErrors) && fast.writeErrors.every((e: Document) => e.code === 11000), what);
    }
    await assert.rejects(c.insertOne({ _id: 'd1', k: 20 }), (err: unknown) => err instanceof MongoServerError && err.code === 11000);
    assert.equal(await c.countDocuments({ _id: { $in: ['d1', 'd2'] } }), 2);
  });

  it('answers single-shard updates by shard key exactly as the general path does', async () => {
    const c = db.collection<AnyDoc>('c');
    await c.insertMany([{ _id: 'up1', k: 40, n: 0, s: 'text' }, { _id: 'up2', k: 140, n: 0 }]);
    // `comment` is outside the fast path's shape: the same command then takes the general path.
    const cases: [string, Document][] = [
      ['an $inc on shard0', { q: { k: 40 }, u: { $inc: { n: 1 } } }],
      ['an $inc on shard1, upsert and multi false', { q: { k: 140 }, u: { $inc: { n: 1 } }, upsert: false, multi: false }],
      ['no document matches', { q: { k: 41 }, u: { $inc: { n: 1 } } }],
      ['a write error', { q: { k: 40 }, u: { $inc: { s: 1 } } }],
      ['a shard error', { q: { k: 40 }, u: { $bogus: { n: 1 } } }],
    ];
    for (const [what, statement] of cases) {
      const before = await fastPaths();
      const fast = await db.command({ update: 'c', updates: [statement] });
      const middle = await fastPaths();
      const general = await db.command({ update: 'c', updates: [statement], comment: 'general path' });
      assert.equal(middle.update - before.update, taken(1), `${what}: the fast path answered`);
      assert.equal((await fastPaths()).update, middle.update, `${what}: the general path answered`);
      assert.deepEqual(untimed(fast), untimed(general), what);
      assert.ok(fast.operationTime !== undefined && general.operationTime !== undefined, `${what}: both answer an operationTime`);
    }
    assert.deepEqual((await onShard(0, 'c', { _id: 'up1' }))[0]?.n, 2, 'each $inc applied once');
    assert.deepEqual((await onShard(1, 'c', { _id: 'up2' }))[0]?.n, 2);

    const before = await fastPaths();
    assert.equal((await c.replaceOne({ k: 40 }, { k: 40, replaced: true })).modifiedCount, 1);
    const upsert = await c.updateOne({ k: 45 }, { $set: { y: 1 } }, { upsert: true });
    const general = await db.command({ update: 'c', updates: [{ q: { k: 46 }, u: { $set: { y: 1 } }, upsert: true }], comment: 'general path' });
    assert.equal(upsert.upsertedCount, 1);
    assert.deepEqual(general.upserted.map((u: Document) => u.index), [0]);
    assert.equal((await db.collection<AnyDoc>('u').updateOne({ _id: 'uu' }, { $inc: { y: 1 } }, { upsert: true })).upsertedCount, 1, 'an unsharded collection');
    assert.equal((await fastPaths()).update - before.update, taken(3));
    assert.deepEqual(await onShard(0, 'c', { _id: 'up1' }), [{ _id: 'up1', k: 40, replaced: true }]);
    assert.deepEqual((await onShard(0, 'c', { k: 45 })).map((d) => [d._id instanceof Object, d.y]), [[true, 1]], 'the upsert stored on its owner');
    assert.deepEqual(await onShard(0, 'u', { _id: 'uu' }), [{ _id: 'uu', y: 1 }]);
  });

  it('moves a document whose shard key an update changes, as the general path does', async () => {
    const c = db.collection<AnyDoc>('c');
    await c.insertOne({ _id: 'mover', k: 43 });
    const result = await c.updateOne({ k: 43 }, { $set: { k: 143 } });
    assert.deepEqual([result.matchedCount, result.modifiedCount], [1, 1]);
    assert.deepEqual(await onShard(0, 'c', { _id: 'mover' }), []);
    assert.deepEqual(await onShard(1, 'c', { _id: 'mover' }), [{ _id: 'mover', k: 143 }]);
  });

  it('follows a chunk that moved behind its back, writing and reading it once on its new owner', async () => {
    const c = db.collection<AnyDoc>('c');
    assert.equal(await c.findOne({ k: 60 }), null); // router 0 caches the chunk on shard0
    const admin = other.db('admin');
    await admin.command({ split: 'fp.c', middle: { k: 50 } });
    await admin.command({ moveChunk: 'fp.c', find: { k: 50 }, to: 'shard1' });
    await c.insertOne({ _id: 'moved', k: 60 });
    assert.deepEqual(await c.findOne({ k: 60 }), { _id: 'moved', k: 60 });
    assert.deepEqual(await onShard(1, 'c', { _id: 'moved' }), [{ _id: 'moved', k: 60 }]);
    assert.deepEqual(await onShard(0, 'c', { _id: 'moved' }), []);
    const before = await fastPaths();
    await c.insertOne({ _id: 'moved2', k: 70 });
    assert.equal((await fastPaths()).insert - before.insert, taken(1), 'refreshed, the fast path applies again');
    assert.equal(await other.db('fp').collection('c').countDocuments({ k: { $gte: 60, $lt: 100 } }), 2);
  });

  it('updates a document once on its new owner after its chunk moved behind its back', async () => {
    const c = db.collection<AnyDoc>('c');
    await other.db('fp').collection<AnyDoc>('c').insertOne({ _id: 'stale', k: 80, n: 0 });
    assert.deepEqual(await c.findOne({ k: 80 }), { _id: 'stale', k: 80, n: 0 }); // router 0 caches the chunk on shard1
    await other.db('admin').command({ moveChunk: 'fp.c', find: { k: 80 }, to: 'shard0' });
    assert.equal((await c.updateOne({ k: 80 }, { $inc: { n: 1 } })).modifiedCount, 1);
    // shard1 keeps its copy, an orphan, until its range deleter gets to it.
    assert.deepEqual(await onShard(0, 'c', { _id: 'stale' }), [{ _id: 'stale', k: 80, n: 1 }]);
    const before = await fastPaths();
    await c.updateOne({ k: 80 }, { $inc: { n: 1 } });
    assert.equal((await fastPaths()).update - before.update, taken(1), 'refreshed, the fast path applies again');
    assert.deepEqual(await onShard(0, 'c', { _id: 'stale' }), [{ _id: 'stale', k: 80, n: 2 }]);
  });

  it('touches the session of a fast-path write, and reads a view through the general path', async () => {
    const session = client.startSession();
    try {
      await db.collection<AnyDoc>('u').insertOne({ _id: 'in session', x: 2 }, { session });
      const sessions = await client.db('admin').aggregate([{ $listLocalSessions: {} }]).toArray();
      const id = (session.id!.id as { toString(format: string): string }).toString('hex');
      assert.ok(sessions.some((s) => (s._id.id as { toString(format: string): string }).toString('hex') === id), 'the router lists the session');
    } finally {
      await session.endSession();
    }
    await db.createCollection('v', { viewOn: 'u', pipeline: [{ $match: { x: { $exists: true } } }, { $project: { x: 1, _id: 0 } }] });
    const queries = async (): Promise<number> => (await shards[0]!.db('admin').command({ serverStatus: 1 })).opcounters.query as number;
    assert.deepEqual(await db.collection<AnyDoc>('v').findOne({ x: 2 }), { x: 2 });
    const before = await queries();
    assert.deepEqual(await db.collection<AnyDoc>('v').findOne({ x: 1 }), { x: 1 });
    assert.equal(await queries() - before, 1, 'once known, a view is asked once (the general path), not first by the fast path');
  });

  it("answers a shard's error to a point read as the general path does", async () => {
    const find = { find: 'u', filter: { x: { $bogus: 1 } }, limit: 1, singleBatch: true };
    const fast = await db.command(find).catch((err: unknown) => err);
    const general = await db.command({ ...find, comment: 'general path' }).catch((err: unknown) => err);
    assert.ok(fast instanceof MongoServerError && general instanceof MongoServerError);
    assert.deepEqual([fast.code, fast.codeName, fast.message], [general.code, general.codeName, general.message]);
    assert.deepEqual(await db.collection<AnyDoc>('u').findOne({ _id: 'u1' }), { _id: 'u1', x: 1 }, 'the connection still serves');
  });

  it("sends the shard a retryable insert's lsid, txnNumber and stmtIds as the general path does, and a read's session not at all", async () => {
    const sent: Document[] = [];
    const watched = new MongoClient(cluster.routers[0]!.uri, { monitorCommands: true });
    watched.on('commandStarted', (e: CommandStartedEvent) => { if (e.commandName === 'insert') sent.push(e.command); });
    const notRetrying = new MongoClient(cluster.routers[0]!.uri, { retryWrites: false });
    try {
      const r = watched.db('fpr').collection<AnyDoc>('r');
      proxy.commands.length = 0;
      const before = await fastPaths();
      await r.insertOne({ _id: 'fast', x: 1 });
      // `comment` is outside the fast path's shape: the same insert then takes the general path.
      await r.insertOne({ _id: 'general', x: 1 }, { comment: 'general path' });
      await notRetrying.db('fpr').collection<AnyDoc>('r').insertOne({ _id: 'not retryable', x: 1 });
      assert.deepEqual(await r.findOne({ _id: 'fast' }), { _id: 'fast', x: 1 });
      assert.deepEqual(await r.findOne({ _id: 'general' }, { comment: 'general path' }), { _id: 'general', x: 1 });
      assert.equal((await fastPaths()).insert - before.insert, taken(2), 'the first and the third insert');
      const [fast, general, plain] = proxy.commands.filter((c) => c.insert === 'r');
      assert.ok(fast && general && plain && sent.length === 2);
      const hex = (lsid: unknown): string => ((lsid as { id: { toString(format: string): string } }).id).toString('hex');
      for (const [i, received] of [fast, general].entries()) {
        assert.equal(hex(received.lsid), hex(sent[i]!.lsid), 'the client\'s session');
        assert.equal(String(received.txnNumber), String(sent[i]!.txnNumber), 'its transaction number');
      }
      const { comment: _comment, ...generalFields } = general;
      assert.deepEqual(Object.keys(fast).sort(), Object.keys(generalFields).sort(), 'nothing either path adds alone');
      assert.deepEqual([fast.stmtIds, fast.shardVersion, fast.databaseVersion, fast.documents], [general.stmtIds, general.shardVersion, general.databaseVersion, [{ _id: 'fast', x: 1 }]]);
      assert.deepEqual(fast.stmtIds, [0], "the statement's id");
      assert.deepEqual(['lsid' in plain, 'txnNumber' in plain, 'stmtIds' in plain], [false, false, false], 'a write that is not retryable keeps its session on the router');
      const reads = proxy.commands.filter((c) => c.find === 'r');
      assert.equal(reads.length, 2);
      for (const read of reads) assert.deepEqual(['lsid' in read, 'txnNumber' in read], [false, false], 'a read keeps its session on the router');
    } finally {
      await watched.close();
      await notRetrying.close();
    }
  });

  it("sends the shard a retryable update's lsid, txnNumber and stmtIds as the general path does", async () => {
    const sent: Document[] = [];
    const watched = new MongoClient(cluster.routers[0]!.uri, { monitorCommands: true });
    watched.on('commandStarted', (e: CommandStartedEvent) => { if (e.commandName === 'update') sent.push(e.command); });
    const notRetrying = new MongoClient(cluster.routers[0]!.uri, { retryWrites: false });
    try {
      const r = watched.db('fpr').collection<AnyDoc>('r');
      await r.insertOne({ _id: 'up', x: 0 });
      proxy.commands.length = 0;
      const before = await fastPaths();
      await r.updateOne({ _id: 'up' }, { $inc: { x: 1 } });
      await r.updateOne({ _id: 'up' }, { $inc: { x: 1 } }, { comment: 'general path' });
      await notRetrying.db('fpr').collection<AnyDoc>('r').updateOne({ _id: 'up' }, { $inc: { x: 1 } });
      assert.equal((await fastPaths()).update - before.update, taken(2), 'the first and the third update');
      assert.deepEqual(await r.findOne({ _id: 'up' }), { _id: 'up', x: 3 });
      const [fast, general, plain] = proxy.commands.filter((c) => c.update === 'r');
      assert.ok(fast && general && plain && sent.length === 2);
      const hex = (lsid: unknown): string => ((lsid as { id: { toString(format: string): string } }).id).toString('hex');
      for (const [i, received] of [fast, general].entries()) {
        assert.equal(hex(received.lsid), hex(sent[i]!.lsid), 'the client\'s session');
        assert.equal(String(received.txnNumber), String(sent[i]!.txnNumber), 'its transaction number');
      }
      const { comment: _comment, ...generalFields } = general;
      assert.deepEqual(Object.keys(fast).sort(), Object.keys(generalFields).sort(), 'nothing either path adds alone');
      assert.deepEqual([fast.stmtIds, fast.shardVersion, fast.databaseVersion, fast.ordered, fast.updates], [general.stmtIds, general.shardVersion, general.databaseVersion, general.ordered, general.updates]);
      assert.deepEqual(fast.stmtIds, [0], "the statement's id");
      assert.deepEqual(['lsid' in plain, 'txnNumber' in plain, 'stmtIds' in plain], [false, false, false], 'a write that is not retryable keeps its session on the router');
    } finally {
      await watched.close();
      await notRetrying.close();
    }
  });

  it('counts operations in serverStatus.opcounters as mongos does, whichever path answers', async () => {
    const c = db.collection<AnyDoc>('c');
    const opcounters = async (): Promise<Record<string, number>> => (await client.db('admin').command({ serverStatus: 1 })).opcounters as Record<string, number>;
    const before = await opcounters();
    await c.insertOne({ _id: 'o1', k: 30 });
    await c.insertMany([{ _id: 'o2', k: 31 }, { _id: 'o3', k: 131 }]);
    // Ordered, failing at its second document: two attempted. Unordered: every one attempted.
    await db.command({ insert: 'c', documents: [{ _id: 'o4', k: 32 }, { _id: 'o1', k: 30 }, { _id: 'o5', k: 33 }] });
    await db.command({ insert: 'c', documents: [{ _id: 'o1', k: 30 }, { _id: 'o6', k: 34 }], ordered: false });
    await c.findOne({ k: 30 });
    await c.findOne({ k: 131 });
    await c.updateOne({ k: 30 }, { $set: { y: 1 } });
    await c.deleteOne({ k: 34 });
    const after = await opcounters();
    // Not `command`: the driver's monitoring hellos count there, whenever they come.
    const moved = Object.fromEntries(['insert', 'query', 'update', 'delete', 'getmore'].map((k) => [k, after[k]! - before[k]!]));
    assert.deepEqual(moved, { insert: 7, query: 2, update: 1, delete: 1, getmore: 0 });
    assert.ok(after.command! > before.command!, 'serverStatus counts itself');
  });
});
