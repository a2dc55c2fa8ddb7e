import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, UUID, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { WireClient } from '../../src/wire/client.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// What docshard refuses rather than accepting and ignoring: fields a command does not know (40415,
// as MongoDB's IDL parser), transactions (there are none yet), snapshot reads (there are no
// versions by commit timestamp yet), and write concerns that need replication (there is none yet). The same checks run on a node and through a router; where
// MongoDB answers differently on a mongod and behind mongos, so does docshard.

// The error a promise failed with, as the driver reports it; undefined when it did not fail.
async function failure(p: Promise<unknown>): Promise<AnyDoc | undefined> {
  try {
    await p;
  } catch (err) {
    return err as AnyDoc;
  }
  return undefined;
}

function expectCode(err: AnyDoc | undefined, code: number, message?: string): void {
  assert.ok(err !== undefined, `expected error ${code}, but it succeeded`);
  assert.equal(err.code, code, String(err.message));
  if (message !== undefined) assert.equal(err.message, message);
}

const lsid = () => ({ id: new UUID() });

// The checks both targets answer alike: unknown fields and transactions.
function commonChecks(target: () => { client: MongoClient; db: Db; host: string }): void {
  it('refuses a field a command does not know with 40415, running nothing', async () => {
    const { db } = target();
    const err = await failure(db.command({ find: 'c', filter: {}, bogusField: 1 }));
    expectCode(err, 40415, "BSON field 'find.bogusField' is an unknown field.");
    assert.equal(err!.codeName, 'Location40415');
    expectCode(await failure(db.command({ insert: 'c', documents: [{ _id: 'bogus' }], bogus: true })), 40415);
    expectCode(await failure(db.command({ update: 'c', updates: [{ q: {}, u: { $set: { x: 1 } } }], upsert: true })), 40415);
    expectCode(await failure(db.command({ explain: { find: 'c', bogus: 1 }, verbosity: 'queryPlanner' })), 40415, "BSON field 'find.bogus' is an unknown field.");
    expectCode(await failure(db.command({ create: 'refused', cappped: true })), 40415, "BSON field 'create.cappped' is an unknown field.");
    assert.equal(await db.collection<AnyDoc>('c').countDocuments({ _id: 'bogus' }), 0);
    assert.deepEqual(await db.listCollections({ name: 'refused' }).toArray(), []);
  });

  it('refuses an unknown field on the commands MongoDB parses by hand too, and keeps serving', async () => {
    const { client, db } = target();
    const admin = client.db('admin');
    await db.collection<AnyDoc>('c').insertOne({ _id: 'listed' });
    expectCode(await failure(admin.command({ ping: 1, bogus: 1 })), 40415, "BSON field 'ping.bogus' is an unknown field.");
    expectCode(await failure(db.command({ listIndexes: 'c', cursor: {}, nameOnly: true })), 40415, "BSON field 'listIndexes.nameOnly' is an unknown field.");
    expectCode(await failure(admin.command({ hello: 1, helloOK: true })), 40415, "BSON field 'hello.helloOK' is an unknown field.");
    expectCode(await failure(admin.command({ isMaster: 1, bogus: 1 })), 40415, "BSON field 'hello.bogus' is an unknown field.");
    expectCode(await failure(admin.command({ buildInfo: 1, verbose: true })), 40415, "BSON field 'buildInfo.verbose' is an unknown field.");
    assert.equal((await admin.command({ ping: 1 })).ok, 1);
    assert.deepEqual((await db.collection('c').listIndexes().toArray()).map((i) => i.name), ['_id_']);
    assert.equal((await admin.command({ hello: 1, helloOk: true })).helloOk, true);
  });

  it('accepts the options drivers send, generic arguments included', async () => {
    const { db } = target();
    const c = db.collection<AnyDoc>('opts');
    await c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }], { ordered: false, bypassDocumentValidation: true, comment: 'c' });
    const found = await c.find({ a: { $gte: 1 } }, { sort: { a: 1 }, projection: { a: 1 }, skip: 0, limit: 5, batchSize: 1, comment: 'c', maxTimeMS: 10_000, allowDiskUse: true, let: { x: 1 }, collation: { locale: 'simple' } }).toArray();
    assert.deepEqual(found, [{ _id: 1, a: 1 }, { _id: 2, a: 2 }]);
    assert.equal(await c.countDocuments({}, { maxTimeMS: 10_000 }), 2);
    assert.equal(await c.estimatedDocumentCount({ comment: 'c' }), 2);
    assert.deepEqual((await c.distinct('a', {}, { comment: 'c' })).sort(), [1, 2]);
    await c.updateOne({ _id: 1 }, { $set: { b: 1 } }, { let: { y: 1 }, comment: 'c' });
    await c.findOneAndUpdate({ _id: 2 }, { $set: { b: 2 } }, { returnDocument: 'after', upsert: false, comment: 'c' });
    await c.deleteMany({ b: 3 }, { let: { z: 1 } });
    await c.createIndex({ b: 1 }, { name: 'b_1' });
    await c.dropIndex('b_1');
    assert.equal((await c.aggregate([{ $match: {} }], { allowDiskUse: true, batchSize: 1, comment: 'c' }).toArray()).length, 2);
    await db.command({ dbStats: 1, scale: 1024 });
    assert.ok(await c.drop());
  });

  it('reads readConcern snapshot with find, aggregate and distinct and refuses it on other commands with InvalidOptions', async () => {
    const { client, db } = target();
    const c = db.collection<AnyDoc>('snap');
    await c.insertOne({ _id: 1, k: 1 });
    const session = client.startSession({ snapshot: true });
    try {
      assert.deepEqual(await c.find({}, { session }).toArray(), [{ _id: 1, k: 1 }]);
      assert.deepEqual(await c.aggregate([{ $project: { k: 1 } }], { session }).toArray(), [{ _id: 1, k: 1 }]);
      assert.deepEqual(await c.distinct('k', {}, { session }), [1]);
    } finally {
      await session.endSession();
    }
    expectCode(await failure(db.command({ listCollections: 1, readConcern: { level: 'snapshot' } })), 72, 'Command listCollections does not support { readConcern: { level: "snapshot" } }');
    expectCode(await failure(db.command({ findAndModify: 'snap', query: { _id: 1 }, update: { $set: { x: 1 } }, readConcern: { level: 'snapshot' } })), 72, 'Command findAndModify does not support { readConcern: { level: "snapshot" } }');
    assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, k: 1 }, 'the refused findAndModify wrote nothing');
  });

  it('answers commitTransaction and abortTransaction outside a transaction with 125, and refuses autocommit: true', async () => {
    const { db } = target();
    // The driver sends commit and abort as statements of a transaction; without one, as a client
    // without sessions sends them, they fail.
    const raw = new WireClient();
    try {
      for (const name of ['commitTransaction', 'abortTransaction']) {
        const reply = await raw.command(target().host, 'admin', { [name]: 1 });
        assert.deepEqual([reply.ok, reply.code, reply.errmsg], [0, 125, `${name} must be run within a transaction`]);
      }
    } finally {
      await raw.close();
    }
    expectCode(await failure(db.command({ insert: 'txn', documents: [{ _id: 'raw' }], lsid: lsid(), txnNumber: Long.fromNumber(6), autocommit: true })), 72);
  });

  it('keeps retryable writes (lsid and txnNumber, no autocommit) working', async () => {
    // The driver puts a session's lsid on every command and reuses pooled sessions, whose
    // txnNumbers its own writes have used: a client of its own starts from a fresh session.
    const own = new MongoClient(`mongodb://${target().host}/?directConnection=true`);
    try {
      const db = own.db(target().db.databaseName);
      const session = own.startSession();
      const reply = await db.command({ insert: 'retry', documents: [{ _id: 1, k: 1 }], txnNumber: Long.fromNumber(1) }, { session });
      assert.equal(reply.n, 1);
      const updated = await db.command({ update: 'retry', updates: [{ q: { _id: 1 }, u: { $set: { v: 2 } } }], txnNumber: Long.fromNumber(2) }, { session });
      assert.equal(updated.nModified, 1);
      assert.deepEqual(await db.collection<AnyDoc>('retry').findOne({ _id: 1 }), { _id: 1, k: 1, v: 2 });
    } finally {
      await own.close();
    }
  });
}

