import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoBulkWriteError, MongoClient, type Collection, type Db } from 'mongodb';
import { waitFor } from '../helpers/balancer_util.js';
import { ROUTER_FAST_PATHS, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Targeting and merging through the router over a collection whose chunks were really moved:
// shard0 owns k < 1000, shard1 1000 <= k < 2000, shard2 k >= 2000, two chunks each.
const DOCS = 3000;
const SPLITS = [500, 1000, 1500, 2000, 2500];
const OWNER_OF_SPLIT: Record<number, string> = { 1000: 'shard1', 1500: 'shard1', 2000: 'shard2', 2500: 'shard2' };

// `s` is a permutation of the keys (7919 is prime to DOCS), so sorting by it interleaves shards.
function docOf(i: number): AnyDoc {
  return { _id: i, k: i, g: i % 7, s: String((i * 7919) % DOCS).padStart(4, '0') };
}
const MODEL: AnyDoc[] = Array.from({ length: DOCS }, (_, i) => docOf(i));

function sortedModel(compare: (a: AnyDoc, b: AnyDoc) => number, filter: (d: AnyDoc) => boolean = () => true): AnyDoc[] {
  return MODEL.filter(filter).sort(compare);
}

function targetedShards(explain: AnyDoc): string[] {
  return (explain.queryPlanner.winningPlan.shards as AnyDoc[]).map((s) => s.shardName).sort();
}

function indexesAndCodes(err: MongoBulkWriteError): [number, unknown][] {
  return [err.writeErrors].flat().map((e): [number, unknown] => [e.index, e.code]).sort((a, b) => a[0] - b[0]);
}

// With the router's fast paths on and off (ROUTER_FAST_PATHS): the answers must not change.
for (const setting of ROUTER_FAST_PATHS) describe(`targeting and merging over chunks moved to three shards (${setting.name})`, () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;
  let coll: Collection<AnyDoc>;
  // Direct connections to shard0..2. Polling monitors with a long interval keep the test's own
  // hellos out of the shards' command counters between two readings.
  let direct: MongoClient[];

  async function serverStatuses(): Promise<AnyDoc[]> {
    const out: AnyDoc[] = [];
    for (const c of direct) out.push(await c.db('admin').command({ serverStatus: 1 }));
    return out;
  }

  // The shards whose `counter` moved while `run` ran. A serverStatus counts itself as a command,
  // so the second reading's own is taken off.
  async function shardsReached(counter: 'command' | 'query' | 'update' | 'delete', run: () => Promise<unknown>): Promise<string[]> {
    const before = await serverStatuses();
    await run();
    const after = await serverStatuses();
    const own = counter === 'command' ? 1 : 0;
    return after.flatMap((s, i) => (s.opcounters[counter] - before[i]!.opcounters[counter] - own > 0 ? [`shard${i}`] : []));
  }

  async function explainTargets(cmd: AnyDoc): Promise<string[]> {
    return targetedShards(await db.command({ explain: cmd, verbosity: 'queryPlanner' }));
  }

  async function perShardIds(filter: AnyDoc): Promise<unknown[][]> {
    return Promise.all(direct.map(async (c) => (await c.db('tgt').collection<AnyDoc>('c').find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id)));
  }

  withCluster({ shards: 3, routerArgs: setting.routerArgs }, async (f) => {
    ({ cluster, client } = f);
    db = client.db('tgt');
    coll = db.collection<AnyDoc>('c');
    const admin = client.db('admin');
    // Only the moves below may place chunks.
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'tgt', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'tgt.c', key: { k: 1 } });
    for (const k of SPLITS) await admin.command({ split: 'tgt.c', middle: { k } });
    for (let b = 0; b < DOCS; b += 500) await coll.insertMany(MODEL.slice(b, b + 500));
    for (const [k, to] of Object.entries(OWNER_OF_SPLIT)) {
      await admin.command({ moveChunk: 'tgt.c', find: { k: Number(k) }, to, _waitForDelete: true });
    }
    direct = cluster.shards.map((s) => f.connect(s.uri, { serverMonitoringMode: 'poll', heartbeatFrequencyMS: 600_000 }));
    await serverStatuses();
  });

  it('sends a range query only to the shards that own the range', async () => {
    const counts = await Promise.all(direct.map((c) => c.db('tgt').collection('c').countDocuments()));
    assert.deepEqual(counts, [1000, 1000, 1000], 'each shard holds exactly its own range after the moves');
    const cases: [AnyDoc, string[], number][] = [
      [{ k: { $gte: 200, $lt: 800 } }, ['shard0'], 600],
      [{ k: { $gte: 1200, $lt: 1800 } }, ['shard1'], 600],
      [{ k: { $gte: 1500, $lt: 2000 } }, ['shard1'], 500],
      [{ k: { $gte: 800, $lt: 1200 } }, ['shard0', 'shard1'], 400],
      [{ k: { $gte: 1500, $lte: 2000 } }, ['shard1', 'shard2'], 501],
      [{ k: { $in: [10, 2900] } }, ['shard0', 'shard2'], 2],
      [{ g: 3 }, ['shard0', 'shard1', 'shard2'], MODEL.filter((d) => d.g === 3).length],
    ];
    for (const [filter, shards, n] of cases) {
      assert.deepEqual(targetedShards(await coll.find(filter).explain('queryPlanner')), shards, JSON.stringify(filter));
      assert.deepEqual(await shardsReached('query', () => coll.find(filter).toArray()), shards, `find ${JSON.stringify(filter)} itself`);
      assert.equal((await coll.find(filter).toArray()).length, n);
    }
  });

  it('targets count, distinct, aggregate, update and delete by shard-key equality and broadcasts other filters', async () => {
    const all = ['shard0', 'shard1', 'shard2'];
    const reads: [string, (filter: AnyDoc) => AnyDoc][] = [
      ['count', (query) => ({ count: 'c', query })],
      ['distinct', (query) => ({ distinct: 'c', key: 'g', query })],
      ['aggregate', (query) => ({ aggregate: 'c', pipeline: [{ $match: query }, { $project: { g: 1 } }], cursor: {} })],
    ];
    for (const [name, command] of reads) {
      for (const [filter, shards] of [[{ k: 1234 }, ['shard1']], [{ k: 345 }, ['shard0']], [{ g: 3 }, all]] as const) {
        assert.deepEqual(await explainTargets(command(filter)), shards, `explain ${name} ${JSON.stringify(filter)}`);
        assert.deepEqual(await shardsReached('command', () => db.command(command(filter))), shards, `${name} ${JSON.stringify(filter)}`);
      }
    }
    assert.equal((await db.command({ count: 'c', query: { k: 2345 } })).n, 1);
    assert.deepEqual((await db.command({ distinct: 'c', key: 'g', query: { k: 2345 } })).values, [2345 % 7]);

    assert.deepEqual(await explainTargets({ update: 'c', updates: [{ q: { k: 1234 }, u: { $set: { touched: true } } }] }), ['shard1']);
    assert.deepEqual(await shardsReached('update', async () => {
      assert.equal((await coll.updateOne({ k: 1234 }, { $set: { touched: true } })).modifiedCount, 1);
    }), ['shard1']);
    assert.deepEqual(await explainTargets({ update: 'c', updates: [{ q: { g: 3 }, u: { $set: { seen: true } }, multi: true }] }), all);
    assert.deepEqual(await shardsReached('update', async () => {
      assert.equal((await coll.updateMany({ g: 3 }, { $set: { seen: true } })).modifiedCount, MODEL.filter((d) => d.g === 3).length);
    }), all);

    assert.deepEqual(await explainTargets({ delete: 'c', deletes: [{ q: { k: 2345 }, limit: 1 }] }), ['shard2']);
    assert.deepEqual(await shardsReached('delete', async () => {
      assert.equal((await coll.deleteOne({ k: 2345 })).deletedCount, 1);
    }), ['shard2']);
    await coll.insertOne(docOf(2345));
    assert.deepEqual(await explainTargets({ delete: 'c', deletes: [{ q: { g: -1 }, limit: 0 }] }), all);
    assert.deepEqual(await shardsReached('delete', async () => {
      assert.equal((await coll.deleteMany({ g: -1 })).deletedCount, 0);
    }), all);
    assert.equal(await coll.countDocuments(), DOCS);
  });

  it('merges sorted, skipped and limited finds and $group totals across the shards', async () => {
    const byS = (a: AnyDoc, b: AnyDoc): number => a.s.localeCompare(b.s);
    const project = { _id: 1, k: 1, g: 1, s: 1 };
    assert.deepEqual(await coll.find({}, { projection: project }).sort({ s: 1 }).batchSize(500).toArray(), sortedModel(byS));
    assert.deepEqual(
      await coll.find({ g: { $in: [1, 4] } }, { projection: project }).sort({ s: -1 }).skip(37).limit(250).batchSize(40).toArray(),
      sortedModel((a, b) => byS(b, a), (d) => d.g === 1 || d.g === 4).slice(37, 287),
    );
    assert.deepEqual(
      (await coll.find({}).sort({ k: -1 }).skip(990).limit(30).toArray()).map((d) => d.k),
      Array.from({ length: 30 }, (_, i) => DOCS - 1 - 990 - i),
      'the page crosses the boundary between shard2 and shard1',
    );
    assert.deepEqual(
      (await coll.find({}).sort({ g: 1, k: -1 }).skip(500).limit(100).toArray()).map((d) => d._id),
      sortedModel((a, b) => a.g - b.g || b.k - a.k).slice(500, 600).map((d) => d._id),
    );
    assert.deepEqual(
      await coll.aggregate([{ $sort: { s: 1 } }, { $skip: 100 }, { $limit: 50 }, { $project: project }]).toArray(),
      sortedModel(byS).slice(100, 150),
    );

    const totals = await coll.aggregate([
      { $group: { _id: '$g', n: { $sum: 1 }, total: { $sum: '$k' }, lo: { $min: '$k' }, hi: { $max: '$k' }, mean: { $avg: '$k' } } },
      { $sort: { _id: 1 } },
    ]).toArray();
    assert.deepEqual(totals, Array.from({ length: 7 }, (_, g) => {
      const ks = MODEL.filter((d) => d.g === g).map((d) => d.k as number);
      const total = ks.reduce((a, b) => a + b, 0);
      return { _id: g, n: ks.length, total, lo: Math.min(...ks), hi: Math.max(...ks), mean: total / ks.length };
    }));
    assert.deepEqual(await coll.aggregate([{ $group: { _id: null, n: { $sum: 1 }, total: { $sum: '$k' } } }]).toArray(), [{ _id: null, n: DOCS, total: (DOCS * (DOCS - 1)) / 2 }]);
    assert.deepEqual((await coll.distinct('g')).sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal((await db.command({ count: 'c', query: { g: 3 } })).n, MODEL.filter((d) => d.g === 3).length);
  });

  it('merges the shards\' sorted answers and distinct values under the command\'s collation', async () => {
    // One document on each shard; binary order is B < a < b, English order a < b < B.
    await coll.insertMany([{ _id: -20, k: 10, g: 9, cs: 'b' }, { _id: -21, k: 1500, g: 9, cs: 'a' }, { _id: -22, k: 2500, g: 9, cs: 'B' }]);
    try {
      const english = { locale: 'en' };
      assert.deepEqual((await coll.find({ g: 9 }).sort({ cs: 1 }).toArray()).map((d) => d.cs), ['B', 'a', 'b']);
      assert.deepEqual((await coll.find({ g: 9 }).sort({ cs: 1 }).collation(english).toArray()).map((d) => d.cs), ['a', 'b', 'B']);
      assert.deepEqual((await coll.aggregate([{ $match: { g: 9 } }, { $sort: { cs: 1 } }], { collation: english }).toArray()).map((d) => d.cs), ['a', 'b', 'B']);
      assert.deepEqual((await coll.distinct('cs', { g: 9 })).sort(), ['B', 'a', 'b']);
      assert.equal((await coll.distinct('cs', { g: 9 }, { collation: { locale: 'en', strength: 2 } })).length, 2, 'b and B are one value ignoring case');
    } finally {
      await coll.deleteMany({ g: 9 });
    }
  });

  it('kills the shard cursors of a cluster cursor closed with killCursors', async () => {
    const openOnShards = async (): Promise<number[]> => (await serverStatuses()).map((s) => s.metrics.cursor.open.total);
    const openOnRouter = async (): Promise<number> => (await client.db('admin').command({ serverStatus: 1 })).metrics.cursor.open.total;
    const shardsBefore = await openOnShards();
    const routerBefore = await openOnRouter();
    const cursor = coll.find({ g: { $ne: 3 } }).batchSize(5);
    assert.ok(await cursor.next());
    const id = cursor.id!;
    assert.ok(!id.isZero(), 'the cluster cursor stays open after its first batch');
    assert.deepEqual(await openOnShards(), shardsBefore.map((n) => n + 1), 'each shard keeps a cursor open behind it');
    assert.equal(await openOnRouter(), routerBefore + 1);

    await cursor.close();
    await waitFor('the shard cursors to be killed', async () => (await openOnShards()).every((n, i) => n === shardsBefore[i]), 30_000, 50);
    assert.equal(await openOnRouter(), routerBefore);
    await assert.rejects(db.command({ getMore: id, collection: 'c' }), { code: 43, codeName: 'CursorNotFound' });
  });

  it('stops an ordered insert across shards at its first error and reports the statement\'s own index', async () => {
    const fresh = (k: number): AnyDoc => ({ _id: 10_000 + k, k, g: -1 });
    // shard0, shard1, shard2, then a duplicate _id on shard1, then two more that must not land.
    const batch = [fresh(100.5), fresh(1100.5), fresh(2100.5), docOf(1500), fresh(200.5), fresh(2200.5)];
    const err = await coll.insertMany(batch, { ordered: true }).catch((e: unknown) => e);
    assert.ok(err instanceof MongoBulkWriteError, String(err));
    assert.deepEqual(indexesAndCodes(err), [[3, 11000]]);
    assert.equal(err.insertedCount, 3);
    assert.deepEqual(await perShardIds({ g: -1 }), [[10_100.5], [11_100.5], [12_100.5]], 'nothing after the error reached any shard');

    const unordered = await coll.insertMany(batch, { ordered: false }).catch((e: unknown) => e);
    assert.ok(unordered instanceof MongoBulkWriteError);
    assert.deepEqual(indexesAndCodes(unordered), [[0, 11000], [1, 11000], [2, 11000], [3, 11000]]);
    assert.equal(unordered.insertedCount, 2, 'an unordered batch goes on past its errors');
    assert.deepEqual(await perShardIds({ g: -1 }), [[10_100.5, 10_200.5], [11_100.5], [12_100.5, 12_200.5]]);
    await coll.deleteMany({ g: -1 });
  });

  it('runs findOneAndUpdate and findOneAndDelete without the shard key on the shard holding the document', async () => {
    const updated = await coll.findOneAndUpdate({ _id: 1700 }, { $set: { fam: 1 } }, { returnDocument: 'after' });
    assert.deepEqual(updated, { ...docOf(1700), fam: 1 });
    assert.deepEqual(await perShardIds({ fam: 1 }), [[], [1700], []]);

    // MongoDB 7.0 honours the sort across every shard: the greatest k with g 5 lives on shard2,
    // and shard0 holds matches too.
    const last = sortedModel((a, b) => b.k - a.k, (d) => d.g === 5)[0]!;
    const sorted = await coll.findOneAndUpdate({ g: 5 }, { $set: { fam: 2 } }, { sort: { k: -1 } });
    assert.deepEqual(sorted, last);
    assert.deepEqual(await perShardIds({ fam: 2 }), [[], [], [last._id]]);
    const first = await coll.findOneAndUpdate({ g: 5 }, { $set: { fam: 3 } }, { sort: { s: 1 } });
    assert.deepEqual(first, sortedModel((a, b) => a.s.localeCompare(b.s), (d) => d.g === 5)[0]);

    // The shards' first matches are compared under the command's collation: binary order puts
    // 'B' (shard2) first, English order 'b' (shard0).
    await coll.insertMany([{ _id: -10, k: 10, g: 9, cs: 'b' }, { _id: -11, k: 2500, g: 9, cs: 'B' }]);
    assert.equal((await coll.findOneAndUpdate({ g: 9 }, { $set: { fam: 5 } }, { sort: { cs: 1 } }))?._id, -11);
    assert.equal((await coll.findOneAndUpdate({ g: 9 }, { $set: { fam: 5 } }, { sort: { cs: 1 }, collation: { locale: 'en' } }))?._id, -10);
    await coll.deleteMany({ g: 9 });

    const removed = await coll.findOneAndDelete({ s: docOf(2700).s });
    assert.deepEqual(removed, docOf(2700));
    assert.deepEqual(await perShardIds({ _id: 2700 }), [[], [], []]);
    assert.equal(await coll.findOneAndDelete({ s: 'none' }), null);
    assert.equal(await coll.findOneAndUpdate({ _id: -5 }, { $set: { fam: 4 } }), null);
    assert.equal(await coll.countDocuments({ fam: 4 }), 0);
    await coll.insertOne(docOf(2700));
    await coll.updateMany({ fam: { $exists: true } }, { $unset: { fam: '' } });
  });
});
