import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, MongoClient, MongoServerError, UUID, type ClientSession, type Db } from 'mongodb';
import { WireClient } from '../../src/wire/client.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { waitFor } from '../helpers/balancer_util.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// Issue 20, logical sessions: the session commands' replies, config.system.sessions and its
// refresh, a cursor's session (getMore in another session or none refused with mongod's and
// mongos's codes), killSessions through a router closing the session's cursors on every shard,
// and an expired session's cursors closed by the refresh. Every process refreshes every 200 ms and
// the TTL monitors pass every second, so a session expires in about a second once its lastUse is
// put in the past.

const REFRESH = ['--setParameter', 'logicalSessionRefreshMillis=200'];
const TTL_EVERY_SECOND = ['--setParameter', 'ttlMonitorSleepSecs=1'];
// The uid of every session without authentication, SHA-256(""), as MongoDB prints it.
const ANONYMOUS_UID = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
const SESSION = String.raw`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} - ${ANONYMOUS_UID.replace(/[+/]/g, '\\$&')} -  - `;

async function failure(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MongoServerError) return err;
    throw err;
  }
  assert.fail('expected the command to fail');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A reply without the cluster time every reply carries.
const bare = ({ $clusterTime: _time, operationTime: _op, ...rest }: AnyDoc): AnyDoc => rest;
const hex = (id: unknown): string => (id as Binary).toString('hex');
const lsidOf = (s: ClientSession) => ({ id: s.id!.id });
// Cursor ids stay Longs, as getMore needs them.
const RAW = { promoteLongs: false };

async function openCursors(uri: string): Promise<number> {
  const client = new MongoClient(uri);
  try {
    return Number((await client.db('admin').command({ serverStatus: 1 })).metrics.cursor.open.total);
  } finally {
    await client.close();
  }
}

// The checks a node and a router share, each under its own codes: a cursor opened in a session
// takes getMores in that session only; one opened without a session, only without one.
async function cursorBelongsToItsSession(client: MongoClient, db: Db, raw: WireClient, host: string, codes: [number, number, number]): Promise<void> {
  const [notInSession, withoutLsid, otherSession] = codes;
  const a = client.startSession();
  const b = client.startSession();
  try {
    const opened = await db.command({ find: 'owned', batchSize: 2 }, { session: a, ...RAW });
    const id = opened.cursor.id as Long;
    const other = await failure(db.command({ getMore: id, collection: 'owned', batchSize: 2 }, { session: b, ...RAW }));
    assert.equal(other.code, otherSession);
    assert.match(other.message, new RegExp(`^Cannot run getMore on cursor ${id.toString()}, which was created in session ${SESSION}, in session ${SESSION}$`));
    assert.ok(other.message.includes(hex(a.id!.id).slice(0, 8)) && other.message.includes(hex(b.id!.id).slice(0, 8)));
    const none: AnyDoc = await raw.command(host, db.databaseName, { getMore: id, collection: 'owned', batchSize: 2 });
    assert.equal(none.code, withoutLsid);
    assert.match(String(none.errmsg), new RegExp(`^Cannot run getMore on cursor ${id.toString()}, which was created in session ${SESSION}, without an lsid$`));
    const more = await db.command({ getMore: id, collection: 'owned', batchSize: 2 }, { session: a, ...RAW });
    assert.equal(more.cursor.nextBatch.length, 2, 'the refused getMores left the cursor alone');

    const sessionless: AnyDoc = await raw.command(host, db.databaseName, { find: 'owned', batchSize: 2 });
    const free = sessionless.cursor.id as Long;
    assert.ok(!free.isZero());
    const inSession = await failure(db.command({ getMore: free, collection: 'owned', batchSize: 2 }, { session: a, ...RAW }));
    assert.equal(inSession.code, notInSession);
    assert.match(inSession.message, new RegExp(`^Cannot run getMore on cursor ${free.toString()}, which was not created in a session, in session ${SESSION}$`));
    const plain: AnyDoc = await raw.command(host, db.databaseName, { getMore: free, collection: 'owned', batchSize: 2 });
    assert.equal(plain.ok, 1);
    assert.equal((plain.cursor.nextBatch as unknown[]).length, 2);
    await raw.command(host, db.databaseName, { killCursors: 'owned', cursors: [free] });
    await db.command({ killCursors: 'owned', cursors: [id] }, { session: a });
  } finally {
    await a.endSession();
    await b.endSession();
  }
}

