import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Long, MongoClient, MongoServerError, UUID } from 'mongodb';
import { WireClient } from '../../src/wire/client.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 21, two-phase commit: a transaction that wrote on two shards commits through the
// coordinator on its first participant (src/sessions/transaction_coordinator*.ts), all or nothing;
// reads of what a prepared transaction wrote wait for its decision; a participant that cannot
// prepare makes it abort; and a kill -9 of the coordinator or of a participant at every step, then
// a restart, ends with the same decision applied on both shards and nothing left prepared.
describe('two-phase commit through routers', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let raw: WireClient;
  let router: string;

  withCluster({ shards: 2, routers: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    raw = new WireClient();
    router = `127.0.0.1:${cluster.routers[0]!.port}`;
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'bank', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    await admin.command({ split: 'bank.accounts', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'bank.accounts', find: { _id: 100 }, to: 'shard1' });
  });

  after(async () => {
    await raw?.close();
  });

  const accounts = () => client.db('bank').collection<AnyDoc>('accounts');
  const onShard = (i: number, db: string, cmd: AnyDoc) => raw.command(`127.0.0.1:${cluster.shards[i]!.port}`, db, cmd);

  async function leftovers(): Promise<{ prepared: AnyDoc[]; coordinators: AnyDoc[] }> {
    const prepared: AnyDoc[] = [];
    const coordinators: AnyDoc[] = [];
    for (const i of [0, 1]) {
      prepared.push(...((await onShard(i, 'config', { find: 'transactions', filter: { state: 'prepared' } })).cursor as AnyDoc).firstBatch);
      coordinators.push(...((await onShard(i, 'config', { find: 'transaction_coordinators' })).cursor as AnyDoc).firstBatch);
    }
    return { prepared, coordinators };
  }

  // A transaction moving `amount` from account `a` (shard0) to `b` (shard1), left uncommitted.
  async function transfer(lsid: AnyDoc, txnNumber: number, a: number, b: number, amount: number): Promise<void> {
    const session = { lsid, txnNumber: Long.fromNumber(txnNumber), autocommit: false };
    const first = await raw.command(router, 'bank', { update: 'accounts', updates: [{ q: { _id: a }, u: { $inc: { balance: -amount } } }], ...session, startTransaction: true });
    assert.equal(first.nModified, 1, JSON.stringify(first));
    const second = await raw.command(router, 'bank', { update: 'accounts', updates: [{ q: { _id: b }, u: { $inc: { balance: amount } } }], ...session });
    assert.equal(second.nModified, 1, JSON.stringify(second));
  }

  function commit(lsid: AnyDoc, txnNumber: number): Promise<AnyDoc> {
    return raw.command(router, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(txnNumber), autocommit: false });
  }

  it('commits writes on two shards together, and leaves no coordinator or prepared record', async () => {
    await accounts().insertMany([{ _id: 1, balance: 100 }, { _id: 101, balance: 100 }]);
    const session = client.startSession();
    try {
      session.startTransaction();
      await accounts().updateOne({ _id: 1 }, { $inc: { balance: -30 } }, { session });
      await accounts().updateOne({ _id: 101 }, { $inc: { balance: 30 } }, { session });
      assert.deepEqual(await accounts().find({ _id: { $in: [1, 101] } }, { sort: { _id: 1 } }).toArray(), [{ _id: 1, balance: 100 }, { _id: 101, balance: 100 }]);
      await session.commitTransaction();
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await accounts().find({ _id: { $in: [1, 101] } }, { sort: { _id: 1 } }).toArray(), [{ _id: 1, balance: 70 }, { _id: 101, balance: 130 }]);
    for (const i of [0, 1]) {
      const records = ((await onShard(i, 'config', { find: 'transactions', filter: { state: { $exists: true } } })).cursor as AnyDoc).firstBatch as AnyDoc[];
      assert.ok(records.some((r) => r.state === 'committed'), `shard${i} recorded the commit`);
    }
    assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
  });

  it('holds reads of a prepared transaction\'s collection until the decision, and they see it whole', async () => {
    await accounts().insertMany([{ _id: 2, balance: 10 }, { _id: 102, balance: 10 }]);
    const lsid = { id: new UUID() };
    await transfer(lsid, 1, 2, 102, 4);
    const { count } = await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'alwaysOn' });
    let committed: Promise<AnyDoc> | undefined;
    try {
      committed = commit(lsid, 1);
      await onShard(0, 'admin', { waitForFailPoint: 'hangBeforeSendingDecision', timesEntered: Number(count) + 1, maxTimeMS: 30_000 });
      let settled = false;
      const read = accounts().find({ _id: { $in: [2, 102] } }, { sort: { _id: 1 } }).toArray().finally(() => (settled = true));
      await sleep(300);
      assert.equal(settled, false, 'a read of a prepared document waits for the decision');
      // currentOp shows what the read waits for: the coordinator, and each shard's prepared transaction.
      const coordinator = ((await onShard(0, 'admin', { currentOp: 1, desc: 'TransactionCoordinator' })).inprog as AnyDoc[]).map((op) => op.twoPhaseCommitCoordinator as AnyDoc);
      assert.deepEqual(coordinator.map((c) => [c.txnNumber, c.numParticipants, c.state]), [[1, 2, 'kWaitingForDecisionAcks']], JSON.stringify(coordinator));
      for (const i of [0, 1]) {
        const prepared = ((await onShard(i, 'admin', { currentOp: 1, type: 'idleSession' })).inprog as AnyDoc[]).map((op) => op.transaction as AnyDoc);
        assert.deepEqual(prepared.map((t) => [t.parameters.txnNumber, t.namespaces]), [[1, ['bank.accounts']]], `shard${i}: ${JSON.stringify(prepared)}`);
      }
      // Through the router, each names its shard and the host (hostname:port) that reported it.
      const viaRouter = await client.db('admin').aggregate([{ $currentOp: { allUsers: true, idleSessions: true } }, { $match: { type: 'idleSession' } }]).toArray();
      assert.deepEqual(viaRouter.map((op) => [op.shard, op.host]).sort(), [0, 1].map((i) => [`shard${i}`, `${hostname()}:${cluster.shards[i]!.port}`]));
      await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'off' });
      assert.deepEqual(await read, [{ _id: 2, balance: 6 }, { _id: 102, balance: 14 }]);
    } finally {
      await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'off' });
    }
    assert.equal((await committed!).ok, 1);
    // Another router learns the decision from the recoveryToken's shard (the first writer).
    const recovered = await raw.command(`127.0.0.1:${cluster.routers[1]!.port}`, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false, recoveryToken: { recoveryShardId: 'shard0' } });
    assert.equal(recovered.ok, 1, JSON.stringify(recovered));
  });

  // The router answers the commit once the decision is durable, before the participants have it:
  // the client's next retryable write on the session may reach a participant first. It waits
  // there for the decision (MongoDB's PreparedTransactionInProgress, waited out), or it would move
  // the session past the prepared transaction, whose commit the participant would then answer
  // TransactionTooOld, the coordinator take as applied, and the transaction stay prepared.
  it('holds a newer retryable write on the session of a prepared transaction until the decision, which then applies', { timeout: 60_000 }, async () => {
    await accounts().insertMany([{ _id: 7, balance: 10 }, { _id: 107, balance: 10 }]);
    await client.db('bank').createCollection('audit');
    const lsid = { id: new UUID() };
    await transfer(lsid, 1, 7, 107, 4);
    const { count } = await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'alwaysOn' });
    try {
      const committed = commit(lsid, 1);
      await onShard(0, 'admin', { waitForFailPoint: 'hangBeforeSendingDecision', timesEntered: Number(count) + 1, maxTimeMS: 30_000 });
      let settled = false;
      // Of another collection, which the prepared transaction's writes hold nothing of.
      const next = raw.command(router, 'bank', { insert: 'audit', documents: [{ _id: 108 }], lsid, txnNumber: Long.fromNumber(2) }).finally(() => (settled = true));
      await sleep(500);
      assert.equal(settled, false, 'the retryable write waits behind the prepared transaction');
      await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'off' });
      assert.equal((await committed).ok, 1);
      const inserted = await next;
      assert.equal(inserted.n, 1, JSON.stringify(inserted));
    } finally {
      await onShard(0, 'admin', { configureFailPoint: 'hangBeforeSendingDecision', mode: 'off' });
    }
    assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
    assert.deepEqual(await accounts().find({ _id: { $in: [7, 107] } }, { sort: { _id: 1 }, maxTimeMS: 5000 }).toArray(), [{ _id: 7, balance: 6 }, { _id: 107, balance: 14 }]);
  });

  it('aborts on every shard when a participant cannot prepare, answering NoSuchTransaction with TransientTransactionError', async () => {
    await accounts().insertMany([{ _id: 3, balance: 10 }, { _id: 103, balance: 10 }]);
    const lsid = { id: new UUID() };
    await transfer(lsid, 1, 3, 103, 5);
    // Its part on shard1 ends before the commit (as a shard that restarted would have lost it).
    assert.equal((await onShard(1, 'admin', { abortTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false })).ok, 1);
    const reply = await commit(lsid, 1);
    assert.equal(reply.code, 251, JSON.stringify(reply));
    assert.deepEqual(reply.errorLabels, ['TransientTransactionError']);
    const recovered = await raw.command(`127.0.0.1:${cluster.routers[1]!.port}`, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false, recoveryToken: { recoveryShardId: 'shard1' } });
    assert.equal(recovered.code, 251, JSON.stringify(recovered));
    assert.deepEqual(await accounts().find({ _id: { $in: [3, 103] } }, { sort: { _id: 1 } }).toArray(), [{ _id: 3, balance: 10 }, { _id: 103, balance: 10 }]);
    assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
  });

  it('aborts at once when a participant names a shard the cluster does not have, naming its ShardNotFound', async () => {
    await accounts().insertMany([{ _id: 4, balance: 10 }, { _id: 104, balance: 10 }]);
    const lsid = { id: new UUID() };
    await transfer(lsid, 1, 4, 104, 5);
    const started = Date.now();
    const reply = await onShard(0, 'admin', {
      coordinateCommitTransaction: 1, participants: [{ shardId: 'shard0' }, { shardId: 'shard1' }, { shardId: 'nope' }],
      lsid, txnNumber: Long.fromNumber(1), autocommit: false,
    });
    assert.equal(reply.codeName, 'NoSuchTransaction', JSON.stringify(reply));
    assert.match(String(reply.errmsg), /participant nope refused to prepare \(code 70\)/);
    // The prepare of an unreachable shard is retried for 30 s (PREPARE_RETRY_MS); an unknown one is not.
    assert.ok(Date.now() - started < 15_000, `answered after ${Date.now() - started} ms`);
    assert.deepEqual(await accounts().find({ _id: { $in: [4, 104] } }, { sort: { _id: 1 } }).toArray(), [{ _id: 4, balance: 10 }, { _id: 104, balance: 10 }]);
    assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
  });

  // Each step, the shard killed there, and the decision a crash there leads to: before the
  // coordinator persisted a decision, abort; after, commit.
  const CRASH_POINTS: { failPoint: string; shard: number; decision: 'commit' | 'abort' }[] = [
    { failPoint: 'hangBeforeWritingParticipantList', shard: 0, decision: 'abort' },
    { failPoint: 'hangBeforeSendingPrepare', shard: 0, decision: 'abort' },
    { failPoint: 'hangAfterPreparingTransaction', shard: 1, decision: 'commit' },
    { failPoint: 'hangBeforeWritingDecision', shard: 0, decision: 'abort' },
    { failPoint: 'hangBeforeSendingDecision', shard: 0, decision: 'commit' },
    { failPoint: 'hangBeforeCommittingPreparedTransaction', shard: 1, decision: 'commit' },
    { failPoint: 'hangBeforeDeletingCoordinatorDoc', shard: 0, decision: 'commit' },
  ];

  for (const [n, { failPoint, shard, decision }] of CRASH_POINTS.entries()) {
    it(`after kill -9 of shard${shard} at ${failPoint}, reaches ${decision} on both shards`, { timeout: 120_000 }, async () => {
      const a = 10 + n;
      const b = 110 + n;
      await accounts().insertMany([{ _id: a, balance: 50 }, { _id: b, balance: 50 }]);
      const lsid = { id: new UUID() };
      await transfer(lsid, 1, a, b, 20);
      const { count } = await onShard(shard, 'admin', { configureFailPoint: failPoint, mode: 'alwaysOn' });
      const first = commit(lsid, 1).catch((err: unknown) => ({ ok: 0, errmsg: String(err) }));
      await onShard(shard, 'admin', { waitForFailPoint: failPoint, timesEntered: Number(count) + 1, maxTimeMS: 30_000 });
      await cluster.shards[shard]!.kill9();
      cluster.shards[shard] = await restartNode(cluster.shards[shard]!, { extraArgs: ['--enableTestCommands'] });
      // The driver retries a commit whose result it does not know; so does this, until it knows.
      let reply: AnyDoc = await first;
      for (let i = 0; reply.ok !== 1 && reply.code !== 251; i++) {
        assert.ok(i < 100, `no decision: ${JSON.stringify(reply)}`);
        await sleep(200);
        reply = await commit(lsid, 1).catch((err: unknown) => ({ ok: 0, errmsg: String(err) }));
      }
      assert.equal(reply.ok === 1 ? 'commit' : 'abort', decision, JSON.stringify(reply));
      const expected = decision === 'commit' ? [{ _id: a, balance: 30 }, { _id: b, balance: 70 }] : [{ _id: a, balance: 50 }, { _id: b, balance: 50 }];
      let found: AnyDoc[] = [];
      for (let i = 0; i < 100; i++) {
        found = await accounts().find({ _id: { $in: [a, b] } }, { sort: { _id: 1 } }).toArray();
        const left = await leftovers();
        if (JSON.stringify(found) === JSON.stringify(expected) && left.prepared.length === 0 && left.coordinators.length === 0) break;
        await sleep(200);
      }
      assert.deepEqual(found, expected);
      assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
    });
  }

  it('moves a document to another shard by changing its shard key, in a retryable write and in a transaction, through two routers, and recognises the retry', { timeout: 120_000 }, async () => {
    const admin = client.db('admin');
    await admin.command({ shardCollection: 'bank.people', key: { region: 1 } });
    await admin.command({ split: 'bank.people', middle: { region: 'm' } });
    await admin.command({ moveChunk: 'bank.people', find: { region: 'm' }, to: 'shard1' });
    const people = client.db('bank').collection<AnyDoc>('people');
    await people.insertMany([{ _id: 1, region: 'a' }, { _id: 2, region: 'b' }, { _id: 3, region: 'c' }]);
    const onShard1 = async (id: number) => ((await onShard(1, 'bank', { find: 'people', filter: { _id: id } })).cursor as AnyDoc).firstBatch as AnyDoc[];
    const onShard0 = async (id: number) => ((await onShard(0, 'bank', { find: 'people', filter: { _id: id } })).cursor as AnyDoc).firstBatch as AnyDoc[];

    // A retryable write, sent as the driver sends it, then its retry through the other router.
    const lsid = { id: new UUID() };
    const update = { update: 'people', updates: [{ q: { _id: 1, region: 'a' }, u: { $set: { region: 'z' } } }], lsid, txnNumber: Long.fromNumber(1) };
    const first = await raw.command(router, 'bank', update);
    assert.equal(first.ok, 1, JSON.stringify(first));
    assert.deepEqual([first.n, first.nModified, first.writeErrors], [1, 1, undefined], JSON.stringify(first));
    assert.deepEqual(await onShard1(1), [{ _id: 1, region: 'z' }]);
    assert.deepEqual(await onShard0(1), []);
    const retried = await raw.command(`127.0.0.1:${cluster.routers[1]!.port}`, 'bank', update);
    assert.deepEqual([retried.ok, retried.n, retried.nModified, retried.writeErrors], [1, 1, 1, undefined], JSON.stringify(retried));
    assert.deepEqual(await people.find({ _id: 1 }).toArray(), [{ _id: 1, region: 'z' }]);

    // The driver's own retryable write, and an update inside the user's transaction.
    assert.equal((await people.updateOne({ _id: 2, region: 'b' }, { $set: { region: 'y' } })).modifiedCount, 1);
    const session = client.startSession();
    try {
      await session.withTransaction(async () => {
        await people.updateOne({ _id: 3, region: 'c' }, { $set: { region: 'x', moved: true } }, { session });
        assert.deepEqual(await people.findOne({ region: 'x' }, { session }), { _id: 3, region: 'x', moved: true }, 'the transaction sees the document where it moved');
      });
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await onShard1(2), [{ _id: 2, region: 'y' }]);
    assert.deepEqual(await onShard1(3), [{ _id: 3, region: 'x', moved: true }]);
    assert.deepEqual([...await onShard0(2), ...await onShard0(3)], []);
    assert.deepEqual(await leftovers(), { prepared: [], coordinators: [] });
  });

  it('lets the driver\'s withTransaction move money between shards while a second router reads consistent totals', { timeout: 120_000 }, async () => {
    const ids = [20, 21, 22, 120, 121, 122];
    const seed = client.startSession({ causalConsistency: true });
    await accounts().insertMany(ids.map((_id) => ({ _id, balance: 100 })), { session: seed });
    const [seededAt, seededClock] = [seed.operationTime!, seed.clusterTime!];
    await seed.endSession();
    const other = new MongoClient(cluster.routers[1]!.uri);
    try {
      let stop = false;
      const reader = (async () => {
        const totals: number[] = [];
        while (!stop) {
          // Its snapshots are at or after the accounts were made: a client of the other router
          // that has seen their insert, as a causally consistent session has.
          const s = other.startSession({ causalConsistency: true });
          s.advanceClusterTime(seededClock);
          s.advanceOperationTime(seededAt);
          try {
            s.startTransaction({ readConcern: { level: 'snapshot' } });
            const docs = await other.db('bank').collection<AnyDoc>('accounts').find({ _id: { $in: ids } }, { session: s }).toArray();
            await s.commitTransaction();
            totals.push(docs.reduce((sum, d) => sum + d.balance, 0));
          } catch (err) {
            if (!(err instanceof MongoServerError) || !err.hasErrorLabel('TransientTransactionError')) throw err;
            await s.abortTransaction().catch(() => undefined);
          } finally {
            await s.endSession();
          }
        }
        return totals;
      })();
      const s = client.startSession();
      try {
        for (let i = 0; i < 20; i++) {
          const from = ids[i % 3]!;
          const to = ids[3 + ((i * 7) % 3)]!;
          await s.withTransaction(async () => {
            await accounts().updateOne({ _id: from }, { $inc: { balance: -1 } }, { session: s });
            await accounts().updateOne({ _id: to }, { $inc: { balance: 1 } }, { session: s });
          });
        }
      } finally {
        await s.endSession();
        stop = true;
      }
      const totals = await reader;
      assert.ok(totals.length > 0);
      assert.deepEqual([...new Set(totals)], [600], 'every snapshot sums to the same total');
      const final = await accounts().find({ _id: { $in: ids } }).toArray();
      assert.equal(final.reduce((sum, d) => sum + d.balance, 0), 600);
      assert.equal(final.filter((d) => d._id < 100).reduce((sum, d) => sum + d.balance, 0), 280);
    } finally {
      await other.close();
    }
  });
});