// The write concerns one process satisfies, on either target.
function satisfiableWriteConcerns(target: () => { db: Db }): void {
  it('keeps w: 1, w: 0, w: "majority", j and wtimeout working', async () => {
    const c = target().db.collection<AnyDoc>('wc_ok');
    await c.insertOne({ _id: 1 }, { writeConcern: { w: 1 } });
    await c.insertOne({ _id: 2 }, { writeConcern: { w: 'majority', wtimeout: 1000 } });
    await c.insertOne({ _id: 3 }, { writeConcern: { w: 1, journal: true } });
    await c.insertOne({ _id: 4 }, { writeConcern: { w: 0 } });
    await c.updateOne({ _id: 1 }, { $set: { x: 1 } }, { writeConcern: { w: 'majority', journal: true } });
    let count = 0;
    for (let i = 0; i < 50 && count < 4; i++) {
      count = await c.countDocuments();
      if (count < 4) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(count, 4, 'the unacknowledged insert arrived too');
  });
}

describe('refusals on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    ({ node, client } = f);
    db = client.db('refusals');
  });

  commonChecks(() => ({ client, db, host: `127.0.0.1:${node.port}` }));
  satisfiableWriteConcerns(() => ({ db }));

  it('refuses an unknown field on a command the shards and the config server send each other', async () => {
    const admin = client.db('admin');
    expectCode(await failure(admin.command({ _recvChunkStatus: 'refusals.c', sessionId: 'none', bogus: 1 })), 40415, "BSON field '_recvChunkStatus.bogus' is an unknown field.");
    expectCode(await failure(admin.command({ _flushRoutingTableCacheUpdates: 'refusals.c', bogus: 1 })), 40415, "BSON field '_flushRoutingTableCacheUpdates.bogus' is an unknown field.");
    assert.equal((await admin.command({ ping: 1 })).ok, 1);
  });

  it('says in serverStatus that its storage engine has snapshot reads', async () => {
    const { storageEngine } = await client.db('admin').command({ serverStatus: 1 });
    assert.equal(storageEngine.supportsSnapshotReadConcern, true);
  });

  it('refuses a write concern that needs replication with BadValue before writing, as a standalone mongod', async () => {
    const c = db.collection<AnyDoc>('wc');
    expectCode(await failure(c.insertOne({ _id: 1 }, { writeConcern: { w: 2 } })), 2, "cannot use 'w' > 1 when a host is not replicated");
    expectCode(await failure(c.updateOne({ _id: 1 }, { $set: { x: 1 } }, { upsert: true, writeConcern: { w: 3 } })), 2);
    expectCode(await failure(c.insertOne({ _id: 2 }, { writeConcern: { w: 'dc1' as AnyDoc } })), 2, 'cannot use non-majority \'w\' mode "dc1" when a host is not a member of a replica set');
    expectCode(await failure(db.command({ create: 'wc_created', writeConcern: { w: 2 } })), 2);
    assert.equal(await c.countDocuments(), 0, 'nothing was written');
    assert.deepEqual(await db.listCollections({ name: 'wc_created' }).toArray(), []);
  });
});