// startSession, refreshSessions, endSessions and the kill commands answer as mongod and mongos do.
async function sessionCommandReplies(client: MongoClient, sessions: () => Promise<AnyDoc[]>): Promise<void> {
  const admin = client.db('admin');
  const started = await admin.command({ startSession: 1 });
  assert.deepEqual(Object.keys(bare(started)), ['id', 'timeoutMinutes', 'ok']);
  assert.deepEqual(Object.keys(started.id), ['id']);
  assert.equal((started.id.id as Binary).sub_type, 4);
  assert.equal(started.timeoutMinutes, 30);
  const listed = async () => (await admin.aggregate([{ $listLocalSessions: {} }]).toArray()).map((s) => hex(s._id.id));
  // In use: listed by the cache until its next refresh (every 200 ms here), which moves it to
  // config.system.sessions; a refresh may come between startSession and the listing.
  const known = async (): Promise<boolean> => (await listed()).includes(hex(started.id.id)) || (await sessions()).some((s) => hex(s._id.id) === hex(started.id.id));
  await waitFor('a started session in use', known, 10_000, 50);

  const refreshed = new UUID();
  assert.deepEqual(bare(await admin.command({ refreshSessions: [{ id: refreshed }] })), { ok: 1 });
  await waitFor('the refreshed session in config.system.sessions', async () => (await sessions()).some((s) => hex(s._id.id) === hex(refreshed)), 10_000, 50);
  assert.deepEqual(bare(await admin.command({ endSessions: [{ id: refreshed }] })), { ok: 1 });
  await waitFor('the ended session gone from config.system.sessions', async () => !(await sessions()).some((s) => hex(s._id.id) === hex(refreshed)), 10_000, 50);
  const [record] = await sessions();
  assert.deepEqual(Object.keys(record), ['_id', 'lastUse']);
  assert.deepEqual(Object.keys(record._id), ['id', 'uid']);
  assert.equal((record._id.uid as Binary).toString('base64'), ANONYMOUS_UID);

  assert.deepEqual(bare(await admin.command({ killSessions: [{ id: new UUID() }] })), { ok: 1 });
  assert.deepEqual(bare(await admin.command({ killSessions: [] })), { ok: 1 });
  assert.deepEqual(bare(await admin.command({ killAllSessions: [{ user: 'app', db: 'admin' }] })), { ok: 1 });
  assert.deepEqual(bare(await admin.command({ killAllSessions: [] })), { ok: 1 });
  assert.deepEqual(bare(await admin.command({ killAllSessionsByPattern: [{ lsid: { id: new UUID(), uid: record._id.uid } }, { uid: record._id.uid }] })), { ok: 1 });
  assert.deepEqual(bare(await admin.command({ killAllSessionsByPattern: [] })), { ok: 1 });
  assert.equal((await failure(admin.command({ killSessions: 'all' }))).code, 14);
  assert.equal((await failure(admin.command({ killSessions: [{ id: 'not a uuid' }] }))).code, 14);
  assert.equal((await failure(admin.command({ killAllSessionsByPattern: [{ everything: true }] }))).code, 40415);
  assert.equal((await failure(admin.command({ endSessions: [{}] }))).code, 40414);
}

describe('logical sessions on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;
  let db: Db;
  const raw = new WireClient();
  const host = () => `127.0.0.1:${node.port}`;

  withNode({ extraArgs: [...REFRESH, ...TTL_EVERY_SECOND] }, async (f) => {
    ({ node, client } = f);
    db = client.db('ls');
    await db.collection<AnyDoc>('owned').insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i })));
  });

  after(async () => {
    await raw.close();
  });

  it('answers the session commands, and keeps config.system.sessions of its own, as a standalone mongod', async () => {
    const hello = await db.command({ hello: 1 });
    assert.equal(hello.logicalSessionTimeoutMinutes, 30);
    await sessionCommandReplies(client, () => client.db('config').collection<AnyDoc>('system.sessions').find().toArray());
    const ttl = (await client.db('config').collection('system.sessions').listIndexes().toArray()).find((i) => i.name === 'lsidTTLIndex');
    assert.deepEqual([ttl?.key, ttl?.expireAfterSeconds], [{ lastUse: 1 }, 1800]);
  });

  it('refuses a getMore outside its cursor\'s session with 50736, 50737, 50738', async () => {
    await cursorBelongsToItsSession(client, db, raw, host(), [50736, 50737, 50738]);
  });

  it('killSessions interrupts the session\'s awaitData getMore and closes its cursors', async () => {
    await db.createCollection('capped', { capped: true, size: 64 * 1024 });
    await db.collection<AnyDoc>('capped').insertOne({ _id: 0 });
    const s = client.startSession();
    try {
      const tail = db.collection<AnyDoc>('capped').find({}, { tailable: true, awaitData: true, maxAwaitTimeMS: 20_000, batchSize: 1, session: s });
      assert.deepEqual(await tail.next(), { _id: 0 });
      const plain = db.collection<AnyDoc>('owned').find({}, { batchSize: 2, session: s });
      await plain.next();
      const waiting = failure(tail.next());
      await sleep(300);
      const before = await openCursors(node.uri);
      const killedAt = Date.now();
      assert.deepEqual(bare(await client.db('admin').command({ killSessions: [lsidOf(s)] })), { ok: 1 });
      const interrupted = await waiting;
      assert.equal(interrupted.code, 11601);
      assert.equal(interrupted.codeName, 'Interrupted');
      assert.ok(Date.now() - killedAt < 5_000, 'the getMore did not wait out its maxAwaitTimeMS');
      assert.equal(await openCursors(node.uri), before - 2);
      await plain.next();
      assert.equal((await failure(plain.next())).code, 43, 'the session\'s other cursor is gone');
    } finally {
      await s.endSession();
    }
  });
});

