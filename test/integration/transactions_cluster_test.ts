import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Long, MongoClient, MongoServerError, UUID } from 'mongodb';
import { WireClient } from '../../src/wire/client.js';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');
const run = promisify(execFile);

// Issue 21, transactions through routers, with the official driver: a transaction reads one
// snapshot on every shard it touches (picked by the router at its first statement) with its own
// writes, and commits on the shard it wrote to after the ones it only read; the first writer wins
// across routers; a commit is answered through another router from the recoveryToken. Writes on
// two shards: two_phase_commit_test.
describe('transactions through routers', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let other: MongoClient;

  withCluster({ shards: 2, routers: 2 }, async (f) => {
    ({ cluster, client } = f);
    other = f.connect(cluster.routers[1]!.uri);
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'bank', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    await admin.command({ split: 'bank.accounts', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'bank.accounts', find: { _id: 100 }, to: 'shard1' });
  });

  const accounts = (c: MongoClient = client) => c.db('bank').collection<AnyDoc>('accounts');

  async function failure(p: Promise<unknown>): Promise<MongoServerError> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof MongoServerError, `expected a server error, got ${String(err)}`);
    return err;
  }

  it('reads one snapshot across both shards with its own writes, and commits', async () => {
    await accounts().insertMany([{ _id: 1, balance: 100 }, { _id: 101, balance: 100 }]);
    const session = client.startSession();
    try {
      session.startTransaction();
      assert.deepEqual(await accounts().find({}, { session, sort: { _id: 1 } }).toArray(), [{ _id: 1, balance: 100 }, { _id: 101, balance: 100 }]);
      await accounts(other).updateOne({ _id: 101 }, { $set: { balance: 7 } }); // after the snapshot, on the other shard
      await accounts().updateOne({ _id: 1 }, { $inc: { balance: -10 } }, { session });
      assert.deepEqual(await accounts().find({}, { session, sort: { _id: 1 } }).toArray(), [{ _id: 1, balance: 90 }, { _id: 101, balance: 100 }]);
      assert.deepEqual(await accounts().findOne({ _id: 1 }), { _id: 1, balance: 100 }, 'not visible before the commit');
      await session.commitTransaction();
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await accounts(other).find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1, balance: 90 }, { _id: 101, balance: 7 }]);
  });

  it('first writer wins across routers, and withTransaction retries to an exact count', async () => {
    await accounts().insertOne({ _id: 2, balance: 0 });
    const a = client.startSession();
    const b = other.startSession();
    try {
      a.startTransaction();
      await accounts().updateOne({ _id: 2 }, { $inc: { balance: 1 } }, { session: a });
      // The other client has not seen the insert's time: as in MongoDB, a snapshot is at the time
      // its client knows, so it is given that time.
      b.advanceClusterTime(a.clusterTime!);
      b.startTransaction();
      const err = await failure(accounts(other).updateOne({ _id: 2 }, { $inc: { balance: 1 } }, { session: b }));
      assert.equal(err.code, 112);
      assert.ok(err.errorLabels.includes('TransientTransactionError'), JSON.stringify(err.errorLabels));
      await a.commitTransaction();
      await b.abortTransaction();
    } finally {
      await a.endSession();
      await b.endSession();
    }
    await Promise.all([client, other, client, other].map(async (c) => {
      const s = c.startSession();
      try {
        for (let i = 0; i < 5; i++) {
          await s.withTransaction(async () => {
            const doc = await accounts(c).findOne({ _id: 2 }, { session: s });
            await accounts(c).updateOne({ _id: 2 }, { $set: { balance: doc!.balance + 1 } }, { session: s });
          });
        }
      } finally {
        await s.endSession();
      }
    }));
    assert.equal((await accounts().findOne({ _id: 2 }))!.balance, 21);
  });

  it('answers a commit through another router from the recoveryToken', async () => {
    let token: unknown;
    const monitored = new MongoClient(cluster.routers[0]!.uri, { monitorCommands: true });
    monitored.on('commandSucceeded', (e) => {
      const reply = e.reply as AnyDoc | undefined;
      if (reply?.recoveryToken !== undefined) token = reply.recoveryToken;
    });
    const s = monitored.startSession();
    try {
      s.startTransaction();
      await accounts(monitored).insertOne({ _id: 150, balance: 5 }, { session: s });
      await s.commitTransaction();
      assert.deepEqual(token, { recoveryShardId: 'shard1' });
      // Raw, as the driver would put its own session on a command through `other`.
      const raw = new WireClient();
      try {
        const reply = await raw.command(`127.0.0.1:${cluster.routers[1]!.port}`, 'admin', { commitTransaction: 1, lsid: s.id, txnNumber: Long.fromNumber(s.serverSession!.txnNumber), autocommit: false, recoveryToken: token });
        assert.equal(reply.ok, 1, JSON.stringify(reply));
        const without = await raw.command(`127.0.0.1:${cluster.routers[1]!.port}`, 'admin', { commitTransaction: 1, lsid: s.id, txnNumber: Long.fromNumber(s.serverSession!.txnNumber), autocommit: false });
        assert.equal(without.code, 251, 'without a recoveryToken another router cannot know the decision');
        // A transaction still in progress is aborted by the recovery, never committed (as mongos).
        const lsid = { id: new UUID() };
        const router0 = `127.0.0.1:${cluster.routers[0]!.port}`;
        const router1 = `127.0.0.1:${cluster.routers[1]!.port}`;
        assert.equal((await raw.command(router0, 'bank', { insert: 'accounts', documents: [{ _id: 160, balance: 1 }], lsid, txnNumber: Long.fromNumber(1), autocommit: false, startTransaction: true })).ok, 1);
        const recovered = await raw.command(router1, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false, recoveryToken: { recoveryShardId: 'shard1' } });
        assert.equal(recovered.code, 251, JSON.stringify(recovered));
        assert.deepEqual(recovered.errorLabels, ['TransientTransactionError']);
        const late = await raw.command(router0, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(1), autocommit: false });
        assert.equal(late.code, 251, 'the recovery aborted it');
      } finally {
        await raw.close();
      }
    } finally {
      await s.endSession();
      await monitored.close();
    }
    assert.deepEqual(await accounts(other).findOne({ _id: 150 }), { _id: 150, balance: 5 });
  });

  it("runs mongosh's session.startTransaction() ... session.commitTransaction() reading and writing both shards", async () => {
    await accounts().insertMany([{ _id: 4, balance: 10 }, { _id: 104, balance: 20 }]);
    const script = `
      const session = db.getMongo().startSession();
      session.startTransaction();
      const accts = session.getDatabase('bank').accounts;
      const total = accts.findOne({ _id: 4 }).balance + accts.findOne({ _id: 104 }).balance;
      accts.updateOne({ _id: 4 }, { $set: { balance: total } });
      accts.updateOne({ _id: 104 }, { $set: { balance: 0 } });
      session.commitTransaction();
      print(JSON.stringify(db.getSiblingDB('bank').accounts.find({ _id: { $in: [4, 104] } }).sort({ _id: 1 }).toArray()));
    `;
    const { stdout } = await run(MONGOSH, [cluster.routers[0]!.uri, '--quiet', '--norc', '--eval', script], { timeout: 90_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
    assert.deepEqual(JSON.parse(stdout.trim()), [{ _id: 4, balance: 30 }, { _id: 104, balance: 0 }]);
  });

  it("reads a chunk that moved after its snapshot's time on its former owner, and refuses to write it there with a transient error", async () => {
    const admin = other.db('admin');
    await admin.command({ shardCollection: 'bank.moved', key: { _id: 1 } });
    await admin.command({ split: 'bank.moved', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'bank.moved', find: { _id: 100 }, to: 'shard1' });
    const moved = client.db('bank').collection<AnyDoc>('moved');
    const causal = client.startSession({ causalConsistency: true });
    await moved.insertOne({ _id: 150, n: 0 }, { session: causal });
    const beforeMove = causal.operationTime!;
    await causal.endSession();
    await admin.command({ moveChunk: 'bank.moved', find: { _id: 100 }, to: 'shard0' });
    const raw = new WireClient();
    const host = `127.0.0.1:${cluster.routers[0]!.port}`;
    const lsid = { id: new UUID() };
    try {
      // A snapshot from before the move: shard1 held the document then, and still serves that time.
      const read = await raw.command(host, 'bank', { find: 'moved', filter: { _id: 150 }, lsid, txnNumber: Long.fromNumber(1), autocommit: false, startTransaction: true, readConcern: { level: 'snapshot', atClusterTime: beforeMove } });
      assert.deepEqual((read.cursor as AnyDoc).firstBatch, [{ _id: 150, n: 0 }], JSON.stringify(read));
      // Written there, the document would be an orphan: MigrationConflict, as MongoDB answers.
      const stale = await raw.command(host, 'bank', { update: 'moved', updates: [{ q: { _id: 150 }, u: { $inc: { n: 1 } } }], lsid, txnNumber: Long.fromNumber(1), autocommit: false });
      assert.equal(stale.code, 272, JSON.stringify(stale));
      assert.deepEqual(stale.errorLabels, ['TransientTransactionError']);
      const fresh = await raw.command(host, 'bank', { update: 'moved', updates: [{ q: { _id: 150 }, u: { $inc: { n: 1 } } }], lsid, txnNumber: Long.fromNumber(2), autocommit: false, startTransaction: true });
      assert.equal(fresh.nModified, 1, JSON.stringify(fresh));
      assert.equal((await raw.command(host, 'admin', { commitTransaction: 1, lsid, txnNumber: Long.fromNumber(2), autocommit: false })).ok, 1);
    } finally {
      await raw.close();
    }
    assert.deepEqual(await moved.findOne({ _id: 150 }), { _id: 150, n: 1 });
  });

  it('refuses to commit a write to a range given away while the transaction ran, even on a shard that has not loaded what it owns since', async () => {
    const admin = other.db('admin');
    await admin.command({ shardCollection: 'bank.given', key: { _id: 1 } });
    await admin.command({ split: 'bank.given', middle: { _id: 100 } });
    await admin.command({ moveChunk: 'bank.given', find: { _id: 100 }, to: 'shard1' });
    const given = client.db('bank').collection<AnyDoc>('given');
    await given.insertOne({ _id: 150, n: 0 });
    const session = client.startSession();
    try {
      session.startTransaction();
      await given.updateOne({ _id: 150 }, { $inc: { n: 1 } }, { session });
      await admin.command({ moveChunk: 'bank.given', find: { _id: 100 }, to: 'shard0' });
      // shard1 forgets what it owns (as after a refresh that failed, or on a new primary): the
      // commit may not take that for "owns everything".
      const shard1 = new MongoClient(cluster.shards[1]!.uri);
      try {
        await shard1.db('bank').command({ _shardsvrParticipantBlock: 'given', blockType: 'Unblock', reason: { command: 'forget', ns: 'bank.given' } });
      } finally {
        await shard1.close();
      }
      const refused = await failure(session.commitTransaction());
      assert.equal(refused.code, 13388, refused.message);
    } finally {
      await session.endSession();
    }
    assert.deepEqual(await given.findOne({ _id: 150 }), { _id: 150, n: 0 });
    assert.equal(await given.countDocuments(), 1);
  });
});
