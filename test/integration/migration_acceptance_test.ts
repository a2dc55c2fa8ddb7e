import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Acceptance of issue 4 on real processes with the official driver: stale routers after a
// migration, exact counts while a migration is paused with copies on the recipient, and a bigger
// move with writers running. One cluster (2 shards, 2 routers, test commands on), one collection
// per test.
const WAIT_MS = 20_000;

describe('migration acceptance (issue 4)', () => {
  let cluster: SpawnedCluster;
  let router_a: MongoClient;
  let router_b: MongoClient;
  const direct: MongoClient[] = [];

  withCluster({ shards: 2, routers: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client: router_a } = f);
    router_b = f.connect(cluster.routers[1]!.uri);
    for (const s of cluster.shards) direct.push(f.connect(s.uri));
    await router_a.db('admin').command({ enableSharding: 'ma', primaryShard: 'shard0' });
  });

  async function shard_collection(name: string, split: number, n: number): Promise<void> {
    await router_a.db('admin').command({ shardCollection: `ma.${name}`, key: { k: 1 } });
    await router_a.db('admin').command({ split: `ma.${name}`, middle: { k: split } });
    const coll = router_a.db('ma').collection<AnyDoc>(name);
    const batch = 5000;
    for (let start = 0; start < n; start += batch) {
      await coll.insertMany(Array.from({ length: Math.min(batch, n - start) }, (_, j) => ({ _id: start + j, k: start + j, v: 0 })), { ordered: false });
    }
  }

  function count_on(shard: number, name: string, filter: AnyDoc): Promise<number> {
    return direct[shard]!.db('ma').collection<AnyDoc>(name).countDocuments(filter);
  }

  it('routers that did not see the migration route correctly afterwards (StaleConfig path)', async () => {
    const N = 2000;
    const SPLIT = 1000;
    await shard_collection('stale', SPLIT, N);
    const coll_a = router_a.db('ma').collection<AnyDoc>('stale');

    // Router A caches the routing table: everything on shard0.
    assert.equal(await coll_a.countDocuments({}), N);
    assert.deepEqual(await coll_a.findOne({ k: 5 }), { _id: 5, k: 5, v: 0 });
    assert.deepEqual(await coll_a.findOne({ k: 1500 }), { _id: 1500, k: 1500, v: 0 });

    // Router B moves [MinKey, SPLIT) to shard1; router A never hears about it from the config server.
    const reply = await router_b.db('admin').command({ moveChunk: 'ma.stale', find: { k: 0 }, to: 'shard1', _waitForDelete: true });
    assert.equal(reply.ok, 1);
    assert.equal(await count_on(0, 'stale', { k: { $lt: SPLIT } }), 0, 'donor deleted the range');
    assert.equal(await count_on(1, 'stale', { k: { $lt: SPLIT } }), SPLIT, 'recipient owns the range');

    // Through stale router A: reads.
    assert.deepEqual(await coll_a.findOne({ k: 5 }), { _id: 5, k: 5, v: 0 }, 'find by key in the moved range');
    assert.deepEqual((await coll_a.find({ k: { $gte: 10, $lt: 20 } }).sort({ k: 1 }).toArray()).map((d) => d._id), Array.from({ length: 10 }, (_, i) => 10 + i));
    assert.equal(await coll_a.countDocuments({}), N);
    assert.equal(await coll_a.countDocuments({ k: { $lt: SPLIT } }), SPLIT);
    const count_reply = await router_a.db('ma').command({ count: 'stale', query: { k: { $lt: 100 } } });
    assert.equal(count_reply.n, 100);
    assert.equal((await router_a.db('ma').command({ count: 'stale' })).n, N);

    // Writes into the moved range through router A.
    await coll_a.insertOne({ _id: 'new-1', k: 7, v: 1 });
    await coll_a.insertMany([{ _id: 'new-2', k: 17, v: 1 }, { _id: 'new-3', k: 1700, v: 1 }]);
    const upd = await coll_a.updateOne({ k: 8 }, { $set: { v: 42 } });
    assert.equal(upd.matchedCount, 1);
    assert.equal(upd.modifiedCount, 1);
    const upd_many = await coll_a.updateMany({ k: { $gte: 20, $lt: 30 } }, { $inc: { v: 1 } });
    assert.equal(upd_many.modifiedCount, 10);
    const del = await coll_a.deleteOne({ k: 9 });
    assert.equal(del.deletedCount, 1);

    assert.deepEqual(await coll_a.findOne({ _id: 'new-1' }), { _id: 'new-1', k: 7, v: 1 });
    assert.deepEqual(await coll_a.findOne({ k: 8 }), { _id: 8, k: 8, v: 42 });
    assert.equal(await coll_a.findOne({ k: 9 }), null);
    assert.equal(await coll_a.countDocuments({ k: { $gte: 20, $lt: 30 }, v: 1 }), 10);
    assert.equal(await coll_a.countDocuments({}), N + 3 - 1);
    assert.equal((await router_a.db('ma').command({ count: 'stale' })).n, N + 3 - 1);

    // Per-shard direct counts: the new documents are on the new owner only.
    assert.equal(await count_on(1, 'stale', { _id: { $in: ['new-1', 'new-2'] } }), 2);
    assert.equal(await count_on(0, 'stale', { _id: { $in: ['new-1', 'new-2'] } }), 0);
    assert.equal(await count_on(0, 'stale', { _id: 'new-3' }), 1);
    assert.equal(await count_on(1, 'stale', { _id: 'new-3' }), 0);
    assert.equal(await count_on(0, 'stale', { k: { $lt: SPLIT } }), 0, 'nothing of the moved range landed on the donor');
    assert.equal(await count_on(1, 'stale', { k: { $lt: SPLIT } }), SPLIT + 2 - 1);
    assert.equal(await count_on(0, 'stale', {}), N - SPLIT + 1);
    assert.deepEqual(await direct[1]!.db('ma').collection<AnyDoc>('stale').findOne({ k: 8 }), { _id: 8, k: 8, v: 42 });
    assert.equal(await count_on(1, 'stale', { k: { $gte: 20, $lt: 30 }, v: 1 }), 10);
  });

  it('counts are exact while a migration is paused after cloning, and after it', async () => {
    const N = 2000;
    const SPLIT = 1000;
    await shard_collection('count', SPLIT, N);
    const coll = router_a.db('ma').collection<AnyDoc>('count');
    // The model: k of every document (documents are { _id, k, v }).
    const model = new Map<unknown, number>(Array.from({ length: N }, (_, i) => [i, i]));
    const check = async (when: string): Promise<void> => {
      const all = [...model.values()];
      const low = all.filter((k) => k < 500).length;
      const in_range = all.filter((k) => k < SPLIT).length;
      assert.equal(await coll.countDocuments({}), model.size, `${when}: countDocuments({})`);
      assert.equal(await coll.countDocuments({ k: { $lt: 500 } }), low, `${when}: countDocuments with predicate`);
      assert.equal(await coll.countDocuments({ k: { $lt: SPLIT } }), in_range, `${when}: countDocuments of the moved range`);
      assert.equal((await router_a.db('ma').command({ count: 'count' })).n, model.size, `${when}: count without predicate`);
      assert.equal((await router_a.db('ma').command({ count: 'count', query: {} })).n, model.size, `${when}: count with empty query`);
      assert.equal((await router_a.db('ma').command({ count: 'count', query: { k: { $lt: 500 } } })).n, low, `${when}: count with predicate`);
      assert.equal((await router_b.db('ma').command({ count: 'count', query: { k: { $lt: SPLIT } } })).n, in_range, `${when}: count through the other router`);
      const ids = (await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      assert.equal(ids.length, model.size, `${when}: find returns every document once`);
      assert.equal(new Set(ids).size, model.size, `${when}: no _id twice`);
    };
    await check('before');

    const donor_admin = direct[0]!.db('admin');
    const { count: entered } = await donor_admin.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
    let released = false;
    const move = router_b.db('admin').command({ moveChunk: 'ma.count', find: { k: 0 }, to: 'shard1', _waitForDelete: true })
      .then(() => undefined, (err: unknown) => err);
    try {
      await donor_admin.command({ waitForFailPoint: 'moveChunkHangAtStep3', timesEntered: entered + 1, maxTimeMS: WAIT_MS });
      // The recipient holds copies of the range that must not be counted.
      assert.equal(await count_on(1, 'count', { k: { $lt: SPLIT } }), SPLIT, 'the recipient cloned the range');
      await check('paused after cloning');

      // Writes to the range while paused are accepted (no critical section yet) and counted once.
      await coll.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: `p${i}`, k: i * 3, v: 0 })));
      for (let i = 0; i < 20; i++) model.set(`p${i}`, i * 3);
      await coll.deleteMany({ k: { $gte: 900, $lt: 910 } });
      for (let k = 900; k < 910; k++) model.delete(k);
      await check('paused, after writes');

      await donor_admin.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
      released = true;
      const outcome = await move;
      assert.equal(outcome, undefined, `moveChunk succeeded: ${String(outcome)}`);
    } finally {
      if (!released) {
        await donor_admin.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
        await move;
      }
    }
    await check('after');
    assert.equal(await count_on(0, 'count', { k: { $lt: SPLIT } }), 0);
    assert.equal(await count_on(1, 'count', {}), [...model.values()].filter((k) => k < SPLIT).length);
  });

  it('moves a chunk of 50k of 100k documents with 2 writers; contents equal the model', async () => {
    const N = 100_000;
    const SPLIT = N / 2;
    await shard_collection('big', SPLIT, N);
    const coll = router_a.db('ma').collection<AnyDoc>('big');
    const model = new Map<unknown, { _id: unknown; k: number; v: number }>(Array.from({ length: N }, (_, i) => [i, { _id: i, k: i, v: 0 }]));

    let stop = false;
    const writer = async (w: number, client: MongoClient): Promise<number> => {
      const c = client.db('ma').collection<AnyDoc>('big');
      let n = 0;
      while (!stop) {
        n++;
        // Writer w owns base ids i with i % 2 === w, and the ids it inserts.
        const base = ((n * 7919) % (N / 2)) * 2 + w;
        const op = n % 4;
        if (op === 0 || op === 1) {
          const doc = { _id: `w${w}-${n}`, k: (n * 131 + w) % N, v: n };
          await c.insertOne(doc);
          model.set(doc._id, doc);
        } else if (op === 2) {
          const cur = model.get(base);
          const r = await c.updateOne({ k: base, _id: base }, { $set: { v: n } });
          assert.equal(r.matchedCount, cur === undefined ? 0 : 1, `update of ${base}`);
          if (cur !== undefined) cur.v = n;
        } else {
          const victim = ((n * 104729) % (N / 2)) * 2 + w;
          const r = await c.deleteOne({ k: victim, _id: victim });
          assert.equal(r.deletedCount, model.has(victim) ? 1 : 0, `delete of ${victim}`);
          model.delete(victim);
        }
      }
      return n;
    };
    const writers = [writer(0, router_a), writer(1, router_b)];
    const started = Date.now();
    let moved: unknown;
    try {
      moved = await router_b.db('admin').command({ moveChunk: 'ma.big', find: { k: 0 }, to: 'shard1', _waitForDelete: true });
    } finally {
      stop = true;
    }
    const ops = await Promise.all(writers);
    assert.equal((moved as { ok: number }).ok, 1);
    const move_ms = Date.now() - started;
    assert.ok(ops[0]! > 0 && ops[1]! > 0, `both writers ran (${ops.join(', ')} ops in ${move_ms} ms)`);

    const expected = [...model.values()].sort((a, b) => a.k - b.k || String(a._id).localeCompare(String(b._id)));
    const got = (await coll.find({}).toArray()).sort((a, b) => a.k - b.k || String(a._id).localeCompare(String(b._id)));
    assert.equal(got.length, expected.length, 'router sees exactly the model');
    assert.deepEqual(got, expected);
    assert.equal(await coll.countDocuments({}), model.size);

    // After _waitForDelete every document is on exactly one shard.
    const on = await Promise.all(direct.map((d) => d.db('ma').collection<AnyDoc>('big').find({}, { projection: { _id: 1, k: 1 } }).toArray()));
    assert.equal(on[0]!.filter((d) => d.k < SPLIT).length, 0, 'donor kept nothing of the moved range');
    assert.equal(on[1]!.filter((d) => d.k >= SPLIT).length, 0, 'recipient holds nothing outside the moved range');
    const ids = [...on[0]!, ...on[1]!].map((d) => String(d._id));
    assert.equal(ids.length, model.size, 'shards hold the model, no orphans');
    assert.equal(new Set(ids).size, model.size, 'no _id on two shards');
    const rd = (await direct[0]!.db('config').collection('rangeDeletions').countDocuments({})) + (await direct[1]!.db('config').collection('rangeDeletions').countDocuments({}));
    assert.equal(rd, 0, 'no range deletion task left');
  });
});