describe('logical sessions through a router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let db: Db;
  const raw = new WireClient();
  const routerHost = () => `127.0.0.1:${cluster.routers[0]!.port}`;
  const shardUris = () => cluster.shards.map((s) => s.uri);
  const sessionRecords = () => client.db('config').collection<AnyDoc>('system.sessions');
  const cursorCounts = async () => Promise.all([cluster.routers[0]!.uri, ...shardUris()].map(openCursors));

  withCluster({ shards: 2, shardArgs: REFRESH, configArgs: [...REFRESH, ...TTL_EVERY_SECOND], routerArgs: REFRESH }, async (f) => {
    ({ cluster, client } = f);
    db = client.db('ls');
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'ls', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'ls.sharded', key: { k: 1 } });
    await admin.command({ split: 'ls.sharded', middle: { k: 50 } });
    await admin.command({ moveChunk: 'ls.sharded', find: { k: 50 }, to: 'shard1' });
    await db.collection<AnyDoc>('sharded').insertMany(Array.from({ length: 100 }, (_, k) => ({ _id: k, k })));
    await db.collection<AnyDoc>('owned').insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i })));
  });

  after(async () => {
    await raw.close();
  });

  it('keeps config.system.sessions on the config server, sharded on {_id: 1} in one chunk', async () => {
    assert.equal((await db.command({ hello: 1 })).logicalSessionTimeoutMinutes, 30);
    const config = client.db('config');
    const coll = await config.collection<AnyDoc>('collections').findOne({ _id: 'config.system.sessions' });
    assert.deepEqual([coll?.key, coll?.unique], [{ _id: 1 }, false]);
    const chunks = await config.collection<AnyDoc>('chunks').find({ uuid: coll!.uuid }).toArray();
    assert.deepEqual(chunks.map((c) => [c.shard, Object.keys(c.min), c.min._id._bsontype, c.max._id._bsontype]), [['config', ['_id'], 'MinKey', 'MaxKey']]);
    const ttl = (await config.collection('system.sessions').listIndexes().toArray()).find((i) => i.name === 'lsidTTLIndex');
    assert.deepEqual([ttl?.key, ttl?.expireAfterSeconds], [{ lastUse: 1 }, 1800]);
  });

  it('answers the session commands as mongos does; its refresh writes to config.system.sessions', async () => {
    await sessionCommandReplies(client, () => sessionRecords().find().toArray());
  });

  it('refuses a getMore outside its cursor\'s session with 50799, 50800, 50801', async () => {
    await cursorBelongsToItsSession(client, db, raw, routerHost(), [50799, 50800, 50801]);
  });

  it('killSessions through the router closes the session\'s cursors on every shard', async () => {
    const before = await cursorCounts();
    const s = client.startSession();
    try {
      const cursor = db.collection<AnyDoc>('sharded').find({}, { batchSize: 2, session: s });
      await cursor.next();
      // The same session's cursor opened on shard0 directly: killSessions reaches it too.
      const direct: AnyDoc = await raw.command(`127.0.0.1:${cluster.shards[0]!.port}`, 'ls', { find: 'sharded', batchSize: 1, lsid: lsidOf(s) });
      const opened = await cursorCounts();
      assert.deepEqual(opened.map((n, i) => n - before[i]!), [1, 2, 1], 'a cluster cursor, both shards\' cursors and the direct one');
      assert.deepEqual(bare(await client.db('admin').command({ killSessions: [lsidOf(s)] })), { ok: 1 });
      assert.deepEqual(await cursorCounts(), before);
      const directMore: AnyDoc = await raw.command(`127.0.0.1:${cluster.shards[0]!.port}`, 'ls', { getMore: direct.cursor.id, collection: 'sharded', lsid: lsidOf(s) });
      assert.equal(directMore.code, 43);
      await cursor.next();
      assert.equal((await failure(cursor.next())).code, 43);
    } finally {
      await s.endSession();
    }
  });

  it('closes the cursors of a session that expired, at the refresh after its record is gone', async () => {
    const before = await cursorCounts();
    const s = client.startSession();
    try {
      const cursor = db.collection<AnyDoc>('sharded').find({}, { batchSize: 2, session: s });
      await cursor.next();
      const byId = { '_id.id': s.id!.id };
      await waitFor('the router to write the session to config.system.sessions', async () => (await sessionRecords().findOne(byId)) !== null, 10_000, 50);
      // Every process has written whatever use of the session it saw; nothing uses it now.
      await sleep(600);
      await sessionRecords().updateOne(byId, { $set: { lastUse: new Date(0) } });
      await waitFor('the session\'s cursors closed', async () => (await cursorCounts()).every((n, i) => n === before[i]), 15_000, 100);
      assert.equal(await sessionRecords().findOne(byId), null, 'the TTL monitor removed the expired record');
      await cursor.next();
      assert.equal((await failure(cursor.next())).code, 43);
    } finally {
      await s.endSession();
    }
  });
});
