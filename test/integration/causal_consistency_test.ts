import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { BSON, Binary, Long, MongoClient, MongoServerError, Timestamp, type ClusterTime, type CommandFailedEvent, type CommandStartedEvent, type CommandSucceededEvent, type Document } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// Issue 20, causal consistency and cluster time: every reply of a node and of a router carries
// $clusterTime and operationTime; each process's clock moves past every $clusterTime it receives
// (within maxAcceptableLogicalClockDriftSecs, 100 s here) and node-to-node traffic gossips it; a
// write's operationTime is its commit's cluster time; readConcern afterClusterTime is waited for,
// and refused beyond any time the node could have issued; a causally consistent session that writes
// through one router reads its write through another.

const DRIFT_SECS = 100;
const DRIFT = ['--setParameter', `maxAcceptableLogicalClockDriftSecs=${DRIFT_SECS}`];

// One command over a raw socket, its reply decoded with BSON types as they are (int64 as Long).
// `legacy`: as the OP_QUERY handshake every driver connection opens with.
function rawCommand(port: number, body: Document, legacy = false): Promise<Document> {
  const doc = Buffer.from(BSON.serialize(body));
  const payload = legacy
    ? Buffer.concat([Buffer.alloc(4), Buffer.from('admin.$cmd\0'), Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), doc])
    : Buffer.concat([Buffer.alloc(4), Buffer.from([0]), doc]);
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + payload.length, 0);
  header.writeInt32LE(1, 4);
  header.writeInt32LE(legacy ? 2004 : 2013, 12);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([header, payload])));
    let received = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      if (received.length < 4 || received.length < received.readInt32LE(0)) return;
      socket.destroy();
      resolve(BSON.deserialize(received.subarray(legacy ? 36 : 21), { promoteLongs: false, promoteValues: false }));
    });
    socket.on('error', reject);
  });
}

// What MongoDB sends without authentication: $clusterTime {clusterTime: Timestamp, signature:
// {hash: BinData(0, 20 zero bytes), keyId: Long(0)}} and operationTime, a Timestamp no later.
function assertRawTimes(reply: Document, what: string): void {
  const { $clusterTime: ct, operationTime } = reply;
  assert.ok(ct?.clusterTime instanceof Timestamp, `${what}: $clusterTime.clusterTime`);
  assert.ok(ct.signature?.hash instanceof Binary && ct.signature.hash.sub_type === 0, `${what}: signature.hash`);
  assert.deepEqual(Buffer.from(ct.signature.hash.buffer), Buffer.alloc(20), `${what}: 20 zero bytes`);
  assert.ok(ct.signature.keyId instanceof Long && ct.signature.keyId.isZero(), `${what}: keyId Long(0)`);
  assert.ok(operationTime instanceof Timestamp, `${what}: operationTime`);
  assert.ok(operationTime.lessThanOrEqual(ct.clusterTime), `${what}: operationTime after $clusterTime`);
  assert.deepEqual(Object.keys(reply).slice(-2), ['$clusterTime', 'operationTime'], `${what}: the last fields`);
}

// The same on a reply the driver decoded (command monitoring).
function assertTimes(reply: Document | undefined, what: string): Timestamp {
  assert.ok(reply?.$clusterTime?.clusterTime instanceof Timestamp, `${what}: $clusterTime`);
  assert.equal(reply.$clusterTime.signature?.keyId, 0, `${what}: keyId`);
  assert.ok(reply.operationTime instanceof Timestamp, `${what}: operationTime`);
  assert.ok((reply.operationTime as Timestamp).lessThanOrEqual(reply.$clusterTime.clusterTime), `${what}: operationTime after $clusterTime`);
  return reply.operationTime as Timestamp;
}

// A signed-as-without-auth $clusterTime `secs` seconds from now.
function clusterTimeIn(secs: number): ClusterTime {
  return { clusterTime: new Timestamp({ t: Math.floor(Date.now() / 1000) + secs, i: 1 }), signature: { hash: new Binary(Buffer.alloc(20), 0), keyId: new Long(0) } };
}

// Every reply a client's commands got, successes and failures.
function watch(client: MongoClient): { replies: [string, Document | undefined][]; started: CommandStartedEvent[] } {
  const seen = { replies: [] as [string, Document | undefined][], started: [] as CommandStartedEvent[] };
  client.on('commandStarted', (e: CommandStartedEvent) => seen.started.push(e));
  client.on('commandSucceeded', (e: CommandSucceededEvent) => seen.replies.push([e.commandName, e.reply as Document]));
  client.on('commandFailed', (e: CommandFailedEvent) => seen.replies.push([`${e.commandName} (failed)`, (e.failure as MongoServerError).errorResponse]));
  return seen;
}

async function failure(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof MongoServerError, String(err));
    return err;
  }
  assert.fail('expected the command to fail');
}

