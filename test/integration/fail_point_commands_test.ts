import { afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MongoClient, MongoNetworkError, MongoServerError, MongoWriteConcernError, type ClientSession, type Db } from 'mongodb';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { spawnRouter, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { withProcesses } from '../helpers/fixtures.js';

// The fail points the driver specifications' tests use: failCommand with each of its options and
// modes, alike on a node and through a router started with --enableTestCommands, and
// onPrimaryTransactionalWrite on a node. Retryable writes are sent as commands with a txnNumber
// (the driver sends none to a standalone node), so that both targets see the same requests.
describe('fail points for client test suites', () => {
  let node: SpawnedNode;
  let cluster: SpawnedCluster;
  const clients: MongoClient[] = [];
  const sessions: ClientSession[] = [];

  withProcesses(async (p) => {
    [node, cluster] = await Promise.all([p.node({ extraArgs: ['--enableTestCommands'] }), p.cluster({ shards: 1, enableTestCommands: true })]);
    // The tests' own sessions and clients (connect below), ended while the processes are up.
    p.beforeStop(async () => {
      for (const s of sessions.splice(0)) await s.endSession().catch(() => undefined);
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    });
  });

  const connect = (uri: string, options: ConstructorParameters<typeof MongoClient>[1] = {}): MongoClient => {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, ...options });
    clients.push(client);
    return client;
  };
  const failPoint = (client: MongoClient, name: string, mode: unknown, data: AnyDoc = {}) =>
    client.db('admin').command({ configureFailPoint: name, mode, data });
  const rejection = async (p: Promise<unknown>): Promise<unknown> => p.then(() => assert.fail('expected the command to fail'), (err: unknown) => err);
  let nextTxnNumber = 1;
  // A retryable insert as a driver sends it: the session's lsid and a txnNumber of its own.
  const retryableInsert = (db: Db, session: ClientSession, documents: AnyDoc[], txnNumber = nextTxnNumber++) =>
    db.command({ insert: 'c', documents, txnNumber: Long.fromNumber(txnNumber) }, { session });
  // A server error's code and the labels the server gave it (the driver adds its own to the error).
  const serverError = (err: unknown): [number | undefined, unknown] => {
    assert.ok(err instanceof MongoServerError, String(err));
    return [err.code as number | undefined, (err.errorResponse as AnyDoc).errorLabels];
  };
  const session = (client: MongoClient): ClientSession => {
    const s = client.startSession();
    sessions.push(s);
    return s;
  };

  const targets = [
    { name: 'on a node', router: false, uri: () => node.uri },
    { name: 'through a router', router: true, uri: () => cluster.routers[0]!.uri },
  ];
  for (const target of targets) {
    describe(`failCommand ${target.name}`, () => {
      let admin: MongoClient;
      let db: Db;
      before(async () => {
        admin = connect(target.uri());
        db = admin.db(`fp_${target.router ? 'router' : 'node'}`);
        await db.collection('c').insertOne({ _id: 'seed' } as AnyDoc);
      });
      afterEach(async () => {
        await failPoint(admin, 'failCommand', 'off');
      });

      it('fails the commands it names with errorCode and leaves the others alone', async () => {
        const { count } = await failPoint(admin, 'failCommand', 'alwaysOn', { failCommands: ['find', 'distinct'], errorCode: 2 });
        const err = await rejection(db.collection('c').findOne({}));
        assert.ok(err instanceof MongoServerError);
        assert.deepEqual([err.code, err.codeName, err.message], [2, 'BadValue', "Failing command via 'failCommand' failpoint"]);
        await rejection(db.collection('c').distinct('_id'));
        assert.equal(await db.collection('c').countDocuments({}), 1, 'count is not named');
        await admin.db('admin').command({ waitForFailPoint: 'failCommand', timesEntered: Number(count) + 2, maxTimeMS: 1000 });
      });

      it('fails the next n commands with {times: n}, and every one after the first n with {skip: n}', async () => {
        const outcomes = async (n: number): Promise<string[]> => {
          const seen: string[] = [];
          for (let i = 0; i < n; i++) seen.push(await db.collection('c').findOne({}).then(() => 'ok', () => 'failed'));
          return seen;
        };
        await failPoint(admin, 'failCommand', { times: 2 }, { failCommands: ['find'], errorCode: 2 });
        assert.deepEqual(await outcomes(3), ['failed', 'failed', 'ok']);
        await failPoint(admin, 'failCommand', { skip: 1 }, { failCommands: ['find'], errorCode: 2 });
        assert.deepEqual(await outcomes(3), ['ok', 'failed', 'failed']);
      });

      it("puts the data's errorLabels on the error in place of the server's own, even when there are none", async () => {
        const s = session(admin);
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], errorCode: 11600, errorLabels: [] });
        assert.deepEqual(serverError(await rejection(retryableInsert(db, s, [{ _id: 'u1' }]))), [11600, undefined]);
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], errorCode: 112, errorLabels: ['RetryableWriteError'] });
        assert.deepEqual(serverError(await rejection(retryableInsert(db, s, [{ _id: 'u2' }]))), [112, ['RetryableWriteError']]);
      });

      it(`without errorLabels, gives a retryable write's retriable error the labels ${target.router ? 'mongos gives it: none' : 'a node gives it'}`, async () => {
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], errorCode: 91 });
        const labels = target.router ? undefined : ['RetryableWriteError', 'NoWritesPerformed'];
        assert.deepEqual(serverError(await rejection(retryableInsert(db, session(admin), [{ _id: 'l1' }]))), [91, labels]);
        assert.equal(await db.collection('c').countDocuments({ _id: 'l1' } as AnyDoc), 0, 'the failed insert wrote nothing');
      });

      it('closes the connection with closeConnection: the command does not run and the client sees a network error', async () => {
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], closeConnection: true });
        // A command the driver sends as given, never retried.
        const err = await rejection(db.command({ insert: 'c', documents: [{ _id: 'closed' }] }));
        assert.ok(err instanceof MongoNetworkError, String(err));
        assert.equal(await db.collection('c').countDocuments({ _id: 'closed' } as AnyDoc), 0);
      });

      it('holds the command for blockTimeMS with blockConnection, then runs it', async () => {
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['count'], blockConnection: true, blockTimeMS: 300 });
        const started = performance.now();
        assert.equal((await db.command({ count: 'c' })).ok, 1);
        const elapsedMs = performance.now() - started;
        assert.ok(elapsedMs >= 290, `the count answered after ${elapsedMs} ms`);
        await failPoint(admin, 'failCommand', 'alwaysOn', { failCommands: ['ping'], blockConnection: true });
        const refused = await rejection(admin.db('admin').command({ ping: 1 }));
        assert.ok(refused instanceof MongoServerError && refused.code === 72, `blockConnection without blockTimeMS: ${String(refused)}`);
      });

      it('answers a write that ran with writeConcernError, and with its labels', async () => {
        const wce = { code: 91, errmsg: 'Replication is being shut down' };
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], writeConcernError: wce });
        const err = await rejection(db.collection('c').insertOne({ _id: 'w1' } as AnyDoc));
        assert.ok(err instanceof MongoWriteConcernError, String(err));
        assert.equal(err.code, 91);
        assert.equal(await db.collection('c').countDocuments({ _id: 'w1' } as AnyDoc), 1, 'the write is done');
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['insert'], writeConcernError: wce, errorLabels: ['RetryableWriteError'] });
        const labelled = await rejection(retryableInsert(db, session(admin), [{ _id: 'w2' }]));
        assert.ok(labelled instanceof MongoWriteConcernError, String(labelled));
        const { ok, n, writeConcernError, errorLabels } = labelled.result as AnyDoc;
        assert.deepEqual([ok, n, writeConcernError, errorLabels], [1, 1, wce, ['RetryableWriteError']]);
        await failPoint(admin, 'failCommand', { times: 1 }, { failCommands: ['find'], writeConcernError: wce });
        assert.ok(await db.collection('c').findOne({}), 'a read waits for no write concern');
      });

      it('fails only the commands of connections whose client metadata has the appName', async () => {
        const failing = connect(target.uri(), { appName: 'failing-app' }).db(db.databaseName);
        const other = connect(target.uri(), { appName: 'other-app' }).db(db.databaseName);
        await failPoint(admin, 'failCommand', 'alwaysOn', { failCommands: ['find'], errorCode: 2, appName: 'failing-app' });
        assert.ok(await other.collection('c').findOne({}));
        assert.ok(await rejection(failing.collection('c').findOne({})) instanceof MongoServerError);
      });

      it('fails only the commands on the namespace it names', async () => {
        await failPoint(admin, 'failCommand', 'alwaysOn', { failCommands: ['find'], errorCode: 2, namespace: `${db.databaseName}.other` });
        assert.ok(await db.collection('c').findOne({}));
        assert.ok(await rejection(db.collection('other').findOne({})) instanceof MongoServerError);
      });

      it('stops failing once turned off', async () => {
        await failPoint(admin, 'failCommand', 'alwaysOn', { failCommands: ['find'], errorCode: 2 });
        await rejection(db.collection('c').findOne({}));
        await failPoint(admin, 'failCommand', 'off');
        assert.ok(await db.collection('c').findOne({}));
      });
    });
  }

  describe('on a router', () => {
    it('retries a retryable write the driver saw fail with a closed connection or a labelled writeConcernError, and it takes effect once', async () => {
      const client = connect(cluster.routers[0]!.uri);
      const coll = client.db('fp_router_retry').collection<AnyDoc>('c');
      await coll.insertOne({ _id: 0, n: 0 });
      await failPoint(client, 'failCommand', { times: 1 }, { failCommands: ['update'], closeConnection: true });
      await coll.updateOne({ _id: 0 }, { $inc: { n: 1 } });
      await failPoint(client, 'failCommand', { times: 1 }, { failCommands: ['update'], writeConcernError: { code: 91, errmsg: 'down' }, errorLabels: ['RetryableWriteError'] });
      await coll.updateOne({ _id: 0 }, { $inc: { n: 1 } });
      assert.equal((await coll.findOne({ _id: 0 }))!.n, 2);
    });

    it("does not fail its own commands to the shards unless failInternalCommands, which a shard's fail point then fails", async () => {
      const viaRouter = connect(cluster.routers[0]!.uri).db('fp_internal');
      const shard = connect(cluster.shards[0]!.uri);
      await viaRouter.collection<AnyDoc>('c').insertOne({ _id: 1 } as AnyDoc);
      try {
        await failPoint(shard, 'failCommand', 'alwaysOn', { failCommands: ['find'], errorCode: 2 });
        assert.ok(await viaRouter.collection<AnyDoc>('c').findOne({ _id: 1 }), "the router's find to the shard is internal");
        assert.ok(await rejection(shard.db('fp_internal').collection<AnyDoc>('c').findOne({ _id: 1 })) instanceof MongoServerError, 'a driver connected to the shard is not');
        await failPoint(shard, 'failCommand', 'alwaysOn', { failCommands: ['find'], errorCode: 2, failInternalCommands: true });
        const err = await rejection(viaRouter.collection<AnyDoc>('c').findOne({ _id: 1 }));
        assert.ok(err instanceof MongoServerError && err.code === 2, String(err));
      } finally {
        await failPoint(shard, 'failCommand', 'off');
      }
    });

    it('has no fail point commands without --enableTestCommands', async () => {
      const plain = await spawnRouter(cluster.config.port);
      try {
        const err = await rejection(failPoint(connect(plain.uri), 'failCommand', 'off'));
        assert.ok(err instanceof MongoServerError && err.code === 59, String(err));
      } finally {
        await plain.stop();
      }
    });
  });

  describe('onPrimaryTransactionalWrite on a node', () => {
    let client: MongoClient;
    let db: Db;
    before(() => {
      client = connect(node.uri);
      db = client.db('fp_txn_write');
    });
    afterEach(async () => {
      await failPoint(client, 'onPrimaryTransactionalWrite', 'off');
    });
    const ids = async () => (await db.collection<AnyDoc>('c').find().sort({ _id: 1 }).toArray()).map((d) => d._id);

    it('closes the connection after the write, which commits, so that its retry is answered from the history', async () => {
      const s = session(client);
      const { count } = await failPoint(client, 'onPrimaryTransactionalWrite', { times: 1 });
      assert.ok(await rejection(retryableInsert(db, s, [{ _id: 'a' }], 1)) instanceof MongoNetworkError);
      const retried = await retryableInsert(db, s, [{ _id: 'a' }], 1);
      assert.deepEqual([retried.n, retried.retriedStmtIds], [1, [0]]);
      assert.deepEqual(await ids(), ['a']);
      await client.db('admin').command({ waitForFailPoint: 'onPrimaryTransactionalWrite', timesEntered: Number(count) + 1, maxTimeMS: 1000 });
    });

    it('fails the write unit with failBeforeCommitExceptionCode, so nothing is written', async () => {
      const s = session(client);
      await failPoint(client, 'onPrimaryTransactionalWrite', 'alwaysOn', { closeConnection: false, failBeforeCommitExceptionCode: 1 });
      const err = await rejection(retryableInsert(db, s, [{ _id: 'b' }, { _id: 'c' }], 1));
      assert.ok(err instanceof MongoServerError && err.code === 1, String(err));
      await failPoint(client, 'onPrimaryTransactionalWrite', 'off');
      const again = await retryableInsert(db, s, [{ _id: 'b' }, { _id: 'c' }], 1);
      assert.deepEqual([again.n, again.retriedStmtIds], [2, undefined], 'the first attempt left no history');
    });

    it('fires for retryable writes only, and only for statements that run', async () => {
      const s = session(client);
      await retryableInsert(db, s, [{ _id: 'd' }], 1);
      const { count } = await failPoint(client, 'onPrimaryTransactionalWrite', 'alwaysOn', { failBeforeCommitExceptionCode: 1 });
      await db.collection('c').insertOne({ _id: 'e' } as AnyDoc);
      assert.equal((await retryableInsert(db, s, [{ _id: 'd' }], 1)).n, 1, 'a retry of a statement that ran writes nothing');
      const { count: after } = await failPoint(client, 'onPrimaryTransactionalWrite', 'off');
      assert.equal(after, count);
      assert.deepEqual(await ids(), ['a', 'b', 'c', 'd', 'e']);
    });
  });
});