describe('refusals through a router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;
  const started: CommandStartedEvent[] = [];

  withCluster({ shards: 2 }, async (f) => {
    cluster = f.cluster;
    client = f.connect(cluster.routers[0]!.uri, { monitorCommands: true });
    client.on('commandStarted', (e) => started.push(e));
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'refusals', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'refusals.sharded', key: { k: 1 } });
    await admin.command({ split: 'refusals.sharded', middle: { k: 100 } });
    await admin.command({ moveChunk: 'refusals.sharded', find: { k: 100 }, to: 'shard1' });
    db = client.db('refusals');
  });

  commonChecks(() => ({ client, db, host: `127.0.0.1:${cluster.routers[0]!.port}` }));
  satisfiableWriteConcerns(() => ({ db }));

  async function fastPaths(): Promise<{ insert: number; update: number; find: number }> {
    return (await client.db('admin').command({ serverStatus: 1 })).docshard.fastPaths as { insert: number; update: number; find: number };
  }

  it('refuses an unknown field on a router\'s own commands', async () => {
    const admin = client.db('admin');
    expectCode(await failure(admin.command({ balancerStatus: 1, verbose: true })), 40415, "BSON field 'balancerStatus.verbose' is an unknown field.");
    expectCode(await failure(admin.command({ listShards: 1, bogus: 1 })), 40415, "BSON field 'listShards.bogus' is an unknown field.");
    expectCode(await failure(admin.command({ moveChunk: 'refusals.sharded', find: { k: 100 }, to: 'shard0', toShard: 'shard0' })), 40415, "BSON field 'moveChunk.toShard' is an unknown field.");
    assert.equal((await admin.command({ balancerStatus: 1 })).ok, 1);
  });

  it('refuses an unknown field in a command the fast paths would otherwise take', async () => {
    const c = db.collection<AnyDoc>('sharded');
    await c.insertOne({ _id: 'warm', k: 1 });
    const before = await fastPaths();
    await db.command({ insert: 'sharded', documents: [{ _id: 'fast', k: 2 }], ordered: true });
    await db.command({ find: 'sharded', filter: { k: 2 }, limit: 1, singleBatch: true });
    await db.command({ update: 'sharded', updates: [{ q: { k: 2 }, u: { $set: { v: 1 } } }], ordered: true });
    const taken = await fastPaths();
    assert.deepEqual(taken, { insert: before.insert + 1, update: before.update + 1, find: before.find + 1 }, 'the same commands without the field take the fast paths');
    expectCode(await failure(db.command({ insert: 'sharded', documents: [{ _id: 'slow', k: 3 }], ordered: true, bogus: 1 })), 40415, "BSON field 'insert.bogus' is an unknown field.");
    expectCode(await failure(db.command({ find: 'sharded', filter: { k: 2 }, limit: 1, singleBatch: true, bogus: 1 })), 40415, "BSON field 'find.bogus' is an unknown field.");
    expectCode(await failure(db.command({ update: 'sharded', updates: [{ q: { k: 2 }, u: { $set: { v: 2 } } }], ordered: true, bogus: 1 })), 40415, "BSON field 'update.bogus' is an unknown field.");
    expectCode(await failure(db.command({ insert: 'sharded', documents: [{ _id: 'txn', k: 3 }], ordered: true, lsid: lsid(), txnNumber: Long.fromNumber(1), autocommit: false })), 251);
    assert.deepEqual(await fastPaths(), taken, 'neither was taken by a fast path');
    assert.equal(await c.countDocuments({ _id: { $in: ['slow', 'txn'] } }), 0);
    assert.equal((await c.findOne({ _id: 'fast' }))?.v, 1, 'the refused update changed nothing');
  });

  it('passes a retryable write\'s txnNumber on, as before', async () => {
    started.length = 0;
    await db.collection<AnyDoc>('sharded').insertOne({ _id: 'retryable', k: 150 });
    await db.collection<AnyDoc>('sharded').updateOne({ k: 150 }, { $set: { v: 1 } });
    const writes = started.filter((e) => e.commandName === 'insert' || e.commandName === 'update');
    assert.equal(writes.length, 2);
    for (const e of writes) assert.ok((e.command as Document).txnNumber !== undefined, 'the driver sent a retryable write');
    assert.equal((await db.collection<AnyDoc>('sharded').findOne({ _id: 'retryable' }))?.v, 1);
  });

  it('applies a write whose write concern needs replication, then answers UnsatisfiableWriteConcern as mongos does', async () => {
    const c = db.collection<AnyDoc>('sharded');
    const single = await failure(c.insertOne({ _id: 'w2', k: 5 }, { writeConcern: { w: 2 } }));
    expectCode(single, 100, 'Not enough data-bearing nodes');
    assert.equal(single!.codeName, 'UnsatisfiableWriteConcern');
    assert.ok(await c.findOne({ _id: 'w2' }), 'the write was applied');

    const bulk = await failure(c.insertMany([{ _id: 'w3a', k: 6 }, { _id: 'w3b', k: 160 }], { ordered: false, writeConcern: { w: 3 } }));
    assert.equal(bulk?.name, 'MongoBulkWriteError');
    assert.equal(bulk!.writeConcernErrors?.[0]?.code ?? bulk!.result?.getWriteConcernError?.()?.code, 100);
    assert.equal(await c.countDocuments({ _id: { $in: ['w3a', 'w3b'] } }), 2);

    const raw = await db.command({ update: 'sharded', updates: [{ q: { k: 5 }, u: { $set: { w: 2 } } }], writeConcern: { w: 2, wtimeout: 100 } }).catch((err: AnyDoc) => err.errorResponse ?? err);
    assert.equal(raw.ok, 1);
    assert.equal(raw.nModified, 1);
    assert.deepEqual(raw.writeConcernError, {
      code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough data-bearing nodes',
      errInfo: { writeConcern: { w: 2, wtimeout: 100, provenance: 'clientSupplied' } },
    });

    const tagged = await failure(c.updateOne({ _id: 'w2' }, { $set: { tagged: true } }, { writeConcern: { w: 'dc1' as AnyDoc } }));
    expectCode(tagged, 79, "No write concern mode named 'dc1' found in replica set configuration");
    assert.equal((await c.findOne({ _id: 'w2' }))?.tagged, true);

    const created = await failure(db.command({ create: 'wc_created', writeConcern: { w: 2 } }));
    expectCode(created, 100);
    assert.equal((await db.listCollections({ name: 'wc_created' }).toArray()).length, 1);
  });

  it('reports no write concern error for an ordered write that stopped at its first statement', async () => {
    const raw = await db.command({ insert: 'sharded', documents: [{ _id: 'w2', k: 5 }, { _id: 'after', k: 7 }], ordered: true, writeConcern: { w: 2 } });
    assert.equal(raw.n, 0);
    assert.equal(raw.writeErrors.length, 1);
    assert.equal(raw.writeConcernError, undefined);
  });
});
