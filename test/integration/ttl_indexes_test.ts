import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { waitFor } from '../helpers/balancer_util.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// Issue 19: TTL indexes (a monitor on every node, every ttlMonitorSleepSecs), collMod of
// expireAfterSeconds and hidden, hidden indexes left out of planning, the simple index collation.

const FAST_TTL = ['--setParameter', 'ttlMonitorSleepSecs=1'];
const HOUR_MS = 3600_000;

interface TtlMetrics {
  passes: number;
  subPasses: number;
  deletedDocuments: number;
  invalidTTLIndexSkips: number;
}

async function ttlMetrics(db: Db): Promise<TtlMetrics> {
  const status = await db.admin().command({ serverStatus: 1 });
  return status.metrics.ttl as TtlMetrics;
}

// Resolves once `n` more passes have ended than when it was called.
async function passes(db: Db, n: number): Promise<TtlMetrics> {
  const start = (await ttlMetrics(db)).passes;
  return waitFor(`${n} TTL passes`, async () => {
    const m = await ttlMetrics(db);
    return m.passes >= start + n ? m : undefined;
  }, 15_000, 100);
}

async function refusedWith(p: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof MongoServerError, String(e));
    assert.equal(e.code, code, e.message);
    return true;
  });
}

function stages(plan: unknown): string[] {
  const out: string[] = [];
  for (let p = plan as AnyDoc; p && typeof p === 'object'; p = p.inputStage) out.push(p.stage);
  return out;
}

