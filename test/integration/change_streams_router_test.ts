import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeStream, ChangeStreamDocument, Document, MongoClient, ResumeToken } from 'mongodb';
import { MongoServerError } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';

type Event = ChangeStreamDocument & Document;

// Change streams through a router over two single-member replica-set shards: the router opens the
// stream on both shards and merges them by resume token.
describe('change streams through a router', () => {
  let router: MongoClient;
  let second: MongoClient;
  // The first shard's member, read directly: its oplog (region y is on the second shard).
  let idleShard: MongoClient;
  let spawn: Parameters<Parameters<typeof withProcesses>[0]>[0];

  withProcesses(async (p) => {
    spawn = p;
    const config = await p.node({ role: 'config' });
    const sets = [];
    // No periodic session refresh writes to a shard while the idle-shard case watches its oplog.
    const quiet = ['--setParameter', 'logicalSessionRefreshMillis=3600000'];
    for (const name of ['rs0', 'rs1']) sets.push(await p.replicaSet({ name, members: 1, node: () => ({ extraArgs: ['--setParameter', 'orphanCleanupDelaySecs=0', ...quiet] }) }));
    router = p.connect((await p.router(config.port, quiet)).uri);
    second = p.connect((await p.router(config.port, quiet)).uri);
    idleShard = p.connect(`mongodb://${sets[0]!.hosts[0]!}/?directConnection=true`);
    for (const set of sets) await router.db('admin').command({ addShard: `${set.name}/${set.hosts.join(',')}` });
    await router.db('admin').command({ enableSharding: 'app', primaryShard: 'rs0' });
    await router.db('admin').command({ shardCollection: 'app.items', key: { region: 1 } });
    await router.db('admin').command({ split: 'app.items', middle: { region: 'm' } });
    await router.db('admin').command({ moveChunk: 'app.items', find: { region: 'z' }, to: 'rs1', _waitForDelete: true });
  });

  async function take(stream: ChangeStream<AnyDoc>, n: number): Promise<Event[]> {
    const out: Event[] = [];
    while (out.length < n) out.push(await stream.next() as Event);
    return out;
  }

  const summary = (events: Event[]): unknown[] => events.map((e) => [e.operationType, e.documentKey?._id]);

  it('sees the writes on both shards in commit order, once each, and resumes after each event with the suffix', { timeout: 180_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const stream = items.watch();
    await stream.tryNext();
    await items.insertOne({ _id: 1, region: 'a' });
    await items.insertOne({ _id: 2, region: 'z' });
    await items.updateOne({ region: 'a', _id: 1 }, { $set: { v: 1 } });
    await items.updateOne({ region: 'z', _id: 2 }, { $set: { v: 2 } });
    await items.deleteOne({ region: 'a', _id: 1 });
    await items.insertOne({ _id: 3, region: 'b' });
    const events = await take(stream, 6);
    assert.deepEqual(summary(events), [['insert', 1], ['insert', 2], ['update', 1], ['update', 2], ['delete', 1], ['insert', 3]]);
    assert.deepEqual(events[1]!.documentKey, { region: 'z', _id: 2 });
    const tokens = events.map((e) => (e._id as { _data: string })._data);
    assert.deepEqual([...tokens].sort(), tokens, 'tokens grow with the events');
    assert.equal(await stream.tryNext(), null, 'no event twice');
    await stream.close();

    // Resumed on the other router, after each event: exactly what followed it.
    for (let i = 0; i < events.length; i++) {
      const resumed = second.db('app').collection<AnyDoc>('items').watch([], { resumeAfter: events[i]!._id as ResumeToken });
      const rest = await take(resumed, events.length - 1 - i);
      assert.deepEqual(summary(rest), summary(events.slice(i + 1)), `resumed after event ${i}`);
      assert.equal(await resumed.tryNext(), null);
      await resumed.close();
    }
  });

  // mongos starts a new stream one tick after its cluster time, which the write's reply advanced
  // to at least the write's own time: the write is before the stream, however soon it opens.
  it('a stream opened just after a write does not show that write', { timeout: 120_000 }, async () => {
    for (let i = 0; i < 6; i++) {
      // The sharded collection, and a collection the first insert creates.
      const items = i % 2 === 0 ? router.db('app').collection<AnyDoc>('items') : router.db(`fresh${i}`).collection<AnyDoc>('items');
      await items.insertOne({ _id: `before-${i}`, region: 'c' });
      const stream = items.watch();
      await stream.tryNext();
      await items.insertOne({ _id: `after-${i}`, region: 'c' });
      assert.deepEqual(summary(await take(stream, 1)), [['insert', `after-${i}`]]);
      await stream.close();
    }
  });

  it('under concurrent writers on both shards, every write is one event, in token order', { timeout: 180_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const stream = items.watch();
    await stream.tryNext();
    const writer = async (base: number, region: string, via: MongoClient): Promise<void> => {
      for (let i = 0; i < 40; i++) await via.db('app').collection<AnyDoc>('items').insertOne({ _id: base + i, region });
    };
    await Promise.all([writer(1000, 'g', router), writer(2000, 'w', second), writer(3000, 'h', second), writer(4000, 'v', router)]);
    const events = await take(stream, 160);
    const ids = events.map((e) => e.documentKey?._id as number);
    assert.equal(new Set(ids).size, 160, 'each write once');
    const tokens = events.map((e) => (e._id as { _data: string })._data);
    assert.ok(tokens.every((t, i) => i === 0 || t > tokens[i - 1]!), 'in token order');
    for (const base of [1000, 2000, 3000, 4000]) {
      const mine = ids.filter((id) => id >= base && id < base + 1000);
      assert.deepEqual(mine, [...mine].sort((a, b) => a - b), `writer ${base}'s inserts in its order`);
    }
    assert.equal(await stream.tryNext(), null);
    await stream.close();
  });

  // Replies past the 64 KB a reply is first written into: such a batch once reached the driver
  // with a string's length prefix lost (raw_bson.ts).
  it('delivers events of 10 to 40 KB whole', { timeout: 120_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const stream = items.watch();
    await stream.tryNext();
    const docs = Array.from({ length: 24 }, (_, i) => ({ _id: `big-${i}`, region: i % 2 === 0 ? 'b' : 'y', pad: String(i % 10).repeat(10_000 + (i % 4) * 10_000) }));
    await items.insertMany(docs);
    const events = await take(stream, docs.length);
    assert.deepEqual(events.map((e) => e.fullDocument).sort((a, b) => String(a._id).localeCompare(String(b._id))), [...docs].sort((a, b) => a._id.localeCompare(b._id)));
    await stream.close();
    await items.deleteMany({ _id: { $in: docs.map((d) => d._id) } });
  });

  it('shows a transaction over both shards once per document, with its session', { timeout: 120_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const stream = items.watch();
    await stream.tryNext();
    const session = router.startSession();
    await session.withTransaction(async () => {
      await items.insertOne({ _id: 70, region: 'a' }, { session });
      await items.insertOne({ _id: 71, region: 'z' }, { session });
    });
    await session.endSession();
    const events = await take(stream, 2);
    assert.deepEqual(events.map((e) => e.documentKey?._id).sort(), [70, 71]);
    for (const e of events) assert.ok(e.lsid !== undefined && e.txnNumber !== undefined, 'a transaction event carries its session');
    assert.equal(await stream.tryNext(), null);
    await stream.close();
  });

  it('shows no event for a moveChunk, and updateLookup reads the document through the router', { timeout: 180_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    await items.insertOne({ _id: 10, region: 'c' });
    const stream = items.watch([], { fullDocument: 'updateLookup' });
    await stream.tryNext();
    await router.db('admin').command({ moveChunk: 'app.items', find: { region: 'c' }, to: 'rs1', _waitForDelete: true });
    await router.db('admin').command({ moveChunk: 'app.items', find: { region: 'c' }, to: 'rs0', _waitForDelete: true });
    await items.updateOne({ region: 'c', _id: 10 }, { $set: { v: 'after' } });
    const [event] = await take(stream, 1);
    assert.equal(event!.operationType, 'update', 'the migrations gave no event');
    assert.deepEqual(event!.fullDocument, { _id: 10, region: 'c', v: 'after' });
    await stream.close();
  });

  // Beyond mongos, which waits for the idle shard's periodic no-op: a shard's getMore promises
  // past its clock (which the router's getMore moved past the event's time) with no write, so the
  // idle shard's oplog gains no entry, neither while the stream idles nor for the event to go out.
  it('delivers an event on one shard while the other is idle in under a second, with no write on the idle shard', { timeout: 120_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const newestEntry = async (): Promise<unknown> => (await idleShard.db('local').collection('oplog.rs').find({}, { sort: { ts: -1 }, limit: 1 }).toArray())[0]?.ts;
    const stream = items.watch([], { maxAwaitTimeMS: 1000 });
    await stream.tryNext();
    const idleSince = await newestEntry();
    const before = (stream.resumeToken as { _data: string })._data;
    // Nothing written for a while: both shards are idle, and the postBatchResumeToken still moves.
    for (const until = Date.now() + 2500; Date.now() < until;) assert.equal(await stream.tryNext(), null);
    const after = (stream.resumeToken as { _data: string })._data;
    assert.ok(after > before, `the postBatchResumeToken moved while the shards were idle: ${before} -> ${after}`);
    const started = Date.now();
    await items.insertOne({ _id: 20, region: 'y' });
    const event = await Promise.race([stream.next() as Promise<Event>, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event in 10 s')), 10_000))]);
    const ms = Date.now() - started;
    // From the commit (the event's wallTime, the shard's clock on this machine) to the client.
    const delivery = Date.now() - (event!.wallTime as Date).getTime();
    console.log(`change stream delivery through the router with the other shard idle: ${delivery} ms from the commit, ${ms} ms from sending the write`);
    assert.equal(event!.documentKey?._id, 20);
    const last = await idleShard.db('local').collection('oplog.rs').find({ ts: { $gt: idleSince } }).toArray();
    assert.deepEqual(last, [], 'no write on the idle shard');
    assert.ok(delivery < 1000, `delivered ${delivery} ms after the commit`);
    await stream.close();
  });

  it('db.watch() and client.watch() see both shards', { timeout: 120_000 }, async () => {
    const dbStream = router.db('app').watch();
    const clusterStream = router.watch();
    await dbStream.tryNext();
    await clusterStream.tryNext();
    await router.db('app').collection<AnyDoc>('items').insertOne({ _id: 30, region: 'x' });
    await router.db('app').collection<AnyDoc>('items').insertOne({ _id: 31, region: 'd' });
    await router.db('other').collection<AnyDoc>('things').insertOne({ _id: 32 });
    const fromDb = await take(dbStream as unknown as ChangeStream<AnyDoc>, 2);
    assert.deepEqual(summary(fromDb), [['insert', 30], ['insert', 31]]);
    const fromCluster = await take(clusterStream as unknown as ChangeStream<AnyDoc>, 3);
    assert.deepEqual(fromCluster.map((e) => [e.operationType, (e as { ns: { db: string } }).ns.db, e.documentKey?._id]), [['insert', 'app', 30], ['insert', 'app', 31], ['insert', 'other', 32]]);
    await dbStream.close();
    await clusterStream.close();
  });

  it('bad input answers MongoDB errors and the router keeps serving', { timeout: 60_000 }, async () => {
    const db = router.db('app');
    const fails = async (pipeline: Document[], code: number): Promise<void> => {
      await assert.rejects(db.command({ aggregate: 'items', pipeline, cursor: {} }), (err: unknown) => err instanceof MongoServerError && err.code === code);
    };
    await fails([{ $changeStream: { resumeAfter: { _data: 'zz' } } }], 9);
    await fails([{ $changeStream: { resumeAfter: { _data: '00' }, startAfter: { _data: '00' } } }], 50865);
    await fails([{ $changeStream: {} }, { $group: { _id: null } }], 20);
    await fails([{ $changeStream: { bogus: 1 } }], 40415);
    // A token of another collection's event is not found in this one's stream: 280, not resumable.
    const items = db.collection<AnyDoc>('items');
    const source = items.watch();
    await source.tryNext();
    await items.insertOne({ _id: 60, region: 'f' });
    const [other] = await take(source, 1);
    await source.close();
    const wrong = db.collection<AnyDoc>('elsewhere').watch([], { resumeAfter: other!._id as ResumeToken });
    await db.collection<AnyDoc>('elsewhere').insertOne({ _id: 1 });
    await assert.rejects(wrong.next(), (err: unknown) => err instanceof MongoServerError && err.code === 280 && err.hasErrorLabel('NonResumableChangeStreamError'));
    await wrong.close();
    assert.equal((await db.collection<AnyDoc>('items').countDocuments({ _id: { $gte: 0 } })) > 0, true);
  });

  it('a shard added to the cluster joins an open stream', { timeout: 180_000 }, async () => {
    const items = router.db('app').collection<AnyDoc>('items');
    const stream = items.watch();
    await stream.tryNext();
    const set = await spawn.replicaSet({ name: 'rs2', members: 1 });
    await router.db('admin').command({ addShard: `${set.name}/${set.hosts.join(',')}` });
    // The router looks for new shards once a second while the stream is read.
    for (const until = Date.now() + 2500; Date.now() < until;) assert.equal(await stream.tryNext(), null);
    await router.db('admin').command({ split: 'app.items', middle: { region: 'r' } });
    await router.db('admin').command({ moveChunk: 'app.items', find: { region: 's' }, to: 'rs2', _waitForDelete: true });
    await items.insertOne({ _id: 50, region: 's' });
    const event = await Promise.race([stream.next() as Promise<Event>, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event from the new shard in 20 s')), 20_000))]);
    assert.deepEqual([event!.operationType, event!.documentKey], ['insert', { region: 's', _id: 50 }]);
    await stream.close();
  });

  it('a drop of the sharded collection is one drop and one invalidate, and one drop on a database stream', { timeout: 120_000 }, async () => {
    await router.db('admin').command({ shardCollection: 'app.gone', key: { k: 1 } });
    await router.db('admin').command({ split: 'app.gone', middle: { k: 0 } });
    await router.db('admin').command({ moveChunk: 'app.gone', find: { k: 5 }, to: 'rs1', _waitForDelete: true });
    const gone = router.db('app').collection<AnyDoc>('gone');
    await gone.insertMany([{ _id: 1, k: -1 }, { _id: 2, k: 1 }]);
    const stream = gone.watch();
    const dbStream = router.db('app').watch() as unknown as ChangeStream<AnyDoc>;
    await stream.tryNext();
    await dbStream.tryNext();
    await gone.drop();
    await router.db('app').collection<AnyDoc>('items').insertOne({ _id: 40, region: 'e' });
    const events = await take(stream, 2);
    assert.deepEqual(events.map((e) => e.operationType), ['drop', 'invalidate']);
    assert.equal(stream.closed || (await stream.tryNext().catch(() => null)) === null, true);
    const onDb = await take(dbStream, 2);
    assert.deepEqual(onDb.map((e) => [e.operationType, (e as { ns: { coll: string } }).ns.coll]), [['drop', 'gone'], ['insert', 'items']], 'each shard dropped its part; the drop shows once');
    await dbStream.close();

    // startAfter the invalidate: the collection of the name made again, sharded over both shards.
    await router.db('admin').command({ shardCollection: 'app.gone', key: { k: 1 } });
    await router.db('admin').command({ split: 'app.gone', middle: { k: 0 } });
    await router.db('admin').command({ moveChunk: 'app.gone', find: { k: 5 }, to: 'rs1', _waitForDelete: true });
    await gone.insertMany([{ _id: 3, k: -1 }, { _id: 4, k: 1 }]);
    const after = gone.watch([], { startAfter: events[1]!._id as ResumeToken });
    const again = await take(after, 2);
    assert.deepEqual(summary(again), [['insert', 3], ['insert', 4]], "the other shard's drop is passed over, and both shards go on");
    await after.close();
  });
});
