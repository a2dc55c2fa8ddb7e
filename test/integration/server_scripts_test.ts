import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Code, type Db, type MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 35, server-side JavaScript: $where, $function, $accumulator and mapReduce with the examples
// of MongoDB's manual pages (our own data, the same shapes), on one node and through a router over
// collections sharded on another key; scripts that loop or allocate without end, syntax errors and
// $where where MongoDB refuses it answer MongoDB's errors, and the server keeps serving.
const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

const PLAYERS = [
  { _id: 1, k: 1, name: 'Ada Quill', scores: [7, 3, 9] },
  { _id: 2, k: 2, name: 'Bo Marsh', scores: [4, 4, 10] },
  { _id: 3, k: 3, name: 'Cy Reyes', scores: [8, 9, 2] },
  { _id: 4, k: 4, name: 'Di Okafor', scores: [1, 6, 5] },
  { _id: 5, k: 5, name: 'Ed Lunde', scores: [10, 10, 10] },
];

const BOOKS = [
  { _id: 1, k: 1, title: 'Salt Roads', author: 'Mara Voss', copies: 3 },
  { _id: 2, k: 2, title: 'Glass Orchard', author: 'Mara Voss', copies: 6 },
  { _id: 3, k: 3, title: 'The Quiet Mill', author: 'Tomas Brin', copies: 1 },
  { _id: 4, k: 4, title: 'North of Noon', author: 'Mara Voss', copies: 9 },
  { _id: 5, k: 5, title: 'Lantern Days', author: 'Tomas Brin', copies: 5 },
];

const day = (d: string): Date => new Date(`${d}T00:00:00Z`);
const ORDERS = [
  { _id: 1, k: 1, cust_id: 'Kim Ode', ord_date: day('2021-05-02'), price: 30, items: [{ sku: 'pears', qty: 4, price: 2.5 }, { sku: 'figs', qty: 2, price: 10 }], status: 'A' },
  { _id: 2, k: 2, cust_id: 'Lu Pham', ord_date: day('2021-05-03'), price: 12, items: [{ sku: 'pears', qty: 2, price: 2.5 }, { sku: 'dates', qty: 1, price: 7 }], status: 'A' },
  { _id: 3, k: 3, cust_id: 'Kim Ode', ord_date: day('2021-05-20'), price: 40, items: [{ sku: 'figs', qty: 4, price: 10 }], status: 'D' },
  { _id: 4, k: 4, cust_id: 'Mo Said', ord_date: day('2021-04-28'), price: 15, items: [{ sku: 'dates', qty: 2, price: 7.5 }], status: 'A' },
  { _id: 5, k: 5, cust_id: 'Lu Pham', ord_date: day('2021-05-11'), price: 25, items: [{ sku: 'pears', qty: 10, price: 2.5 }], status: 'A' },
  { _id: 6, k: 6, cust_id: 'Kim Ode', ord_date: day('2021-06-01'), price: 20, items: [{ sku: 'dates', qty: 1, price: 7 }, { sku: 'pears', qty: 5, price: 2.6 }], status: 'A' },
];

const LIMITS = ['--setParameter', 'internalQueryJavaScriptFnTimeoutMillis=2500', '--setParameter', 'internalQueryJavaScriptHeapSizeLimitMB=32'];

const byId = (docs: AnyDoc[]): AnyDoc[] => [...docs].sort((a, b) => String(a._id).localeCompare(String(b._id)));