describe('TTL and hidden indexes on a node', () => {
  let client: MongoClient;
  let db: Db;
  withNode({ extraArgs: FAST_TTL }, async (f) => {
    client = f.client;
    db = client.db('ttl');
  });

  it('removes an expired document within two monitor passes and keeps the others', async () => {
    const c = db.collection<AnyDoc>('sessions');
    await c.createIndex({ lastUse: 1 }, { expireAfterSeconds: 60 });
    const before = await ttlMetrics(db);
    await c.insertMany([
      { _id: 'expired', lastUse: new Date(Date.now() - HOUR_MS) },
      { _id: 'fresh', lastUse: new Date() },
      { _id: 'array', lastUse: [new Date(), new Date(Date.now() - HOUR_MS)] },
      { _id: 'notADate', lastUse: Date.now() - HOUR_MS },
    ]);
    const after = await passes(db, 2);
    assert.deepEqual((await c.find().sort({ _id: 1 }).toArray()).map((d) => d._id), ['fresh', 'notADate']);
    assert.equal(after.deletedDocuments - before.deletedDocuments, 2);
    assert.ok(after.subPasses >= after.passes, 'every pass has a sub-pass');
    const [, ttlIndex] = await c.listIndexes().toArray();
    assert.deepEqual(ttlIndex, { v: 2, key: { lastUse: 1 }, name: 'lastUse_1', expireAfterSeconds: 60 });
    const param = await db.admin().command({ getParameter: 1, ttlMonitorSleepSecs: 1 });
    assert.equal(param.ttlMonitorSleepSecs, 1);
  });

  it('follows collMod: a changed expireAfterSeconds, and a plain index made a TTL index', async () => {
    const c = db.collection<AnyDoc>('events');
    await c.createIndex({ at: 1 }, { expireAfterSeconds: 3600 });
    await c.createIndex({ seen: -1 });
    await c.insertMany([{ _id: 1, at: new Date(Date.now() - 600_000) }, { _id: 2, seen: new Date(Date.now() - 600_000) }, { _id: 3, at: new Date() }]);
    await passes(db, 2);
    assert.equal(await c.countDocuments(), 3, 'ten minutes is not an hour');
    const changed = await db.command({ collMod: 'events', index: { keyPattern: { at: 1 }, expireAfterSeconds: 300 } });
    assert.equal(changed.expireAfterSeconds_old, 3600);
    assert.equal(changed.expireAfterSeconds_new, 300);
    const converted = await db.command({ collMod: 'events', index: { name: 'seen_-1', expireAfterSeconds: 60 } });
    assert.equal(converted.expireAfterSeconds_old, undefined);
    assert.equal(converted.expireAfterSeconds_new, 60);
    await passes(db, 2);
    assert.deepEqual((await c.find().toArray()).map((d) => d._id), [3]);
    const specs = await c.listIndexes().toArray();
    assert.deepEqual(specs.map((s) => s.expireAfterSeconds), [undefined, 300, 60]);
  });

  it("refuses invalid TTL specs and modifications with MongoDB's codes", async () => {
    const c = db.collection<AnyDoc>('invalid');
    await refusedWith(c.createIndex({ at: 1 }, { expireAfterSeconds: 'soon' as unknown as number }), 67);
    await refusedWith(c.createIndex({ at: 1 }, { expireAfterSeconds: -1 }), 67);
    await refusedWith(c.createIndex({ at: 1 }, { expireAfterSeconds: 2 ** 31 }), 67);
    await refusedWith(c.createIndex({ at: 1, b: 1 }, { expireAfterSeconds: 10 }), 67);
    await refusedWith(db.command({ createIndexes: 'invalid', indexes: [{ key: { _id: 1 }, name: '_id_', expireAfterSeconds: 10 }] }), 197);
    await c.createIndex({ at: 1 }, { expireAfterSeconds: 10 });
    await refusedWith(c.createIndex({ at: 1 }, { expireAfterSeconds: 20 }), 85);
    await refusedWith(db.command({ collMod: 'invalid', index: { name: 'at_1', expireAfterSeconds: -5 } }), 72);
    await refusedWith(db.command({ collMod: 'invalid', index: { name: 'at_1', expireAfterSeconds: 'x' } }), 14);
    await refusedWith(db.command({ collMod: 'invalid', index: { name: '_id_', expireAfterSeconds: 5 } }), 72);
    await refusedWith(db.command({ collMod: 'invalid', index: { name: 'nope', expireAfterSeconds: 5 } }), 27);
    await refusedWith(db.command({ collMod: 'invalid', index: { name: 'at_1' } }), 72);
    const [, spec] = await c.listIndexes().toArray();
    assert.equal(spec!.expireAfterSeconds, 10, 'nothing refused changed anything');
  });

  it('keeps a hidden index up to date but out of the plans, and fails a hint of it', async () => {
    const c = db.collection<AnyDoc>('hidden');
    await c.createIndex({ a: 1 }, { hidden: true });
    await c.createIndex({ u: 1 }, { unique: true, hidden: true });
    await c.createIndex({ b: 1 }, { hidden: false });
    await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, a: i % 4, u: i, b: i })));
    const specs = await c.listIndexes().toArray();
    assert.deepEqual(specs.map((s) => s.hidden), [undefined, true, true, undefined], 'hidden: false is not kept');
    const hiddenPlan = await c.find({ a: 1 }).explain('executionStats');
    assert.deepEqual(stages(hiddenPlan.queryPlanner.winningPlan), ['COLLSCAN']);
    await refusedWith(c.find({ a: 1 }).hint({ a: 1 }).toArray(), 2);
    await refusedWith(c.find({ a: 1 }).hint('a_1').toArray(), 2);
    await refusedWith(c.insertOne({ _id: 100, u: 3 }), 11000);
    const hide = await db.command({ collMod: 'hidden', index: { name: 'a_1', hidden: false } });
    assert.equal(hide.hidden_old, true);
    assert.equal(hide.hidden_new, false);
    const shown = await c.find({ a: 1 }).explain('executionStats');
    assert.deepEqual(stages(shown.queryPlanner.winningPlan), ['FETCH', 'IXSCAN']);
    assert.equal(shown.queryPlanner.winningPlan.inputStage.indexName, 'a_1');
    assert.equal(shown.executionStats.totalKeysExamined, 5, 'every document written while hidden is in the index');
    assert.deepEqual((await c.find({ a: 1 }).toArray()).map((d) => d._id), [1, 5, 9, 13, 17]);
    await db.command({ collMod: 'hidden', index: { keyPattern: { b: 1 }, hidden: true } });
    const hiddenB = await c.find({ b: 3 }).explain();
    assert.deepEqual(stages(hiddenB.queryPlanner.winningPlan), ['COLLSCAN']);
    await refusedWith(db.command({ collMod: 'hidden', index: { name: '_id_', hidden: true } }), 2);
    await refusedWith(c.createIndex({ c: 1 }, { hidden: 'yes' as unknown as boolean }), 14);
  });

  it('keeps no collation in the spec of an index under the simple one', async () => {
    const c = db.collection<AnyDoc>('collated');
    await c.createIndex({ name: 1 }, { collation: { locale: 'simple' } });
    const [, spec] = await c.listIndexes().toArray();
    assert.deepEqual(spec, { v: 2, key: { name: 1 }, name: 'name_1' }, 'the simple collation is no collation');
  });
});

