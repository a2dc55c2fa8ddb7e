import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, MongoClient, MongoServerError, UUID, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// find's returnKey, showRecordId and tailable/awaitData options, and the rest of the options a find
// takes, each honoured or refused: on a node and through a router to a 2-shard cluster.

async function failure(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MongoServerError) return err;
    throw err;
  }
  assert.fail('expected the command to fail');
}

async function refused(p: Promise<unknown>, code: number, message?: string): Promise<void> {
  const err = await failure(p);
  assert.equal(err.code, code, err.message);
  if (message !== undefined) assert.equal(err.message, message);
}

// Cursor ids stay Longs (a small one would come back a number, which getMore refuses).
function run(db: Db, cmd: AnyDoc): Promise<AnyDoc> {
  return db.command(cmd, { promoteLongs: false });
}

const NOT_CAPPED = 'error processing query: ns=opts.plainTree: $and\nSort: {}\nProj: {}\n tailable cursor requested on non capped collection';

// A tailable awaitData cursor opened by the driver gets, in its stream, documents inserted after it
// was opened; its getMore waits for them (maxAwaitTimeMS), woken by the insert, not its timeout.
async function tailsLaterInserts(db: Db, name: string): Promise<void> {
  await db.createCollection(name, { capped: true, size: 64 * 1024 });
  const coll = db.collection<AnyDoc>(name);
  await coll.insertOne({ _id: 0 });
  const cursor = coll.find({}, { tailable: true, awaitData: true, maxAwaitTimeMS: 10_000, batchSize: 2 });
  const stream = cursor.stream();
  const seen: unknown[] = [];
  const got = new Promise<void>((resolve, reject) => {
    stream.on('data', (doc: AnyDoc) => {
      seen.push(doc._id);
      if (seen.length === 4) resolve();
    });
    stream.on('error', reject);
  });
  while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
  // The stream's getMore is waiting now; these arrive while it does.
  await new Promise((r) => setTimeout(r, 200));
  const insertedAt = Date.now();
  await coll.insertOne({ _id: 1 });
  await coll.insertMany([{ _id: 2 }, { _id: 3 }]);
  await got;
  assert.ok(Date.now() - insertedAt < 5_000, 'the waiting getMore was woken by the insert');
  assert.deepEqual(seen, [0, 1, 2, 3]);
  await cursor.close();
}

// An awaitData getMore with nothing new waits its maxTimeMS, then answers an empty batch and keeps
// the cursor; once the capped collection has deleted the document the cursor stopped at, the next
// getMore fails with CappedPositionLost and the cursor is gone.
async function awaitsThenLosesItsPosition(db: Db, name: string): Promise<void> {
  await db.createCollection(name, { capped: true, size: 4096, max: 3 });
  const coll = db.collection<AnyDoc>(name);
  await coll.insertMany([{ _id: 1 }, { _id: 2 }]);
  const first = await run(db, { find: name, tailable: true, awaitData: true });
  assert.deepEqual(first.cursor.firstBatch, [{ _id: 1 }, { _id: 2 }]);
  const id = first.cursor.id as Long;
  assert.ok(!id.isZero(), 'open at the end of the data');
  const started = Date.now();
  const empty = await run(db, { getMore: id, collection: name, maxTimeMS: 300 });
  assert.ok(Date.now() - started >= 250, 'waited for its maxTimeMS');
  assert.deepEqual(empty.cursor.nextBatch, []);
  assert.ok((empty.cursor.id as Long).equals(id));
  await coll.insertMany([{ _id: 3 }, { _id: 4 }, { _id: 5 }]);
  await refused(run(db, { getMore: id, collection: name }), 136);
  await refused(run(db, { getMore: id, collection: name }), 43);
}