// The commands whose replies are checked, on a node or through a router: reads, writes, cursors,
// DDL and a failure.
async function workload(client: MongoClient, db: string): Promise<void> {
  const coll = client.db(db).collection<AnyDoc>('w');
  await client.db('admin').command({ ping: 1 });
  await client.db('admin').command({ hello: 1 });
  await coll.insertMany([{ _id: 1, k: 1 }, { _id: 2, k: 2 }, { _id: 3, k: 3 }]);
  await coll.updateOne({ _id: 1 }, { $set: { u: 1 } });
  await coll.findOneAndUpdate({ _id: 2 }, { $set: { u: 2 } });
  await coll.find({}, { batchSize: 1 }).toArray();
  await coll.countDocuments({});
  await coll.distinct('k');
  await coll.aggregate([{ $match: {} }]).toArray();
  await coll.createIndex({ k: 1 });
  await coll.deleteOne({ _id: 3 });
  await failure(client.db(db).command({ find: 'w', filter: 'not a document' }));
  await failure(client.db(db).command({ noSuchCommand: 1 }));
}

describe('cluster time on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;

  withNode({ extraArgs: DRIFT }, async (f) => {
    node = f.node;
    client = f.connect(node.uri, { monitorCommands: true });
  });

  it('carries $clusterTime and operationTime on every reply, errors and the OP_QUERY handshake included', async () => {
    const seen = watch(client);
    await workload(client, 'cc');
    assert.ok(seen.replies.length >= 14 && seen.replies.some(([name]) => name === 'getMore') && seen.replies.some(([name]) => name.endsWith('(failed)')));
    for (const [name, reply] of seen.replies) assertTimes(reply, name);
    assertRawTimes(await rawCommand(node.port, { ismaster: 1, helloOk: true }, true), 'OP_QUERY ismaster');
    assertRawTimes(await rawCommand(node.port, { ping: 1, $db: 'admin' }), 'ping');
    assertRawTimes(await rawCommand(node.port, { find: 'w', filter: 1, $db: 'cc' }), 'an error');
  });

  it("answers a write's commit time as its operationTime, the time its session records hold", async () => {
    const session = client.startSession();
    try {
      const db = client.db('cc');
      const before = assertTimes(await db.command({ ping: 1 }), 'ping');
      const reply = await db.command({ insert: 'stamped', documents: [{ _id: 1 }], txnNumber: Long.fromNumber(1) }, { session });
      const written = assertTimes(reply, 'insert');
      assert.ok(written.greaterThan(before), 'a write is stamped after what came before');
      const record = await client.db('config').collection<AnyDoc>('transactions').findOne({ '_id.id': session.id!.id });
      assert.deepEqual(record?.lastWriteOpTime.ts, written, 'config.transactions has the write\'s own time');
      const next = assertTimes(await db.command({ insert: 'stamped', documents: [{ _id: 2 }] }), 'insert');
      assert.ok(next.greaterThan(written), 'writes in commit order');
      const read = assertTimes(await db.command({ find: 'stamped' }), 'find');
      assert.ok(read.greaterThanOrEqual(next), "a read's operationTime covers every commit before it");
    } finally {
      await session.endSession();
    }
  });

  it('moves its clock past a $clusterTime it receives, and refuses one beyond maxAcceptableLogicalClockDriftSecs', async () => {
    const ahead = clusterTimeIn(DRIFT_SECS / 2);
    const reply = await rawCommand(node.port, { ping: 1, $clusterTime: ahead, $db: 'admin' });
    assert.ok((reply.$clusterTime.clusterTime as Timestamp).greaterThanOrEqual(ahead.clusterTime));
    const later = await rawCommand(node.port, { hello: 1, $db: 'admin' });
    assert.ok((later.$clusterTime.clusterTime as Timestamp).greaterThanOrEqual(ahead.clusterTime), 'the clock stays advanced');
    const tooFar = clusterTimeIn(DRIFT_SECS * 2);
    const refused = await rawCommand(node.port, { ping: 1, $clusterTime: tooFar, $db: 'admin' });
    assert.deepEqual([Number(refused.ok), Number(refused.code), refused.codeName], [0, 205, 'ClusterTimeFailsRateLimiter']);
    assert.match(refused.errmsg as string, /^New \$clusterTime, \d+, is too far from this node's wall clock time, \d+\.$/);
    assertRawTimes(refused, 'the refusal');
    assert.ok((refused.$clusterTime.clusterTime as Timestamp).lessThan(tooFar.clusterTime), 'the clock did not take it');
  });

  it('reads after a cluster time it has reached, and refuses a later one with InvalidOptions as MongoDB does', async () => {
    const session = client.startSession({ causalConsistency: true });
    try {
      const coll = client.db('cc').collection<AnyDoc>('after');
      await coll.insertOne({ _id: 1 }, { session });
      const seen = watch(client);
      assert.deepEqual(await coll.findOne({ _id: 1 }, { session }), { _id: 1 });
      assert.equal(await coll.countDocuments({}, { session }), 1);
      assert.deepEqual(await coll.distinct('_id', {}, { session }), [1]);
      assert.equal((await coll.aggregate([{ $match: {} }], { session }).toArray()).length, 1);
      const sent = seen.started.filter((e) => e.command.readConcern !== undefined);
      assert.deepEqual(sent.map((e) => e.commandName), ['find', 'aggregate', 'distinct', 'aggregate'], 'the driver sent afterClusterTime on each read');
      for (const e of sent) assert.deepEqual(e.command.readConcern.afterClusterTime, session.operationTime);

      const future = new Timestamp({ t: Math.floor(Date.now() / 1000) + 60, i: 1 });
      const err = await failure(client.db('cc').command({ find: 'after', readConcern: { afterClusterTime: future } }));
      assert.equal(err.code, 72);
      assert.match(err.message, new RegExp(`^readConcern afterClusterTime value must not be greater than the current clusterTime\\. Requested clusterTime: \\{ ts: Timestamp\\(${future.t}, 1\\) \\}; current clusterTime: \\{ ts: Timestamp\\(\\d+, \\d+\\) \\}$`));
      for (const cmd of [{ count: 'after' }, { distinct: 'after', key: '_id' }, { aggregate: 'after', pipeline: [], cursor: {} }]) {
        assert.equal((await failure(client.db('cc').command({ ...cmd, readConcern: { afterClusterTime: future } }))).code, 72, Object.keys(cmd)[0]);
      }
      const getMore = await failure(client.db('cc').command({ getMore: Long.fromNumber(1), collection: 'after', readConcern: { afterClusterTime: session.operationTime } }));
      assert.deepEqual([getMore.code, getMore.message], [72, 'afterClusterTime is not allowed for this command']);
      assert.equal((await failure(client.db('cc').command({ find: 'after', readConcern: { level: 'available', afterClusterTime: session.operationTime } }))).code, 72);
    } finally {
      await session.endSession();
    }
  });
});