describe('TTL indexes on a sharded collection through a router', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  const direct: MongoClient[] = [];

  withCluster({ shards: 2, shardArgs: FAST_TTL }, async (f) => {
    ({ cluster, client: router } = f);
    for (const s of cluster.shards) direct.push(f.connect(s.uri));
  });

  it('deletes what each shard owns and leaves the donor\'s orphans to the range deleter', async () => {
    const admin = router.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'app', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'app.events', key: { k: 1 } });
    const events = router.db('app').collection<AnyDoc>('events');
    const old = new Date(Date.now() - HOUR_MS);
    await events.insertMany([...Array.from({ length: 20 }, (_, k) => ({ _id: k, k, at: old })), { _id: 100, k: 100, at: new Date(Date.now() + HOUR_MS) }]);
    await admin.command({ split: 'app.events', middle: { k: 10 } });
    // The donor keeps its copy of [10, MaxKey) as orphans for orphanCleanupDelaySecs (900 s).
    await admin.command({ moveChunk: 'app.events', find: { k: 10 }, to: 'shard1' });
    await events.createIndex({ at: 1 }, { expireAfterSeconds: 0 });

    await waitFor('the expired documents to go', async () => (await events.countDocuments()) === 1, 15_000, 100);
    const [donor, recipient] = direct.map((c) => c.db('app'));
    await passes(donor!, 2);
    assert.deepEqual((await events.find().toArray()).map((d) => d._id), [100]);
    const orphans = await donor!.collection<AnyDoc>('events').find().sort({ k: 1 }).toArray();
    assert.deepEqual(orphans.map((d) => d.k), [...Array.from({ length: 10 }, (_, i) => 10 + i), 100], 'the donor deleted only what it owns');
    const [task] = await direct[0]!.db('config').collection<AnyDoc>('rangeDeletions').find({ nss: 'app.events' }).toArray();
    assert.equal(task.numOrphanDocs, 11, "the range deletion task's count is still exact");
    assert.deepEqual((await recipient!.collection<AnyDoc>('events').find().toArray()).map((d) => d._id), [100]);
    assert.equal((await ttlMetrics(donor!)).deletedDocuments, 10);
    assert.equal((await ttlMetrics(recipient!)).deletedDocuments, 10);

    const changed = await router.db('app').command({ collMod: 'events', index: { keyPattern: { at: 1 }, expireAfterSeconds: 7200 } });
    assert.equal(changed.expireAfterSeconds_old, 0);
    assert.equal(changed.expireAfterSeconds_new, 7200);
    for (const shard of [donor!, recipient!]) {
      const [at] = (await shard.collection('events').listIndexes().toArray()).filter((i) => i.name === 'at_1');
      assert.equal(at!.expireAfterSeconds, 7200, 'every shard holding the collection changed it');
    }
  });
});