describe('find options on a node', () => {
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    client = f.client;
    db = client.db('opts');
    const plain = db.collection<AnyDoc>('plain');
    await plain.insertMany([{ _id: 1, a: 1, b: 3 }, { _id: 2, a: 2, b: 2 }, { _id: 3, a: 3, b: 1 }]);
    await plain.createIndex({ a: 1 });
  });

  it('returnKey returns the index keys the plan read, {} from a collection scan', async () => {
    const plain = db.collection<AnyDoc>('plain');
    assert.deepEqual(await plain.find({}, { hint: { a: 1 }, sort: { a: -1 }, returnKey: true }).toArray(), [{ a: 3 }, { a: 2 }, { a: 1 }]);
    assert.deepEqual(await plain.find({}, { hint: { a: 1 }, sort: { b: 1 }, returnKey: true, projection: { b: 1, c: { $meta: 'sortKey' } } }).toArray(),
      [{ a: 3, c: [1] }, { a: 2, c: [2] }, { a: 1, c: [3] }]);
    assert.deepEqual(await plain.find({ _id: 2 }, { returnKey: true }).toArray(), [{ _id: 2 }]);
    assert.deepEqual(await plain.find({ b: { $gt: 1 } }, { returnKey: true }).toArray(), [{}, {}]);
  });

  it('showRecordId and $meta projections show the record id and the index key', async () => {
    const plain = db.collection<AnyDoc>('plain');
    const rows = await plain.find({}, { showRecordId: true, projection: { a: 1 }, promoteLongs: false }).toArray();
    assert.deepEqual(rows.map((r) => [r._id, r.a]), [[1, 1], [2, 2], [3, 3]]);
    assert.deepEqual(rows.map((r) => Object.keys(r)), rows.map(() => ['_id', 'a', '$recordId']));
    assert.deepEqual(rows.map((r) => r.$recordId), [Long.fromNumber(1), Long.fromNumber(2), Long.fromNumber(3)]);
    assert.deepEqual(await plain.find({ a: { $gte: 2 } }, { projection: { _id: 0, b: 0, k: { $meta: 'indexKey' } } }).toArray(), [{ a: 2, k: { a: 2 } }, { a: 3, k: { a: 3 } }]);
    await refused(plain.find({}, { projection: { s: { $meta: 'sortKey' } } }).toArray(), 2, 'cannot use sortKey $meta projection without a sort');
  });

  it('refuses tailable cursors on a non-capped collection and tailable combinations MongoDB refuses', async () => {
    await refused(run(db, { find: 'plain', tailable: true }), 2, NOT_CAPPED);
    await refused(db.collection('plain').find({}, { tailable: true, awaitData: true }).toArray(), 2, NOT_CAPPED);
    await refused(run(db, { find: 'plain', awaitData: true }), 9, "Cannot set 'awaitData' without also setting 'tailable'");
    await refused(run(db, { find: 'plain', tailable: true, sort: { a: 1 } }), 2, 'cannot use tailable option with a sort other than {$natural: 1}');
    await refused(run(db, { find: 'plain', tailable: true, singleBatch: true }), 2, "cannot use tailable option with the 'singleBatch' option");
    const missing = await run(db, { find: 'nothing', tailable: true });
    assert.ok((missing.cursor.id as Long).isZero(), 'nothing to tail: a closed cursor');
    await db.createCollection('emptyCapped', { capped: true, size: 4096 });
    assert.ok(((await run(db, { find: 'emptyCapped', tailable: true })).cursor.id as Long).isZero(), 'an empty capped collection keeps no cursor, as mongod');
  });

  it('tails a capped collection: the driver\'s awaitData stream receives documents inserted later', async () => {
    await tailsLaterInserts(db, 'tailed');
  });

  it('an awaitData getMore waits for data, and a cursor whose position was deleted dies', async () => {
    await awaitsThenLosesItsPosition(db, 'lost');
  });

  it('maxTimeMS on a getMore is for awaitData cursors only', async () => {
    const first = await run(db, { find: 'plain', batchSize: 1 });
    await refused(run(db, { getMore: first.cursor.id, collection: 'plain', maxTimeMS: 100 }), 2, 'cannot set maxTimeMS on getMore command for a non-awaitData cursor');
    assert.equal((await run(db, { getMore: first.cursor.id, collection: 'plain' })).cursor.nextBatch.length, 2, 'the refusal left the cursor alone');
  });

  it('checks collectionUUID, and refuses the options it does not implement', async () => {
    const [info] = await db.listCollections({ name: 'plain' }).toArray();
    const uuid = (info as AnyDoc).info.uuid as Binary;
    assert.equal((await run(db, { find: 'plain', collectionUUID: uuid })).cursor.firstBatch.length, 3);
    const err = await failure(run(db, { find: 'tailed', collectionUUID: uuid }));
    assert.equal(err.code, 361);
    assert.equal(err.errorResponse.expectedCollection, 'tailed');
    assert.equal(err.errorResponse.actualCollection, 'plain');
    await refused(run(db, { find: 'plain', collectionUUID: new UUID() }), 361);
    await refused(run(db, { find: 'plain', $_requestResumeToken: true, hint: { $natural: 1 } }), 238);
    await refused(run(db, { find: 'plain', hint: { a: 1 }, min: { a: 1 }, max: { b: 2 } }), 51176, 'min and max must have the same field names');
  });

  it('accepts the flags that change nothing on a node, and honours noCursorTimeout, allowDiskUse, min and max', async () => {
    const found = await run(db, { find: 'plain', filter: {}, oplogReplay: true, readOnce: true, allowPartialResults: true, allowSpeculativeMajorityRead: true, noCursorTimeout: true, allowDiskUse: false, sort: { b: 1 } });
    assert.deepEqual(found.cursor.firstBatch.map((d: AnyDoc) => d._id), [3, 2, 1]);
    const bounded = await db.collection('plain').find({}, { hint: { a: 1 }, min: { a: 2 }, max: { a: 3 } }).toArray();
    assert.deepEqual(bounded.map((d) => d._id), [2]);
    await refused(run(db, { find: 'plain', readOnce: 'yes' }), 14);
  });

  it('refuses on a view the find options an aggregation cannot express', async () => {
    await db.createCollection('plainView', { viewOn: 'plain', pipeline: [{ $match: { a: { $gt: 1 } } }] });
    assert.equal((await db.collection('plainView').find({}).toArray()).length, 2);
    await refused(db.collection('plainView').find({}, { returnKey: true }).toArray(), 168, 'Option returnKey not supported in aggregation.');
    await refused(run(db, { find: 'plainView', showRecordId: true }), 168, 'Option showRecordId not supported in aggregation.');
    await refused(run(db, { find: 'plainView', tailable: true }), 168, 'Tailable cursors are not supported in aggregation.');
  });
});