describe('cluster time through routers', () => {
  let cluster: SpawnedCluster;
  let a: MongoClient;
  let b: MongoClient;

  withCluster({ shards: 2, routers: 2, shardArgs: DRIFT, configArgs: DRIFT, routerArgs: DRIFT }, async (f) => {
    cluster = f.cluster;
    a = f.connect(cluster.routers[0]!.uri, { monitorCommands: true });
    b = f.connect(cluster.routers[1]!.uri, { monitorCommands: true });
    const admin = a.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'causal', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'causal.c', key: { k: 1 } });
    await admin.command({ split: 'causal.c', middle: { k: 100 } });
    await admin.command({ moveChunk: 'causal.c', find: { k: 100 }, to: 'shard1' });
  });

  it('carries $clusterTime and operationTime on every reply, on the fast paths and the general path', async () => {
    const seen = watch(a);
    await workload(a, 'causalw');
    const coll = a.db('causal').collection<AnyDoc>('c');
    // The first loads the routing (the general path); the others find it cached.
    for (const k of [4, 5]) await coll.insertOne({ _id: `fast${k}`, k });
    await coll.findOne({ k: 5 });
    const status = await a.db('admin').command({ serverStatus: 1 });
    assert.ok(status.docshard.fastPaths.insert >= 1 && status.docshard.fastPaths.find >= 1, 'the fast paths answered some');
    for (const [name, reply] of seen.replies) assertTimes(reply, name);
    assertRawTimes(await rawCommand(cluster.routers[0]!.port, { ismaster: 1, helloOk: true }, true), 'OP_QUERY ismaster');
    assertRawTimes(await rawCommand(cluster.routers[0]!.port, { find: 'c', filter: 1, $db: 'causal' }), 'an error');
  });

  it("answers a one-shard insert's operationTime with its commit time on the shard", async () => {
    const session = a.startSession();
    try {
      const seen = watch(a);
      const coll = a.db('causal').collection<AnyDoc>('c');
      await coll.insertOne({ _id: 'warm', k: 6 }, { session });
      await coll.insertOne({ _id: 'timed', k: 7 }, { session });
      const written = assertTimes(seen.replies.at(-1)![1], 'insert');
      const shard0 = new MongoClient(`mongodb://127.0.0.1:${cluster.shards[0]!.port}/?directConnection=true`);
      try {
        const record = await shard0.db('config').collection<AnyDoc>('transactions').findOne({ '_id.id': session.id!.id });
        assert.ok(record !== null);
        // The fast path passes the shard's operationTime on; the general path answers the
        // router's time, which is no earlier.
        assert.ok(written.greaterThanOrEqual(record.lastWriteOpTime.ts), 'no earlier than the commit');
        const fast = (await a.db('admin').command({ serverStatus: 1 })).docshard.fastPaths.insert > 0;
        if (fast) assert.deepEqual(written, record.lastWriteOpTime.ts, 'the commit time itself');
      } finally {
        await shard0.close();
      }
    } finally {
      await session.endSession();
    }
  });

  it('a causally consistent session that writes through one router sees its write through another', async () => {
    const writer = a.startSession({ causalConsistency: true });
    const reader = b.startSession({ causalConsistency: true });
    try {
      const seenB = watch(b);
      // Through router B first, so that B's routing and its clock have what they had before the write.
      await b.db('causal').collection<AnyDoc>('c').findOne({ k: 150 }, { session: reader });
      for (const k of [50, 150]) await a.db('causal').collection<AnyDoc>('c').insertOne({ _id: `w${k}`, k }, { session: writer });
      await a.db('causal').collection<AnyDoc>('c').updateOne({ k: 150 }, { $inc: { n: 1 } }, { session: writer });
      const written = writer.operationTime!;
      assert.ok(written instanceof Timestamp);
      reader.advanceClusterTime(writer.clusterTime!);
      reader.advanceOperationTime(written);
      const coll = b.db('causal').collection<AnyDoc>('c');
      assert.deepEqual(await coll.findOne({ k: 150 }, { session: reader }), { _id: 'w150', k: 150, n: 1 });
      assert.deepEqual(await coll.findOne({ k: 50 }, { session: reader }), { _id: 'w50', k: 50 });
      assert.equal(await coll.countDocuments({ _id: { $in: ['w50', 'w150'] } }, { session: reader }), 2);
      const reads = seenB.started.filter((e) => e.command.readConcern?.afterClusterTime !== undefined);
      assert.ok(reads.length >= 3);
      assert.ok(reads.every((e) => (e.command.readConcern.afterClusterTime as Timestamp).greaterThanOrEqual(written)), 'router B was asked to read after the write');
      assert.ok(reader.operationTime!.greaterThanOrEqual(written), "B's replies answer a time no earlier than the write");
    } finally {
      await writer.endSession();
      await reader.endSession();
    }
  });

  it('gossips a $clusterTime it receives on to the shards, and refuses one beyond maxAcceptableLogicalClockDriftSecs', async () => {
    const ahead = clusterTimeIn(DRIFT_SECS / 2);
    const session = b.startSession();
    try {
      session.advanceClusterTime(ahead);
      await b.db('causal').collection<AnyDoc>('c').findOne({ k: 150 }, { session });
      await b.db('causal').collection<AnyDoc>('c').find({}, { session }).toArray();
    } finally {
      await session.endSession();
    }
    const router = await rawCommand(cluster.routers[1]!.port, { ping: 1, $db: 'admin' });
    assert.ok((router.$clusterTime.clusterTime as Timestamp).greaterThanOrEqual(ahead.clusterTime), "the router's clock");
    for (const shard of cluster.shards) {
      const reply = await rawCommand(shard.port, { ping: 1, $db: 'admin' });
      assert.ok((reply.$clusterTime.clusterTime as Timestamp).greaterThanOrEqual(ahead.clusterTime), `shard on ${shard.port}`);
    }
    const refused = await rawCommand(cluster.routers[0]!.port, { ping: 1, $clusterTime: clusterTimeIn(DRIFT_SECS * 2), $db: 'admin' });
    assert.deepEqual([Number(refused.ok), Number(refused.code), refused.codeName], [0, 205, 'ClusterTimeFailsRateLimiter']);
    assertRawTimes(refused, 'the refusal');
  });

  it('forwards afterClusterTime to the shards, which refuse a time beyond any they could have issued', async () => {
    const future = new Timestamp({ t: Math.floor(Date.now() / 1000) + DRIFT_SECS / 2 + 30, i: 1 });
    const db = a.db('causal');
    for (const cmd of [{ find: 'c', filter: { k: 5 } }, { find: 'c' }, { count: 'c' }, { distinct: 'c', key: 'k' }, { aggregate: 'c', pipeline: [], cursor: {} }]) {
      const err = await failure(db.command({ ...cmd, readConcern: { afterClusterTime: future } }));
      assert.equal(err.code, 72, JSON.stringify(cmd));
      assert.match(err.message, /^readConcern afterClusterTime value must not be greater than the current clusterTime/);
    }
    const getMore = await failure(db.command({ getMore: Long.fromNumber(1), collection: 'c', readConcern: { afterClusterTime: future } }));
    assert.deepEqual([getMore.code, getMore.message], [72, 'afterClusterTime is not allowed for this command']);
    assert.equal((await failure(db.command({ find: 'c', readConcern: { afterClusterTime: 1 } }))).code, 14, 'parsed by the router as MongoDB parses it');
  });
});
