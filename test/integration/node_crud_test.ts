import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, MongoServerError, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

describe('a docshard node used through the official driver', () => {
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    client = f.client;
    await client.connect();
    db = client.db('crud');
  });

  it('inserts and finds documents with filters, sort, skip, limit and projection', async () => {
    const c = db.collection<AnyDoc>('people');
    await c.insertMany([
      { _id: 1, name: 'ada', age: 36, tags: ['math', 'code'] },
      { _id: 2, name: 'grace', age: 85, tags: ['navy', 'code'] },
      { _id: 3, name: 'alan', age: 41, tags: ['math'] },
      { _id: 4, name: 'edsger', age: 72 },
    ]);
    const docs = await c.find({ tags: 'code' }).sort({ age: -1 }).toArray();
    assert.deepEqual(docs.map((d) => d._id), [2, 1]);
    const page = await c.find({}, { projection: { name: 1, _id: 0 } }).sort({ _id: 1 }).skip(1).limit(2).toArray();
    assert.deepEqual(page, [{ name: 'grace' }, { name: 'alan' }]);
    assert.equal(await c.countDocuments({ age: { $gt: 40 } }), 3);
    assert.equal(await c.estimatedDocumentCount(), 4);
    assert.deepEqual((await c.distinct('tags')).sort(), ['code', 'math', 'navy']);
  });

  it('iterates a large result through getMore batches', async () => {
    const c = db.collection<AnyDoc>('many');
    await c.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: i, v: i % 7 })));
    const all = await c.find({}, { batchSize: 50 }).toArray();
    assert.equal(all.length, 1000);
    assert.deepEqual(all.slice(0, 3).map((d) => d._id), [0, 1, 2]);
    const cursor = c.find({}, { batchSize: 10 });
    await cursor.next();
    await cursor.close();
  });

  it('updates with operators, upserts and replacements', async () => {
    const c = db.collection<AnyDoc>('upd');
    await c.insertMany([{ _id: 1, n: 1, arr: [1, 2, 3] }, { _id: 2, n: 2, arr: [] }]);
    const r1 = await c.updateOne({ _id: 1 }, { $inc: { n: 5 }, $push: { arr: 4 } as AnyDoc });
    assert.equal(r1.matchedCount, 1);
    assert.equal(r1.modifiedCount, 1);
    assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, n: 6, arr: [1, 2, 3, 4] });
    const r2 = await c.updateMany({}, { $set: { flag: true } });
    assert.equal(r2.modifiedCount, 2);
    const r3 = await c.updateOne({ _id: 9 }, { $set: { x: 1 } }, { upsert: true });
    assert.equal(r3.upsertedId, 9);
    await c.replaceOne({ _id: 2 }, { replaced: true });
    assert.deepEqual(await c.findOne({ _id: 2 }), { _id: 2, replaced: true });
    await c.updateOne({ _id: 1, arr: 2 }, { $set: { 'arr.$': 20 } });
    assert.deepEqual((await c.findOne({ _id: 1 }))!.arr, [1, 20, 3, 4]);
    const noop = await c.updateOne({ _id: 1 }, { $set: { n: 6 } });
    assert.equal(noop.modifiedCount, 0);
  });

  it('deletes and findAndModify return what MongoDB returns', async () => {
    const c = db.collection<AnyDoc>('fam');
    await c.insertMany([{ _id: 1, q: 1 }, { _id: 2, q: 2 }, { _id: 3, q: 3 }]);
    const before = await c.findOneAndUpdate({ _id: 1 }, { $set: { q: 10 } });
    assert.deepEqual(before, { _id: 1, q: 1 });
    const afterDoc = await c.findOneAndUpdate({ _id: 2 }, { $set: { q: 20 } }, { returnDocument: 'after' });
    assert.deepEqual(afterDoc, { _id: 2, q: 20 });
    const removed = await c.findOneAndDelete({ q: 3 });
    assert.deepEqual(removed, { _id: 3, q: 3 });
    const del = await c.deleteMany({ q: { $gt: 5 } });
    assert.equal(del.deletedCount, 2);
    assert.equal(await c.countDocuments(), 0);
  });

  it('enforces unique indexes with DuplicateKey, keyPattern and keyValue', async () => {
    const c = db.collection<AnyDoc>('uniq');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ email: 'a@x' });
    await assert.rejects(c.insertOne({ email: 'a@x' }), (err: unknown) => {
      assert.ok(err instanceof MongoServerError);
      assert.equal(err.code, 11000);
      assert.deepEqual(err.keyPattern, { email: 1 });
      assert.deepEqual(err.keyValue, { email: 'a@x' });
      return true;
    });
    await assert.rejects(c.insertOne({ _id: (await c.findOne({}))!._id }), (err: unknown) => (err as MongoServerError).code === 11000);
    const bulk = await c.insertMany([{ email: 'b' }, { email: 'b' }, { email: 'c' }], { ordered: false }).catch((e) => e);
    assert.equal(bulk.code, 11000);
    assert.equal(bulk.writeErrors.length, 1);
    assert.equal(bulk.writeErrors[0].index, 1);
    assert.equal(await c.countDocuments(), 3);
  });

  it('explain shows IXSCAN with keys examined for an indexed query and COLLSCAN otherwise', async () => {
    const c = db.collection<AnyDoc>('explained');
    await c.insertMany(Array.from({ length: 200 }, (_, i) => ({ _id: i, k: i, other: i % 3 })));
    await c.createIndex({ k: 1 });
    const ix = await c.find({ k: { $gte: 10, $lt: 20 } }).explain('executionStats');
    const plan = JSON.stringify(ix.queryPlanner.winningPlan);
    assert.match(plan, /IXSCAN/);
    assert.equal(ix.executionStats.nReturned, 10);
    assert.equal(ix.executionStats.totalKeysExamined, 10);
    assert.equal(ix.executionStats.totalDocsExamined, 10);
    const cs = await c.find({ other: 1 }).explain('executionStats');
    assert.match(JSON.stringify(cs.queryPlanner.winningPlan), /COLLSCAN/);
    assert.equal(cs.executionStats.totalDocsExamined, 200);
    const sorted = await c.find({}).sort({ k: -1 }).limit(3).toArray();
    assert.deepEqual(sorted.map((d) => d.k), [199, 198, 197]);
    const inq = await c.find({ k: { $in: [5, 50, 150] } }).explain('executionStats');
    assert.equal(inq.executionStats.totalKeysExamined, 3);
  });

  it('runs aggregation pipelines with $group, $lookup, $unwind and $facet', async () => {
    const orders = db.collection<AnyDoc>('orders');
    const items = db.collection<AnyDoc>('items');
    await items.insertMany([{ _id: 'a', price: 2 }, { _id: 'b', price: 5 }]);
    await orders.insertMany([
      { _id: 1, cust: 'x', lines: [{ item: 'a', qty: 2 }, { item: 'b', qty: 1 }] },
      { _id: 2, cust: 'y', lines: [{ item: 'b', qty: 3 }] },
      { _id: 3, cust: 'x', lines: [{ item: 'a', qty: 1 }] },
    ]);
    const totals = await orders.aggregate([
      { $unwind: '$lines' },
      { $lookup: { from: 'items', localField: 'lines.item', foreignField: '_id', as: 'item' } },
      { $unwind: '$item' },
      { $group: { _id: '$cust', total: { $sum: { $multiply: ['$lines.qty', '$item.price'] } }, n: { $sum: 1 } } },
      { $sort: { _id: 1 } },
    ]).toArray();
    assert.deepEqual(totals, [{ _id: 'x', total: 11, n: 3 }, { _id: 'y', total: 15, n: 1 }]);
    const [facets] = await orders.aggregate([{ $facet: { count: [{ $count: 'n' }], custs: [{ $sortByCount: '$cust' }] } }]).toArray();
    assert.deepEqual(facets, { count: [{ n: 3 }], custs: [{ _id: 'x', count: 2 }, { _id: 'y', count: 1 }] });
  });

  it('manages collections and indexes: create, list, rename, drop, stats', async () => {
    const d = client.db('ddl');
    await d.createCollection('a');
    await assert.rejects(d.createCollection('a'), (e: unknown) => (e as MongoServerError).code === 48);
    await d.collection<AnyDoc>('a').insertOne({ x: 1 });
    await d.collection<AnyDoc>('a').createIndex({ x: -1 }, { name: 'x_desc' });
    const idx = await d.collection<AnyDoc>('a').listIndexes().toArray();
    assert.deepEqual(idx.map((i) => i.name), ['_id_', 'x_desc']);
    await d.renameCollection('a', 'b');
    const names = (await d.listCollections().toArray()).map((c) => c.name);
    assert.deepEqual(names, ['b']);
    const stats = await d.command({ collStats: 'b' });
    assert.equal(stats.count, 1);
    const dbs = await client.db('admin').admin().listDatabases();
    assert.ok(dbs.databases.some((x) => x.name === 'ddl'));
    await d.collection<AnyDoc>('b').dropIndex('x_desc');
    assert.equal(await d.collection<AnyDoc>('b').drop(), true);
    assert.equal(await d.collection<AnyDoc>('b').drop().catch(() => false), false);
    await d.dropDatabase();
  });

  it('caps a capped collection by document count and by size, dropping the oldest documents', async () => {
    const d = client.db('capped');
    await d.createCollection('log', { capped: true, size: 4096, max: 3 });
    const log = d.collection<AnyDoc>('log');
    for (let i = 0; i < 5; i++) await log.insertOne({ _id: i });
    await log.insertMany([{ _id: 5 }, { _id: 6 }]);
    assert.deepEqual((await log.find().toArray()).map((x) => x._id), [4, 5, 6]);
    assert.equal(await log.isCapped(), true);
    const stats = await d.command({ collStats: 'log' });
    assert.deepEqual([stats.capped, stats.max, stats.maxSize, stats.count], [true, 3, 4096, 3]);

    await d.createCollection('bytes', { capped: true, size: 5000 });
    const bytes = d.collection<AnyDoc>('bytes');
    for (let i = 0; i < 100; i++) await bytes.insertOne({ _id: i, pad: 'x'.repeat(100) });
    const after = await d.command({ collStats: 'bytes' });
    assert.equal(after.maxSize, 5120, 'the size is raised to a multiple of 256');
    assert.ok(after.size <= 5120 && after.count < 100, `${after.count} documents, ${after.size} bytes`);
    assert.equal((await bytes.find().limit(1).toArray())[0]._id, 100 - after.count, 'the newest documents are kept');
    const tooBig = await bytes.insertOne({ _id: 'big', pad: 'y'.repeat(6000) }).catch((e) => e);
    assert.equal(tooBig.code, 2);
    assert.equal(tooBig.message, 'object to insert exceeds cappedMaxSize');

    const noSize = await d.createCollection('nosize', { capped: true }).catch((e) => e);
    assert.equal(noSize.code, 72);
    assert.equal((await d.collection<AnyDoc>('plain').insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })))).insertedCount, 10);
    assert.equal((await d.command({ collStats: 'plain' })).capped, false);
    await d.dropDatabase();
  });

  it('validates a collection: records, index entries and counts agree', async () => {
    const d = client.db('validated');
    const coll = d.collection<AnyDoc>('c');
    await coll.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, tags: [`t${i}`, 'all'] })));
    await coll.createIndex({ tags: 1 });
    await coll.deleteMany({ _id: { $lt: 10 } });
    const report = await d.command({ validate: 'c', full: true });
    assert.equal(report.valid, true);
    assert.equal(report.nrecords, 40);
    assert.deepEqual(report.keysPerIndex, { _id_: 40, tags_1: 80 });
    assert.deepEqual([report.errors, report.missingIndexEntries, report.extraIndexEntries, report.corruptRecords], [[], [], [], []]);
    const missing = await d.command({ validate: 'nothere' }).catch((e) => e);
    assert.equal(missing.code, 26);
    await d.dropDatabase();
  });

  it('answers errors with MongoDB codes and keeps serving', async () => {
    const admin = client.db('admin');
    await assert.rejects(admin.command({ noSuchCommand: 1 }), (e: unknown) => (e as MongoServerError).code === 59 && (e as MongoServerError).codeName === 'CommandNotFound');
    await assert.rejects(db.command({ find: 'x', filter: 'oops' }), (e: unknown) => (e as MongoServerError).code === 14);
    await assert.rejects(db.command({ find: 'x', filter: { a: { $bogus: 1 } } }), (e: unknown) => (e as MongoServerError).code === 2);
    await assert.rejects(db.command({ atlasVersion: 1 }), (e: unknown) => (e as MongoServerError).code === 59);
    const hello = await admin.command({ hello: 1 });
    assert.equal(hello.isWritablePrimary, true);
    assert.equal(hello.logicalSessionTimeoutMinutes, 30);
    assert.equal(hello.maxBsonObjectSize, 16 * 1024 * 1024);
    assert.equal(hello.maxWriteBatchSize, 100000);
    const info = await admin.command({ buildInfo: 1 });
    assert.deepEqual(info.versionArray.slice(0, 2), [7, 0]);
    const cursor = await db.command({ find: 'many', batchSize: 2 });
    assert.ok(cursor.cursor.id instanceof Long);
  });
  // As mongod lists them: a request still waiting on the node (an awaitData getMore) is in
  // currentOp, and in $currentOp, with its connection, operation, namespace and command.
  it('lists the requests in flight in currentOp and $currentOp', async () => {
    await db.createCollection('waits', { capped: true, size: 4096 });
    await db.collection<AnyDoc>('waits').insertOne({ _id: 1 });
    const opened = await db.command({ find: 'waits', tailable: true, awaitData: true, batchSize: 1 });
    const id = (opened.cursor as AnyDoc).id as Long;
    const other = new MongoClient(client.options.hosts.map((h) => `mongodb://${h.toString()}`)[0]!);
    try {
      const waiting = db.command({ getMore: id, collection: 'waits', maxTimeMS: 3000 });
      waiting.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const admin = other.db('admin');
      const inprog = (await admin.command({ currentOp: 1 })).inprog as AnyDoc[];
      const getMore = inprog.find((op) => op.op === 'getmore');
      assert.ok(getMore, JSON.stringify(inprog));
      assert.equal(getMore.ns, 'crud.waits');
      assert.equal(String(getMore.command.getMore), id.toString());
      assert.equal(getMore.active, true);
      assert.match(String(getMore.desc), /^conn\d+$/);
      assert.equal(typeof getMore.opid, 'number');
      assert.equal(typeof getMore.host, 'string');
      const staged = await admin.aggregate<AnyDoc>([{ $currentOp: { allUsers: true } }, { $match: { op: 'getmore', ns: 'crud.waits' } }]).toArray();
      assert.equal(staged.length, 1);
      await waiting;
      const after = (await admin.command({ currentOp: 1 })).inprog as AnyDoc[];
      assert.equal(after.filter((op) => op.op === 'getmore').length, 0, 'a request that answered is gone');
    } finally {
      await other.close();
    }
  });
});