describe('find options through a router', () => {
  let client: MongoClient;
  let db: Db;

  withCluster({ shards: 2 }, async (f) => {
    client = f.client;
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'opts', primaryShard: 'shard1' });
    await admin.command({ shardCollection: 'opts.sharded', key: { k: 1 } });
    await admin.command({ split: 'opts.sharded', middle: { k: 50 } });
    await admin.command({ moveChunk: 'opts.sharded', find: { k: 0 }, to: 'shard0', _waitForDelete: true });
    db = client.db('opts');
    const sharded = db.collection<AnyDoc>('sharded');
    // Record ids are per shard: 1 and 2 on each.
    await sharded.insertMany([{ _id: 1, k: 10, b: 3 }, { _id: 2, k: 60, b: 2 }, { _id: 3, k: 20, b: 1 }, { _id: 4, k: 70, b: 0 }]);
    await sharded.createIndex({ b: 1 });
  });

  it('merges the shards\' index keys in sort order, though the keys do not hold the sort field', async () => {
    const sharded = db.collection<AnyDoc>('sharded');
    assert.deepEqual(await sharded.find({}, { hint: { b: 1 }, sort: { k: 1 }, returnKey: true }).toArray(), [{ b: 3 }, { b: 1 }, { b: 2 }, { b: 0 }]);
    assert.deepEqual(await sharded.find({}, { hint: { b: 1 }, sort: { k: -1 }, skip: 1, limit: 2, returnKey: true }).toArray(), [{ b: 2 }, { b: 1 }]);
    assert.deepEqual(await sharded.find({ k: 10 }, { hint: { b: 1 }, returnKey: true }).toArray(), [{ b: 3 }], 'one shard');
    assert.deepEqual(await sharded.find({}, { sort: { k: 1 }, projection: { _id: 0, b: 0, key: { $meta: 'indexKey' } } }).toArray(),
      [{ k: 10, key: { k: 10 } }, { k: 20, key: { k: 20 } }, { k: 60, key: { k: 60 } }, { k: 70, key: { k: 70 } }]);
  });

  it('checks collectionUUID on every shard, which all have the collection under one UUID', async () => {
    const [info] = await db.listCollections({ name: 'sharded' }).toArray();
    const uuid = (info as AnyDoc).info.uuid as Binary;
    assert.equal((await run(db, { find: 'sharded', collectionUUID: uuid })).cursor.firstBatch.length, 4);
    await refused(run(db, { find: 'sharded', collectionUUID: new UUID() }), 361);
  });

  it('shows each shard\'s record ids', async () => {
    const rows = await db.collection<AnyDoc>('sharded').find({}, { sort: { k: 1 }, projection: { b: 1 }, showRecordId: true }).toArray();
    assert.deepEqual(rows.map((r) => [r._id, r.b, r.$recordId]), [[1, 3, 1], [3, 1, 2], [2, 2, 1], [4, 0, 2]]);
    assert.ok(rows.every((r) => !('k' in r) && !('$sortKey' in r)), 'the client\'s projection, and no $sortKey');
  });

  it('refuses a tailable cursor on a sharded or a non-capped collection', async () => {
    await refused(run(db, { find: 'sharded', tailable: true }), 2, 'error processing query: ns=opts.shardedTree: $and\nSort: {}\nProj: {}\n tailable cursor requested on non capped collection');
    await db.collection<AnyDoc>('plain').insertOne({ _id: 1 });
    await refused(run(db, { find: 'plain', tailable: true, awaitData: true }), 2, NOT_CAPPED);
    await refused(run(db, { find: 'plain', awaitData: true }), 9);
    await refused(run(db, { find: 'sharded', tailable: true, sort: { k: 1 } }), 2, 'cannot use tailable option with a sort other than {$natural: 1}');
  });

  it('tails a capped collection on its primary shard: the driver\'s awaitData stream receives documents inserted later', async () => {
    await tailsLaterInserts(db, 'tailed');
  });

  it('forwards an awaitData getMore\'s wait, and the cursor\'s death, from the shard', async () => {
    await awaitsThenLosesItsPosition(db, 'lost');
  });

  it('takes maxTimeMS on getMore for tailable awaitData cursors only, as mongos', async () => {
    const first = await run(db, { find: 'sharded', batchSize: 1 });
    await refused(run(db, { getMore: first.cursor.id, collection: 'sharded', maxTimeMS: 100 }), 2, 'maxTimeMS can only be used with getMore for tailable, awaitData cursors');
    await db.createCollection('tailNoAwait', { capped: true, size: 4096 });
    await db.collection<AnyDoc>('tailNoAwait').insertOne({ _id: 1 });
    const tail = await run(db, { find: 'tailNoAwait', tailable: true });
    await refused(run(db, { getMore: tail.cursor.id, collection: 'tailNoAwait', maxTimeMS: 100 }), 2, 'maxTimeMS can only be used with getMore for tailable, awaitData cursors');
    assert.deepEqual((await run(db, { getMore: tail.cursor.id, collection: 'tailNoAwait' })).cursor.nextBatch, []);
  });
});
