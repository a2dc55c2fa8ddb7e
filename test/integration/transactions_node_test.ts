import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, MongoServerError, UUID } from 'mongodb';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { WireClient } from '../../src/wire/client.js';
import { MongoError } from '../../src/base/errors.js';
import { withNode } from '../helpers/fixtures.js';

// Issue 21, transactions on one node, through the official driver: statements read one snapshot
// with their own writes, nothing is visible outside before the commit, the first writer wins
// (WriteConflict with TransientTransactionError, which withTransaction retries), a write outside
// transactions to what a transaction wrote waits for it to end, and the rules and errors of
// startTransaction, commitTransaction and abortTransaction are MongoDB's. A commit survives kill -9
// and commitTransaction asked again after the restart answers ok.
describe('transactions on one node', () => {
  let node: SpawnedNode;
  let client: MongoClient;

  withNode({ extraArgs: ['--setParameter', 'transactionLifetimeLimitSeconds=2'] }, async (f) => {
    ({ node, client } = f);
    // A test restarts the node: the one running at the end, and its client, are stopped.
    f.processes.beforeStop(async () => {
      await client.close();
      await node.stop();
    });
  });

  const coll = (name: string) => client.db('txn').collection<AnyDoc>(name);

  async function failure(p: Promise<unknown>): Promise<MongoServerError> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
    return err;
  }

  it('reads its snapshot with its own writes; others see the writes only after the commit', async () => {
    const c = coll('basic');
    await c.insertOne({ _id: 1, n: 0 });
    const session = client.startSession();
    try {
      session.startTransaction();
      await c.insertOne({ _id: 2, n: 1 }, { session });
      await c.updateOne({ _id: 1 }, { $inc: { n: 5 } }, { session });
      await c.insertOne({ _id: 3, n: 7 }); // outside, after the transaction's snapshot
      assert.deepEqual(await c.find({}, { session, sort: { _id: 1 } }).toArray(), [{ _id: 1, n: 5 }, { _id: 2, n: 1 }]);
      assert.deepEqual(await c.find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1, n: 0 }, { _id: 3, n: 7 }]);
      await session.commitTransaction();
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await c.find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1, n: 5 }, { _id: 2, n: 1 }, { _id: 3, n: 7 }]);
  });

  it('an aborted transaction leaves nothing, and neither does one whose statement failed', async () => {
    const c = coll('aborted');
    await c.insertOne({ _id: 1 });
    const session = client.startSession();
    try {
      session.startTransaction();
      await c.insertOne({ _id: 2 }, { session });
      await session.abortTransaction();
      session.startTransaction();
      await c.insertOne({ _id: 3 }, { session });
      const dup = await failure(c.insertOne({ _id: 1 }, { session }));
      assert.equal(dup.code, 11000);
      const after = await failure(c.insertOne({ _id: 4 }, { session }));
      assert.equal(after.code, 251, 'the failed statement aborted the transaction');
      assert.ok(after.errorLabels.includes('TransientTransactionError'));
      await session.abortTransaction();
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await c.find({}).toArray(), [{ _id: 1 }]);
  });

  it('first writer wins: the second gets WriteConflict labelled TransientTransactionError; withTransaction retries until both count', async () => {
    const c = coll('conflict');
    await c.insertOne({ _id: 1, n: 0 });
    const a = client.startSession();
    const b = client.startSession();
    try {
      a.startTransaction();
      b.startTransaction();
      await c.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session: a });
      const err = await failure(c.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session: b }));
      assert.equal(err.code, 112);
      assert.deepEqual(err.errorLabels, ['TransientTransactionError']);
      await a.commitTransaction();
      await b.abortTransaction();
    } finally {
      await a.endSession();
      await b.endSession();
    }
    const workers = Array.from({ length: 4 }, async () => {
      const s = client.startSession();
      try {
        for (let i = 0; i < 10; i++) {
          await s.withTransaction(async () => {
            const doc = await c.findOne({ _id: 1 }, { session: s });
            await c.updateOne({ _id: 1 }, { $set: { n: doc!.n + 1 } }, { session: s });
          });
        }
      } finally {
        await s.endSession();
      }
    });
    await Promise.all(workers);
    assert.equal((await c.findOne({ _id: 1 }))!.n, 41, 'every committed read-modify-write counted once');
  });

  it('a write outside transactions to a document a transaction wrote waits for the transaction to end, then applies', async () => {
    const c = coll('outside');
    await c.insertOne({ _id: 1, n: 0 });
    const session = client.startSession();
    try {
      session.startTransaction();
      await c.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session });
      let settled = false;
      const outside = c.updateOne({ _id: 1 }, { $inc: { n: 100 } }).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(settled, false, 'the write waits rather than failing or dooming the transaction');
      await session.commitTransaction();
      assert.equal((await outside).modifiedCount, 1);
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, n: 101 }, 'both increments, one after the other');
  });

  it('an insert outside transactions of a key a transaction inserted waits for it: DuplicateKey after its commit, inserted after its abort', async () => {
    const c = coll('insertOutside');
    await c.createIndex({ u: 1 }, { unique: true });
    for (const [end, key] of [['commit', { _id: 1, u: 1 }], ['abort', { _id: 2, u: 2 }], ['commit', { _id: 'other', u: 3 }]] as const) {
      const session = client.startSession();
      try {
        session.startTransaction();
        await c.insertOne({ ...key }, { session });
        let settled = false;
        // The third round meets the transaction's unique key only, under another _id.
        const doc = typeof key._id === 'string' ? { _id: 3, u: key.u } : { ...key };
        const outside = c.insertOne(doc).then(() => 'inserted', (err: unknown) => (err as MongoServerError).codeName).finally(() => (settled = true));
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(settled, false, `${JSON.stringify(doc)} waits rather than dooming the transaction`);
        if (end === 'commit') await session.commitTransaction();
        else await session.abortTransaction();
        assert.equal(await outside, end === 'commit' ? 'DuplicateKey' : 'inserted');
      } finally {
        await session.endSession();
      }
    }
    assert.deepEqual(await c.find().sort({ u: 1 }).toArray(), [{ _id: 1, u: 1 }, { _id: 2, u: 2 }, { _id: 'other', u: 3 }]);
  });

  describe('the rules of a session\'s transactions, as raw commands', () => {
    const lsid = { id: new UUID() };
    const txn = (n: number) => ({ lsid, txnNumber: Long.fromNumber(n), autocommit: false });
    let raw: WireClient;
    before(() => {
      raw = new WireClient();
    });
    after(async () => {
      await raw.close();
    });
    const run = (db: string, cmd: AnyDoc) => raw.command(`127.0.0.1:${node.port}`, db, cmd);
    async function code(db: string, cmd: AnyDoc): Promise<number> {
      const reply = await run(db, cmd).then((r) => r, (e: unknown) => (e instanceof MongoError ? { ok: 0, code: e.code } : Promise.reject(e)));
      assert.equal(reply.ok, 0, `${JSON.stringify(cmd)} answered ${JSON.stringify(reply)}`);
      return reply.code as number;
    }

    it('answers MongoDB\'s errors', async () => {
      assert.equal((await run('txn', { insert: 'rules', documents: [{ _id: 1 }], ...txn(5), startTransaction: true })).ok, 1);
      assert.equal((await run('admin', { commitTransaction: 1, ...txn(5) })).ok, 1);
      assert.equal((await run('admin', { commitTransaction: 1, ...txn(5) })).ok, 1, 'a commit asked again answers ok');
      assert.equal(await code('admin', { abortTransaction: 1, ...txn(5) }), 256);
      assert.equal(await code('txn', { insert: 'rules', documents: [{ _id: 2 }], ...txn(5), startTransaction: true }), 117);
      assert.equal(await code('txn', { insert: 'rules', documents: [{ _id: 2 }], ...txn(4), startTransaction: true }), 225);
      assert.equal(await code('txn', { insert: 'rules', documents: [{ _id: 2 }], lsid, txnNumber: Long.fromNumber(3) }), 225, 'a retryable write older than the committed transaction');
      // A refused statement aborts its transaction, as any failed statement does.
      assert.equal((await run('txn', { find: 'rules', ...txn(6), startTransaction: true })).ok, 1);
      assert.equal(await code('txn', { count: 'rules', ...txn(6) }), 263);
      assert.equal(await code('admin', { commitTransaction: 1, ...txn(6) }), 251);
      assert.equal((await run('txn', { find: 'rules', ...txn(7), startTransaction: true })).ok, 1);
      assert.equal(await code('txn', { find: 'rules', ...txn(7), readConcern: { level: 'snapshot' } }), 72);
      assert.equal(await code('config', { find: 'chunks', ...txn(8), startTransaction: true }), 263);
      assert.equal(await code('txn', { find: 'rules', ...txn(9) }), 251);
      assert.equal(await code('admin', { commitTransaction: 1 }), 125);
      assert.equal((await run('txn', { create: 'capped', capped: true, size: 4096 })).ok, 1);
      const capped = await run('txn', { insert: 'capped', documents: [{ _id: 1 }], ...txn(10), startTransaction: true });
      assert.equal((capped.writeErrors as AnyDoc[])[0]!.code, 263);
      assert.equal(await code('admin', { commitTransaction: 1, ...txn(10) }), 251, 'a write error aborts the transaction');
    });

    it('aborts a transaction older than transactionLifetimeLimitSeconds, and one whose session is killed', async () => {
      assert.equal((await run('txn', { insert: 'rules', documents: [{ _id: 10 }], ...txn(11), startTransaction: true })).ok, 1);
      await new Promise((r) => setTimeout(r, 3500));
      assert.equal(await code('admin', { commitTransaction: 1, ...txn(11) }), 251);
      assert.equal((await run('txn', { insert: 'rules', documents: [{ _id: 11 }], ...txn(12), startTransaction: true })).ok, 1);
      assert.equal((await run('admin', { killSessions: [lsid] })).ok, 1);
      assert.equal(await code('admin', { commitTransaction: 1, ...txn(12) }), 251);
      assert.deepEqual(await client.db('txn').collection<AnyDoc>('rules').find({ _id: { $gte: 10 } }).toArray(), []);
    });

    it('a commit survives kill -9; commitTransaction asked again after the restart answers ok', async () => {
      assert.equal((await run('txn', { insert: 'durable', documents: [{ _id: 1 }, { _id: 2 }], ...txn(20), startTransaction: true })).ok, 1);
      assert.equal((await run('admin', { commitTransaction: 1, ...txn(20) })).ok, 1);
      await client.close();
      await raw.close();
      await node.kill9();
      node = await restartNode(node, { extraArgs: ['--setParameter', 'transactionLifetimeLimitSeconds=2'] });
      client = new MongoClient(node.uri);
      raw = new WireClient();
      assert.deepEqual(await coll('durable').find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1 }, { _id: 2 }]);
      assert.equal((await run('admin', { commitTransaction: 1, ...txn(20) })).ok, 1);
      assert.equal(await code('admin', { abortTransaction: 1, ...txn(20) }), 256);
    });
  });
});
