import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, UUID, type ClientSession, type Db } from 'mongodb';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

// Issue 20, retryable writes on a node: a statement sent again with the same (lsid, txnNumber,
// stmtId) is answered with what it did the first time and does not run again, across kill -9; the
// errors are MongoDB's.
describe('retryable writes on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    ({ node, client } = f);
    db = client.db('rw');
    f.processes.beforeStop(async () => {
      for (const s of sessions) await s.endSession();
      // A test restarts the node: the one running at the end is stopped.
      await node.stop();
    });
  });

  // The driver puts its own session's lsid on every command, so each test runs its commands in a
  // session of its own (kept open, so its server session is not handed to another).
  const sessions: ClientSession[] = [];
  const inSession = () => {
    const s = client.startSession();
    sessions.push(s);
    return (cmd: AnyDoc) => db.command(cmd, { session: s });
  };
  const txn = (n: number) => Long.fromNumber(n);

  it('an update sent twice increments once and answers the first reply again, with retriedStmtIds', async () => {
    await db.collection<AnyDoc>('counters').insertOne({ _id: 1, n: 0 });
    const run = inSession();
    const cmd = { update: 'counters', updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } } }], txnNumber: txn(1) };
    const first = await run(cmd);
    const again = await run(cmd);
    assert.deepEqual([first.n, first.nModified, first.retriedStmtIds], [1, 1, undefined]);
    assert.deepEqual([again.n, again.nModified, again.retriedStmtIds], [1, 1, [0]]);
    assert.equal((await db.collection<AnyDoc>('counters').findOne({ _id: 1 }))!.n, 1);
  });

  it('an insert retried answers success with its original _id, and a batch runs only the statements that did not', async () => {
    const run = inSession();
    const first = await run({ insert: 'docs', documents: [{ _id: 'a' }], txnNumber: txn(1) });
    assert.equal(first.n, 1);
    const retried = await run({ insert: 'docs', documents: [{ _id: 'a' }, { _id: 'b' }], txnNumber: txn(1) });
    assert.deepEqual([retried.n, retried.writeErrors, retried.retriedStmtIds], [2, undefined, [0]]);
    assert.deepEqual((await db.collection<AnyDoc>('docs').find().sort({ _id: 1 }).toArray()).map((d) => d._id), ['a', 'b']);
  });

  it('an upsert retried answers with the same upserted _id and inserts nothing more', async () => {
    const run = inSession();
    const cmd = { update: 'upserts', updates: [{ q: { k: 1 }, u: { $inc: { n: 1 } }, upsert: true }], txnNumber: txn(7) };
    const first = await run(cmd);
    const again = await run(cmd);
    assert.deepEqual(again.upserted, first.upserted);
    assert.equal(await db.collection('upserts').countDocuments(), 1);
  });

  it('a findAndModify retried returns the original document', async () => {
    await db.collection<AnyDoc>('fam').insertOne({ _id: 1, n: 0 });
    const run = inSession();
    const cmd = { findAndModify: 'fam', query: { _id: 1 }, update: { $inc: { n: 1 } }, new: true, fields: { n: 1 }, txnNumber: txn(1) };
    const first = await run(cmd);
    const again = await run(cmd);
    assert.deepEqual(first.value, { _id: 1, n: 1 });
    assert.deepEqual(again.value, first.value);
    assert.deepEqual(again.lastErrorObject, first.lastErrorObject);
    assert.equal((await db.collection<AnyDoc>('fam').findOne({ _id: 1 }))!.n, 1);
    const removed = { findAndModify: 'fam', query: { _id: 1 }, remove: true, txnNumber: txn(2) };
    const gone = await run(removed);
    assert.deepEqual((await run(removed)).value, gone.value, 'a retried remove returns the removed document');
  });

  it('a retry after kill -9 and restart of the node is still recognised', async () => {
    await db.collection<AnyDoc>('durable').insertOne({ _id: 1, n: 0 });
    const run = inSession();
    const cmd = { update: 'durable', updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } } }], txnNumber: txn(4) };
    await run(cmd);
    await node.kill9();
    node = await restartNode(node, { role: 'shard' });
    // The client reconnects to the restarted node (same port); its session is the same.
    let again: AnyDoc;
    for (let attempt = 0; ; attempt++) {
      try {
        again = await run(cmd);
        break;
      } catch (err) {
        if (attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.deepEqual(again!.retriedStmtIds, [0]);
    assert.equal((await db.collection<AnyDoc>('durable').findOne({ _id: 1 }))!.n, 1);
  });

  it('refuses an older txnNumber, multi and limit 0 retryable writes, and a txnNumber on other commands', async () => {
    const run = inSession();
    await run({ insert: 'refusals', documents: [{}], txnNumber: txn(5) });
    await assert.rejects(run({ insert: 'refusals', documents: [{}], txnNumber: txn(4) }), { code: 225, codeName: 'TransactionTooOld' });
    await assert.rejects(run({ update: 'refusals', updates: [{ q: {}, u: { $set: { x: 1 } }, multi: true }], txnNumber: txn(6) }), { code: 72 });
    await assert.rejects(run({ delete: 'refusals', deletes: [{ q: {}, limit: 0 }], txnNumber: txn(6) }), { code: 72 });
    await assert.rejects(run({ find: 'refusals', txnNumber: txn(6) }), { code: 50768 });
    assert.equal(await db.collection('refusals').countDocuments(), 1);
  });

  it('the driver\'s own retryable writes are recorded in config.transactions', async () => {
    const s = client.startSession();
    try {
      await db.collection<AnyDoc>('driver').insertOne({ _id: 1 }, { session: s });
    } finally {
      await s.endSession();
    }
    const records = await client.db('config').collection<AnyDoc>('transactions').find().toArray();
    assert.ok(records.length > 0);
    assert.ok(records.every((r) => r._id.id instanceof UUID || r._id.id.sub_type === 4));
  });
});
