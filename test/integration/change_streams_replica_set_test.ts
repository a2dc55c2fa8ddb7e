import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type ChangeStream, type Timestamp, type ChangeStreamDocument, type Document, type MongoClient, type ResumeToken } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Change streams on a real three-member set through the official driver: collection, database
// and cluster streams, each event type, transactions, resuming after every event, across a
// primary step-down, from an operation time, and MongoDB's errors for bad input; a standalone
// node still answers 40573.

type Event = ChangeStreamDocument<Document>;
type Loose = { _id?: number | string; [key: string]: any };

async function nextEvents(stream: ChangeStream<Document, Event>, n: number): Promise<Event[]> {
  const out: Event[] = [];
  while (out.length < n) out.push(await stream.next());
  return out;
}

function summary(e: Event): string {
  const d = e as Document;
  const id = d.documentKey === undefined ? '' : `:${JSON.stringify(d.documentKey._id)}`;
  return `${d.operationType}${id}`;
}

describe('change streams on a replica set', () => {
  let set: SpawnedReplicaSet;
  let client: MongoClient;
  let standalone: MongoClient;
  let p: SuiteProcesses;
  withProcesses(async (processes) => {
    p = processes;
    set = await p.replicaSet({ node: () => ({ extraArgs: ['--enableTestCommands'] }) });
    client = p.connect(set.uri, { serverSelectionTimeoutMS: 30_000 });
    const node = await p.node();
    standalone = p.connect(`mongodb://127.0.0.1:${node.port}/?directConnection=true`);
  });

  it('collection.watch() reports insert, update, replace, delete, then drop and invalidate', { timeout: 120_000 }, async () => {
    const coll = client.db('app').collection<Loose>('crud');
    await coll.insertOne({ _id: 0 });
    const stream = coll.watch([], { fullDocument: 'updateLookup' });
    await stream.tryNext();
    await coll.insertOne({ _id: 1, a: 1, arr: [1, 2, 3], sub: { x: 1, y: 2 } });
    await coll.updateOne({ _id: 1 }, { $set: { a: 2, 'sub.x': 5 }, $unset: { 'sub.y': 1 }, $push: { arr: 4 } } as Document);
    await coll.updateOne({ _id: 1 }, { $pop: { arr: 1 } });
    await coll.replaceOne({ _id: 1 }, { b: 1 });
    await coll.deleteOne({ _id: 1 });
    await coll.drop();
    const events = await nextEvents(stream, 7);
    assert.deepEqual(events.map(summary), ['insert:1', 'update:1', 'update:1', 'replace:1', 'delete:1', 'drop', 'invalidate']);
    const [insert, update, pop, replace, del, drop] = events as Document[];
    assert.deepEqual(insert!.fullDocument, { _id: 1, a: 1, arr: [1, 2, 3], sub: { x: 1, y: 2 } });
    assert.deepEqual(insert!.ns, { db: 'app', coll: 'crud' });
    assert.ok(insert!.clusterTime !== undefined && insert!.wallTime instanceof Date);
    assert.deepEqual(update!.updateDescription, { updatedFields: { a: 2, 'sub.x': 5, 'arr.3': 4 }, removedFields: ['sub.y'], truncatedArrays: [] });
    assert.equal(update!.fullDocument, null, 'updateLookup reads the document as it is when the event is read: deleted by then');
    assert.deepEqual(pop!.updateDescription, { updatedFields: {}, removedFields: [], truncatedArrays: [{ field: 'arr', newSize: 3 }] });
    assert.deepEqual(replace!.fullDocument, { _id: 1, b: 1 });
    assert.deepEqual(del!.documentKey, { _id: 1 });
    assert.equal(del!.fullDocument, undefined);
    assert.deepEqual(drop!.ns, { db: 'app', coll: 'crud' });
    assert.equal(stream.closed || (await stream.tryNext().catch(() => null)) === null, true);
    await stream.close();
  });

  it('showExpandedEvents shows DDL; rename invalidates a collection stream, dropDatabase a database stream', { timeout: 120_000 }, async () => {
    const db = client.db('ddl');
    await db.collection<Loose>('seed').insertOne({ _id: 1 });
    const dbStream = db.watch([], { showExpandedEvents: true });
    const plain = db.watch();
    await dbStream.tryNext();
    await plain.tryNext();
    await db.createCollection('made');
    const made = db.collection<Loose>('made');
    await made.createIndex({ a: 1 });
    const collStream = made.watch([], { showExpandedEvents: true });
    await collStream.tryNext();
    await db.command({ collMod: 'made', validationLevel: 'off' });
    await made.dropIndex('a_1');
    await made.updateOne({ _id: 1 }, { $set: { 'x.0': 1 } }, { upsert: true });
    await made.rename('renamed');
    await db.dropDatabase();
    const expanded = (await nextEvents(dbStream, 10)) as Document[];
    const types = expanded.map((e) => e.operationType);
    assert.deepEqual(types.slice(0, 6), ['create', 'createIndexes', 'modify', 'dropIndexes', 'insert', 'rename']);
    assert.deepEqual(types.slice(6), ['drop', 'drop', 'dropDatabase', 'invalidate']);
    assert.deepEqual(expanded[1]!.operationDescription.indexes[0].key, { a: 1 });
    assert.deepEqual(expanded[2]!.operationDescription, { validationLevel: 'off' });
    assert.ok(expanded.slice(0, 6).every((e) => e.collectionUUID !== undefined));
    assert.deepEqual(expanded[5]!.to, { db: 'ddl', coll: 'renamed' });
    const inCollection = (await nextEvents(collStream, 5)) as Document[];
    assert.deepEqual(inCollection.map((e) => e.operationType), ['modify', 'dropIndexes', 'insert', 'rename', 'invalidate']);
    const classic = (await nextEvents(plain, 3)) as Document[];
    assert.deepEqual(classic.map((e) => e.operationType), ['insert', 'rename', 'drop']);
    // startAfter an invalidate starts the stream after it.
    const invalidate = inCollection[4]!;
    const after = made.watch([], { startAfter: invalidate._id });
    await client.db('ddl').collection<Loose>('made').insertOne({ _id: 'again' });
    assert.equal(summary(await after.next()), 'insert:"again"');
    await after.close();
    await assert.rejects(made.watch([], { resumeAfter: invalidate._id }).next(), (err: unknown) => err instanceof MongoServerError && err.code === 260);
    for (const st of [dbStream, plain, collStream]) await st.close();
  });

  it('a stream on a secondary sees the primary\'s writes once they are majority-committed', { timeout: 120_000 }, async () => {
    const hello = await client.db('admin').command({ hello: 1 });
    const secondary = (hello.hosts as string[]).find((h) => h !== hello.primary)!;
    const direct = p.connect(`mongodb://${secondary}/?directConnection=true&readPreference=secondaryPreferred`);
    const stream = direct.db('app').collection<Loose>('onsecondary').watch();
    await stream.tryNext();
    await client.db('app').collection<Loose>('onsecondary').insertMany([{ _id: 1 }, { _id: 2 }], { writeConcern: { w: 'majority' } });
    assert.deepEqual((await nextEvents(stream, 2)).map(summary), ['insert:1', 'insert:2']);
    await stream.close();
  });

  it('updateLookup reads the current document; pre- and post-images follow changeStreamPreAndPostImages', { timeout: 120_000 }, async () => {
    const db = client.db('images');
    await db.createCollection('on', { changeStreamPreAndPostImages: { enabled: true } });
    await db.createCollection('off');
    const on = db.collection<Loose>('on');
    const off = db.collection<Loose>('off');
    await on.insertOne({ _id: 1, v: 1 });
    await off.insertOne({ _id: 1, v: 1 });
    const lookup = off.watch([], { fullDocument: 'updateLookup' });
    const images = on.watch([], { fullDocument: 'required', fullDocumentBeforeChange: 'required' });
    const whenAvailable = off.watch([], { fullDocument: 'whenAvailable', fullDocumentBeforeChange: 'whenAvailable' });
    const required = off.watch([], { fullDocumentBeforeChange: 'required' });
    for (const s of [lookup, images, whenAvailable, required]) await s.tryNext();
    await on.updateOne({ _id: 1 }, { $inc: { v: 1 } });
    await on.updateOne({ _id: 1 }, { $inc: { v: 1 } });
    await on.deleteOne({ _id: 1 });
    await off.updateOne({ _id: 1 }, { $inc: { v: 1 } });
    const looked = (await lookup.next()) as Document;
    assert.deepEqual(looked.fullDocument, { _id: 1, v: 2 });
    const [u1, u2, d] = (await nextEvents(images, 3)) as Document[];
    assert.deepEqual([u1!.fullDocumentBeforeChange, u1!.fullDocument], [{ _id: 1, v: 1 }, { _id: 1, v: 2 }]);
    assert.deepEqual([u2!.fullDocumentBeforeChange, u2!.fullDocument], [{ _id: 1, v: 2 }, { _id: 1, v: 3 }], 'exact images at each event, not the latest');
    assert.deepEqual(d!.fullDocumentBeforeChange, { _id: 1, v: 3 });
    const none = (await whenAvailable.next()) as Document;
    assert.deepEqual([none.fullDocument, none.fullDocumentBeforeChange], [null, null]);
    await assert.rejects(required.next(), (err: unknown) => err instanceof MongoServerError && err.code === 47);
    for (const s of [lookup, images, whenAvailable, required]) await s.close().catch(() => undefined);
  });

  it('resuming after each event yields exactly the events after it, and tokens grow', { timeout: 120_000 }, async () => {
    const coll = client.db('app').collection<Loose>('resume');
    await coll.insertOne({ _id: 'seed' });
    const stream = coll.watch();
    await stream.tryNext();
    for (let i = 0; i < 5; i++) await coll.insertOne({ _id: i });
    await coll.updateOne({ _id: 2 }, { $set: { x: 1 } });
    await coll.deleteOne({ _id: 3 });
    const all = await nextEvents(stream, 7);
    await stream.close();
    const tokens = all.map((e) => (e._id as { _data: string })._data);
    assert.deepEqual([...tokens].sort(), tokens, 'tokens order as strings');
    for (let i = 0; i < all.length; i++) {
      const resumed = coll.watch([], { resumeAfter: all[i]!._id as ResumeToken });
      const rest = await nextEvents(resumed, all.length - i - 1);
      assert.deepEqual(rest.map(summary), all.slice(i + 1).map(summary), `after event ${i}`);
      assert.equal(await resumed.tryNext(), null);
      await resumed.close();
    }
    const started = coll.watch([], { startAtOperationTime: (all[2] as Document).clusterTime });
    assert.deepEqual((await nextEvents(started, 5)).map(summary), all.slice(2).map(summary));
    await started.close();
  });

  it('db.watch() and client.watch() see every collection; a transaction\'s events share its time and carry its session', { timeout: 120_000 }, async () => {
    const db = client.db('txn');
    await db.collection<Loose>('a').insertOne({ _id: 'seed' });
    await db.collection<Loose>('b').insertOne({ _id: 'seed' });
    const dbStream = db.watch();
    const clusterStream = client.watch();
    await dbStream.tryNext();
    await clusterStream.tryNext();
    const session = client.startSession();
    try {
      await session.withTransaction(async () => {
        await db.collection<Loose>('a').insertOne({ _id: 1 }, { session });
        await db.collection<Loose>('b').insertOne({ _id: 2 }, { session });
        await db.collection<Loose>('a').updateOne({ _id: 'seed' }, { $set: { t: 1 } }, { session });
      });
    } finally {
      await session.endSession();
    }
    await client.db('other').collection<Loose>('c').insertOne({ _id: 9 });
    const events = (await nextEvents(dbStream, 3)) as Document[];
    // One event per document the transaction left changed, in the order its commit applied them.
    assert.deepEqual(events.map((e) => `${e.operationType}:${e.ns.coll}`).sort(), ['insert:a', 'insert:b', 'update:a']);
    const tokens = events.map((e) => e._id._data as string);
    assert.deepEqual([...tokens].sort(), tokens);
    assert.ok(events.every((e) => e.clusterTime.equals(events[0]!.clusterTime)), 'one commit time');
    assert.ok(events.every((e) => e.lsid !== undefined && e.txnNumber !== undefined));
    const clusterEvents = (await nextEvents(clusterStream, 4)) as Document[];
    assert.deepEqual(clusterEvents.map((e) => e._id._data), [...tokens, clusterEvents[3]!._id._data]);
    assert.deepEqual(`${clusterEvents[3]!.ns.db}.${clusterEvents[3]!.ns.coll}`, 'other.c');
    await dbStream.close();
    await clusterStream.close();
  });

  it('every reply carries a postBatchResumeToken that never goes backwards, and advances while nothing watched changes', { timeout: 120_000 }, async () => {
    const db = client.db('pbrt');
    await db.collection<Loose>('watched').insertOne({ _id: 0 });
    const first = await db.command({ aggregate: 'watched', pipeline: [{ $changeStream: {} }], cursor: {} });
    const tokens: string[] = [first.cursor.postBatchResumeToken._data];
    assert.ok(first.operationTime !== undefined);
    for (let i = 0; i < 4; i++) {
      await db.collection<Loose>('other').insertOne({ i }, { writeConcern: { w: 'majority' } });
      const more = await db.command({ getMore: first.cursor.id, collection: 'watched', maxTimeMS: 300 });
      assert.deepEqual(more.cursor.nextBatch, []);
      assert.ok(more.operationTime !== undefined);
      tokens.push(more.cursor.postBatchResumeToken._data);
    }
    assert.deepEqual([...tokens].sort(), tokens);
    assert.ok(tokens.at(-1)! > tokens[0]!, 'it moved while only another collection changed');
    await db.command({ killCursors: 'watched', cursors: [first.cursor.id] });
  });

  it('a secondary that fetched writes it has not applied yet: a causal read waits for them, and its stream promises nothing past them', { timeout: 120_000 }, async () => {
    const secondary = await until('a secondary', async () => {
      for (const host of set.hosts) {
        const direct = p.connect(`mongodb://${host}/?directConnection=true`);
        if ((await direct.db('admin').command({ hello: 1 })).secondary === true) return direct;
      }
      return undefined;
    });
    const db = secondary.db('lag');
    await client.db('lag').collection<Loose>('c').insertOne({ _id: 'before' }, { writeConcern: { w: 3 } });
    const opened = await db.command({ aggregate: 'c', pipeline: [{ $changeStream: {} }], cursor: {} });
    const promised: string[] = [opened.cursor.postBatchResumeToken._data];
    await secondary.db('admin').command({ configureFailPoint: 'rsSyncApplyStop', mode: 'alwaysOn' });
    let after: Timestamp | undefined;
    try {
      // Majority-committed by the primary and the other secondary; this one fetches them (one batch:
      // one write unit) and holds them.
      const session = client.startSession({ causalConsistency: true });
      await client.db('lag').collection<Loose>('c').insertMany([{ _id: 'x' }, { _id: 'y' }], { session, writeConcern: { w: 'majority' } });
      // A later write the stream does not watch takes the commit point past them.
      await client.db('lag').collection<Loose>('other').insertOne({ _id: 'z' }, { session, writeConcern: { w: 'majority' } });
      after = session.operationTime!;
      await session.endSession();
      // Long enough for it to take both and learn the commit point past them (a heartbeat: 2 s).
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await assert.rejects(db.command({ find: 'c', filter: { _id: 'y' }, readConcern: { afterClusterTime: after }, maxTimeMS: 1000 }), (err: unknown) => err instanceof MongoServerError && err.code === 50,
        'a causal read waits for what it must see rather than answer without it');
      for (let i = 0; i < 3; i++) {
        const more = await db.command({ getMore: opened.cursor.id, collection: 'c', maxTimeMS: 300 });
        assert.deepEqual(more.cursor.nextBatch, []);
        promised.push(more.cursor.postBatchResumeToken._data);
      }
    } finally {
      await secondary.db('admin').command({ configureFailPoint: 'rsSyncApplyStop', mode: 'off' });
    }
    const found = await db.command({ find: 'c', filter: { _id: { $in: ['x', 'y'] } }, readConcern: { afterClusterTime: after }, maxTimeMS: 30_000 });
    assert.equal(found.cursor.firstBatch.length, 2);
    const events: Document[] = [];
    while (events.length < 2) {
      const more = await db.command({ getMore: opened.cursor.id, collection: 'c', maxTimeMS: 1000 });
      events.push(...(more.cursor.nextBatch as Document[]));
    }
    assert.deepEqual(events.map((e) => e.documentKey._id), ['x', 'y']);
    const firstEvent = String(events[0]!._id._data);
    assert.ok(promised.every((token) => token < firstEvent), 'no token given while the writes were held promised past them');
    await db.command({ killCursors: 'c', cursors: [opened.cursor.id] });
  });

  it('the driver resumes across a primary step-down without losing or repeating an event', { timeout: 180_000 }, async () => {
    const coll = client.db('app').collection<Loose>('failover');
    await coll.insertOne({ _id: 'seed' }, { writeConcern: { w: 'majority' } });
    const stream = coll.watch();
    await stream.tryNext();
    for (let i = 0; i < 3; i++) await coll.insertOne({ _id: i }, { writeConcern: { w: 'majority' } });
    const before = await nextEvents(stream, 3);
    await client.db('admin').command({ replSetStepDown: 10, secondaryCatchUpPeriodSecs: 5 }).catch(() => undefined);
    for (let i = 3; i < 6; i++) {
      for (let attempt = 0; ; attempt++) {
        try {
          await coll.insertOne({ _id: i }, { writeConcern: { w: 'majority' } });
          break;
        } catch (err) {
          if (attempt > 60) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
    const after = await nextEvents(stream, 3);
    assert.deepEqual([...before, ...after].map(summary), [0, 1, 2, 3, 4, 5].map((i) => `insert:${i}`));
    await stream.close();
  });

  it('bad input answers MongoDB\'s errors and the set keeps serving', { timeout: 120_000 }, async () => {
    const db = client.db('app');
    const code = async (pipeline: Document[], target: string | 1 = 'bad', dbName = 'app'): Promise<number | undefined> => {
      try {
        await client.db(dbName).command({ aggregate: target, pipeline, cursor: {} });
      } catch (err) {
        return Number((err as MongoServerError).code);
      }
      return undefined;
    };
    await db.collection<Loose>('bad').insertOne({ _id: 1 }, { writeConcern: { w: 'majority' } });
    const other = db.collection<Loose>('bad2');
    await other.insertOne({ _id: 1 }, { writeConcern: { w: 'majority' } });
    const otherStream = other.watch();
    await otherStream.tryNext();
    await other.insertOne({ _id: 2 }, { writeConcern: { w: 'majority' } });
    const otherToken = (await otherStream.next())._id as { _data: string };
    await otherStream.close();
    assert.equal(await code([{ $changeStream: { resumeAfter: { _data: 'nothex' } } }]), 9);
    assert.equal(await code([{ $changeStream: { resumeAfter: { _data: 1 } } }]), 40647);
    assert.equal(await code([{ $changeStream: { resumeAfter: otherToken, startAtOperationTime: new (await import('bson')).Timestamp({ t: 1, i: 1 }) } }]), 40674);
    assert.equal(await code([{ $changeStream: { resumeAfter: otherToken, startAfter: otherToken } }]), 50865);
    assert.equal(await code([{ $changeStream: {} }, { $group: { _id: null } }]), 20);
    assert.equal(await code([{ $match: {} }, { $changeStream: {} }]), 40602);
    assert.equal(await code([{ $changeStream: { fullDocument: 'sometimes' } }]), 2);
    assert.equal(await code([{ $changeStream: {} }], 1, 'admin'), 73);
    // A token of another collection's event is not found in this collection's stream.
    await db.collection<Loose>('bad').insertOne({ _id: 2 }, { writeConcern: { w: 'majority' } });
    const foreign = db.collection<Loose>('bad').watch([], { resumeAfter: otherToken });
    await assert.rejects(foreign.next(), (err: unknown) => err instanceof MongoServerError && err.code === 280 && err.hasErrorLabel('NonResumableChangeStreamError'));
    await foreign.close();
    // A stage that changes _id ends the stream with ChangeStreamFatalError.
    const changed = db.collection<Loose>('bad').watch([{ $set: { _id: 1 } }]);
    await changed.tryNext();
    await db.collection<Loose>('bad').insertOne({ _id: 3 }, { writeConcern: { w: 'majority' } });
    await assert.rejects(changed.next(), (err: unknown) => err instanceof MongoServerError && err.code === 280);
    await changed.close().catch(() => undefined);
    const session = client.startSession();
    session.startTransaction();
    await assert.rejects(db.command({ aggregate: 'bad', pipeline: [{ $changeStream: {} }], cursor: {} }, { session }), (err: unknown) => err instanceof MongoServerError && err.code === 263);
    await session.abortTransaction().catch(() => undefined);
    await session.endSession();
    await assert.rejects(standalone.db('app').collection<Loose>('c').watch().next(), (err: unknown) => err instanceof MongoServerError && err.code === 40573);
    assert.equal(await db.collection<Loose>('bad').countDocuments(), 3);
    assert.equal((await standalone.db('admin').command({ ping: 1 })).ok, 1);
  });
});