async function refused(work: Promise<unknown>, code: number, message?: RegExp): Promise<void> {
  await assert.rejects(work, (err: { code?: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

describe('server-side JavaScript: $where, $function, $accumulator, mapReduce', () => {
  const targets: [string, () => Db][] = [];
  let noScriptingNode: () => Db;
  let noScriptingRouter: () => Db;

  withProcesses(async (p) => {
    const [node, cluster, bare] = await Promise.all([
      p.node({ extraArgs: LIMITS }),
      p.cluster({ shards: 2, shardArgs: LIMITS }),
      p.node({ extraArgs: ['--noscripting'] }),
    ]);
    const plainRouter = await p.router(cluster.config.port, ['--noscripting']);
    const direct: MongoClient = p.connect(node.uri);
    const routed: MongoClient = p.connect(cluster.routers[0]!.uri);
    const admin = routed.db('admin');
    await admin.command({ enableSharding: 'js', primaryShard: 'shard0' });
    for (const coll of ['players', 'books', 'orders']) {
      await admin.command({ shardCollection: `js.${coll}`, key: { k: 1 } });
      await admin.command({ split: `js.${coll}`, middle: { k: 3 } });
      await admin.command({ moveChunk: `js.${coll}`, find: { k: 5 }, to: 'shard1', _waitForDelete: true });
    }
    for (const db of [direct.db('js'), routed.db('js')]) {
      await db.collection<AnyDoc>('players').insertMany(PLAYERS);
      await db.collection<AnyDoc>('books').insertMany(BOOKS);
      await db.collection<AnyDoc>('orders').insertMany(ORDERS);
    }
    const bareClient = p.connect(bare.uri);
    await bareClient.db('js').collection<AnyDoc>('players').insertMany(PLAYERS);
    noScriptingNode = () => bareClient.db('js');
    noScriptingRouter = () => p.connect(plainRouter.uri).db('js');
    targets.push(['one node', () => direct.db('js')], ['a router over two shards', () => routed.db('js')]);
  });

  for (const [where, at] of [['one node', 0], ['a router over two shards', 1]] as const) {
    const db = (): Db => targets[at]![1]();

    it(`on ${where}: $where finds by a function or a string of the document, as this and as obj`, async () => {
      const players = db().collection<AnyDoc>('players');
      const hash = md5('Di Okafor');
      assert.deepEqual((await players.find({ $where: new Code(`function() { return hex_md5(this.name) == "${hash}"; }`) } as AnyDoc).toArray()).map((d) => d._id), [4]);
      assert.deepEqual((await players.find({ $where: 'obj.scores.length == 3 && this.scores[2] == 10' }).sort({ _id: 1 }).toArray()).map((d) => d._id), [2, 5]);
      assert.deepEqual((await players.find({ k: { $gte: 2 }, $where: 'return this.scores[0] > 5' }).sort({ _id: 1 }).toArray()).map((d) => d._id), [3, 5]);
      assert.equal(await players.countDocuments({ k: { $lte: 3 } }), 3);
      await refused(players.countDocuments({ $where: 'true' }), 2, /\$where is not allowed in this context/);
      assert.equal(await db().command({ count: 'players', query: { $where: 'this.k % 2 == 1' } }).then((r) => r.n), 3);
      // MongoDB's server-side sleep(ms), which the driver specifications' tests hold connections with.
      const started = Date.now();
      assert.equal((await players.find({ k: 1, $where: 'sleep(300) || true' }).toArray()).length, 1);
      assert.ok(Date.now() - started >= 300, 'the script waited');
    });

    it(`on ${where}: $where in updates and deletes, and the shell's types of the document`, async () => {
      const coll = db().collection<AnyDoc>(`typed_${at}`);
      await coll.insertMany([{ _id: 1, k: 1, when: day('2022-01-01') }, { _id: 2, k: 2, when: day('2023-01-01') }]);
      const r = await coll.updateMany({ $where: 'this.when instanceof Date && this.when.getUTCFullYear() == 2023' }, { $set: { late: true } });
      assert.equal(r.modifiedCount, 1);
      assert.deepEqual((await coll.distinct('_id', { $where: 'this.when.getTime() > 0' })).sort(), [1, 2]);
      const found = await coll.findOneAndUpdate({ k: 1, $where: 'obj.when.getUTCMonth() == 0' }, { $set: { seen: true } }, { returnDocument: 'after' });
      assert.equal(found?.seen, true);
      assert.deepEqual((await coll.find({ late: true }).toArray()).map((d) => d._id), [2]);
      const d = await coll.deleteMany({ $where: 'this._id == 1' });
      assert.equal(d.deletedCount, 1);
      assert.equal(await coll.countDocuments(), 1);
    });

    it(`on ${where}: $function in $addFields and in $expr`, async () => {
      const hash = md5('Bo Marsh');
      const out = await db().collection<AnyDoc>('players').aggregate([
        { $addFields: {
          isFound: { $function: { body: new Code(`function(name) { return hex_md5(name) == "${hash}"; }`), args: ['$name'], lang: 'js' } },
          message: { $function: { body: 'function(name, scores) { let total = Array.sum(scores); return `Hi ${name}, you scored ${total}.`; }', args: ['$name', '$scores'], lang: 'js' } },
        } },
        { $project: { _id: 1, isFound: 1, message: 1 } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(out, PLAYERS.map((p) => ({ _id: p._id, isFound: p.name === 'Bo Marsh', message: `Hi ${p.name}, you scored ${p.scores.reduce((a, b) => a + b, 0)}.` })));
      const found = await db().collection<AnyDoc>('players').find({ $expr: { $function: { body: 'function(s) { return s.indexOf(10) >= 0; }', args: ['$scores'], lang: 'js' } } }).sort({ _id: 1 }).toArray();
      assert.deepEqual(found.map((d) => d._id), [2, 5]);
    });

    it(`on ${where}: $accumulator computes each author's average copies, and initArgs starts each group`, async () => {
      const avg = await db().collection<AnyDoc>('books').aggregate([
        { $group: { _id: '$author', avgCopies: { $accumulator: {
          init: 'function() { return { count: 0, sum: 0 }; }',
          accumulate: 'function(state, copies) { return { count: state.count + 1, sum: state.sum + copies }; }',
          accumulateArgs: ['$copies'],
          merge: 'function(a, b) { return { count: a.count + b.count, sum: a.sum + b.sum }; }',
          finalize: 'function(state) { return state.sum / state.count; }',
          lang: 'js',
        } } } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(avg, [{ _id: 'Mara Voss', avgCopies: 6 }, { _id: 'Tomas Brin', avgCopies: 3 }]);
      const titles = await db().collection<AnyDoc>('books').aggregate([
        { $group: { _id: '$author', shelf: { $accumulator: {
          init: 'function(author) { return { label: author.split(" ")[1].toUpperCase(), titles: [] }; }',
          initArgs: ['$author'],
          accumulate: 'function(state, title) { state.titles.push(title); return state; }',
          accumulateArgs: ['$title'],
          merge: 'function(a, b) { return { label: a.label, titles: a.titles.concat(b.titles) }; }',
          finalize: 'function(state) { return state.label + ": " + state.titles.sort().join(", "); }',
          lang: 'js',
        } } } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(titles, [
        { _id: 'Mara Voss', shelf: 'VOSS: Glass Orchard, North of Noon, Salt Roads' },
        { _id: 'Tomas Brin', shelf: 'BRIN: Lantern Days, The Quiet Mill' },
      ]);
    });

    it(`on ${where}: $function after a $group, where a router merges the groups`, async () => {
      const out = await db().collection<AnyDoc>('books').aggregate([
        { $group: { _id: '$author', copies: { $sum: '$copies' } } },
        { $addFields: { label: { $function: { body: 'function(author, n) { return author.toUpperCase() + " " + n; }', args: ['$_id', '$copies'], lang: 'js' } } } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(out, [{ _id: 'Mara Voss', copies: 18, label: 'MARA VOSS 18' }, { _id: 'Tomas Brin', copies: 6, label: 'TOMAS BRIN 6' }]);
    });

    it(`on ${where}: mapReduce totals each customer's orders, inline and into a collection`, async () => {
      const map = new Code('function() { emit(this.cust_id, this.price); }');
      const reduce = new Code('function(customer, prices) { return Array.sum(prices); }');
      const expected = [{ _id: 'Kim Ode', value: 90 }, { _id: 'Lu Pham', value: 37 }, { _id: 'Mo Said', value: 15 }];
      const inline = await db().command({ mapReduce: 'orders', map, reduce, out: { inline: 1 } });
      assert.equal(inline.ok, 1);
      assert.deepEqual(byId(inline.results as AnyDoc[]), expected);
      const named = await db().command({ mapReduce: 'orders', map, reduce, out: `totals_${at}` });
      assert.deepEqual({ result: named.result, ok: named.ok }, { result: `totals_${at}`, ok: 1 });
      assert.deepEqual(byId(await db().collection<AnyDoc>(`totals_${at}`).find().toArray()), expected);
    });

    it(`on ${where}: mapReduce with query, finalize, scope, and the merge and reduce outputs`, async () => {
      const map = new Code('function() { for (const item of this.items) emit(item.sku, { count: 1, qty: item.qty }); }');
      const reduce = new Code('function(sku, values) { const out = { count: 0, qty: 0 }; for (const v of values) { out.count += v.count; out.qty += v.qty; } return out; }');
      const finalize = new Code('function(sku, v) { v.avg = Math.round(v.qty / v.count * scale) / scale; return v; }');
      const base = { mapReduce: 'orders', map, reduce, finalize, scope: { scale: 100 }, query: { ord_date: { $gte: day('2021-05-01') } } };
      const inline = await db().command({ ...base, out: { inline: 1 } });
      const expected = [
        { _id: 'dates', value: { count: 2, qty: 2, avg: 1 } },
        { _id: 'figs', value: { count: 2, qty: 6, avg: 3 } },
        { _id: 'pears', value: { count: 4, qty: 21, avg: 5.25 } },
      ];
      assert.deepEqual(byId(inline.results as AnyDoc[]), expected);
      const target = `skus_${at}`;
      await db().collection<AnyDoc>(target).insertMany([{ _id: 'figs', value: { count: 10, qty: 10, avg: 1 } }, { _id: 'limes', value: { count: 1, qty: 1, avg: 1 } }]);
      const merged = await db().command({ ...base, out: { merge: target } });
      assert.equal(merged.result, target);
      assert.deepEqual(byId(await db().collection<AnyDoc>(target).find().toArray()), [...expected, { _id: 'limes', value: { count: 1, qty: 1, avg: 1 } }].sort((a, b) => a._id.localeCompare(b._id)));
      const reduced = await db().command({ ...base, query: { cust_id: 'Mo Said' }, out: { reduce: target, db: 'js' } });
      assert.deepEqual(reduced.result, { db: 'js', collection: target });
      const dates = await db().collection<AnyDoc>(target).findOne({ _id: 'dates' as never });
      assert.deepEqual(dates?.value, { count: 3, qty: 4, avg: 1.33 });
    });

    it(`on ${where}: mapReduce over a collection or database that does not exist answers no results`, async () => {
      const mr = { map: 'function() { emit(1, 1); }', reduce: 'function(k, v) { return v.length; }', out: { inline: 1 } };
      const answer = ({ results, ok }: AnyDoc): AnyDoc => ({ results, ok });
      assert.deepEqual(answer(await db().command({ mapReduce: 'nothing_here', ...mr })), { results: [], ok: 1 });
      const other = db().client.db(`no_such_db_${at}`);
      assert.deepEqual(answer(await other.command({ mapReduce: 'nothing_here', ...mr })), { results: [], ok: 1 });
    });

    it(`on ${where}: mapReduce with sort and limit maps only the first documents`, async () => {
      const r = await db().command({
        mapReduce: 'orders', map: 'function() { emit("n", 1); }', reduce: 'function(k, v) { return Array.sum(v); }',
        sort: { price: -1 }, limit: 3, out: { inline: 1 },
      });
      assert.deepEqual(r.results, [{ _id: 'n', value: 3 }]);
      const top = await db().command({
        mapReduce: 'orders', map: 'function() { emit("max", this.price); }', reduce: 'function(k, v) { return Math.min.apply(null, v); }',
        sort: { price: -1 }, limit: 2, out: { inline: 1 },
      });
      assert.deepEqual(top.results, [{ _id: 'max', value: 30 }], 'the smallest of the two largest prices');
    });

    it(`on ${where}: a script that loops forever fails with JSInterpreterFailure, or MaxTimeMSExpired under maxTimeMS, and the server keeps serving`, async () => {
      const players = db().collection<AnyDoc>('players');
      await refused(players.find({ $where: 'while (true) {} ' }).toArray(), 139);
      await refused(players.find({ $where: 'function() { while (true) {} }' }).maxTimeMS(300).toArray(), 50);
      await refused(players.aggregate([{ $project: { x: { $function: { body: 'function() { for (;;) {} }', args: [], lang: 'js' } } } }]).toArray(), 139);
      assert.equal((await db().command({ count: 'players', query: { $where: 'this.k < 3' } })).n, 2);
    });

    it(`on ${where}: a script that allocates without bound fails with JSInterpreterFailure, and scripts run again after it`, async () => {
      const players = db().collection<AnyDoc>('players');
      await refused(players.find({ $where: 'const a = []; while (true) a.push(new Array(1e6).fill(Math.random())); ' }).toArray(), 139, /memory/i);
      // V8 aborts the process of an isolate whose Map outgrows its heap: the node's script host.
      // (On a loaded machine its time limit may come first: 139 either way.)
      await refused(players.find({ $where: 'const m = new Map(); for (let i = 0; ; i++) m.set(i, i); ' }).toArray(), 139);
      assert.deepEqual((await players.find({ $where: 'this.k == 5' }).toArray()).map((d) => d._id), [5]);
    });

    it(`on ${where}: a syntax error, bad $function and $accumulator specifications, and $where where MongoDB refuses it`, async () => {
      const players = db().collection<AnyDoc>('players');
      await refused(players.find({ $where: 'function( {' }).toArray(), 139, /SyntaxError/);
      await refused(players.find({ $where: 5 } as AnyDoc).toArray(), 2);
      await refused(players.aggregate([{ $match: { $where: 'true' } }]).toArray(), 2, /\$where is not allowed in this context/);
      await refused(players.find({ scores: { $elemMatch: { $where: 'true' } } }).toArray(), 2);
      await refused(players.aggregate([{ $project: { x: { $function: { args: [], lang: 'js' } } } }]).toArray(), 31261);
      await refused(players.aggregate([{ $project: { x: { $function: { body: 'function() {}', lang: 'js' } } } }]).toArray(), 31263);
      await refused(players.aggregate([{ $project: { x: { $function: { body: 'function() {}', args: [], lang: 'python' } } } }]).toArray(), 31419);
      await refused(players.aggregate([{ $group: { _id: null, x: { $accumulator: { init: 'function() {}', accumulate: 'function() {}', lang: 'js', accumulateArgs: [] } } } }]).toArray(), 4544709);
      await refused(db().command({ mapReduce: 'players', map: 'function() {}', reduce: 'function() {}' }), 40414);
      await refused(db().createCollection(`validated_${at}`, { validator: { $where: 'true' } }), 2);
      await refused(db().createCollection(`validated_${at}`, { validator: { $expr: { $function: { body: 'function() { return true; }', args: [], lang: 'js' } } } }), 4660800);
      assert.equal(await players.countDocuments(), 5);
    });
  }

  it('through a router, mapReduce refuses to write into a sharded collection', async () => {
    const db = targets[1]![1]();
    await db.client.db('admin').command({ shardCollection: 'js.sharded_out', key: { _id: 1 } });
    await refused(db.command({ mapReduce: 'orders', map: 'function() { emit(this.cust_id, 1); }', reduce: 'function(k, v) { return Array.sum(v); }', out: { merge: 'sharded_out' } }), 238);
    assert.equal(await db.collection('sharded_out').countDocuments(), 0);
  });

  it('a node with --noscripting refuses every script with its error, and serves the rest', async () => {
    const players = noScriptingNode().collection<AnyDoc>('players');
    await refused(players.find({ $where: 'true' }).toArray(), 2, /no globalScriptEngine in \$where parsing/);
    await refused(players.aggregate([{ $project: { x: { $function: { body: 'function() { return 1; }', args: [], lang: 'js' } } } }]).toArray(), 31264);
    await refused(noScriptingNode().command({ mapReduce: 'players', map: 'function() {}', reduce: 'function() {}', out: { inline: 1 } }), 31264);
    assert.equal(await players.countDocuments({ k: { $gt: 2 } }), 3);
  });

  it('a router with --noscripting refuses $function, $accumulator and mapReduce, and passes $where to the shards', async () => {
    const db = noScriptingRouter();
    await refused(db.collection('players').aggregate([{ $project: { x: { $function: { body: 'function() { return 1; }', args: [], lang: 'js' } } } }]).toArray(), 31264);
    await refused(db.collection('books').aggregate([{ $group: { _id: null, x: { $accumulator: { init: 'function() { return 0; }', accumulate: 'function(s) { return s; }', accumulateArgs: [], merge: 'function(a) { return a; }', lang: 'js' } } } }]).toArray(), 31264);
    await refused(db.command({ mapReduce: 'orders', map: 'function() {}', reduce: 'function() {}', out: { inline: 1 } }), 31264);
    assert.deepEqual((await db.collection<AnyDoc>('players').find({ $where: 'this.k == 4' }).toArray()).map((d) => d._id), [4]);
  });
});
