import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { checkBank, type Balances, type Transfer } from '../helpers/bank_checker.js';
import { seededRandom } from '../../src/router/merge/merge_test_support.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 21's bank invariant: 8 clients move money between 100 accounts spread over 3 shards in
// the driver's withTransaction, through two routers, while a mover migrates chunks and a chaos
// loop kills a shard with -9 (the coordinator's among them) and restarts it every few seconds.
// Snapshot reads of every balance, taken all along through the other router, always sum to the
// initial total; the final balances are the initial ones moved by exactly the committed
// transfers, which each transfer records in a ledger document of its own transaction.

const ACCOUNTS = 100;
const INITIAL = 100;
const CLIENTS = 8;
const RUN_MS = 25_000;
const SPLITS = [17, 34, 50, 67, 84];
const SHARDS = ['shard0', 'shard1', 'shard2'];

describe('bank transfers in transactions across three shards, with migrations and kill -9', () => {
  let cluster: SpawnedCluster;
  let writer: MongoClient;
  let reader: MongoClient;

  withCluster({ shards: 3, routers: 2 }, async (f) => {
    ({ cluster, client: writer } = f);
    reader = f.connect(cluster.routers[1]!.uri);
    const admin = writer.db('admin');
    await admin.command({ enableSharding: 'bank', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bank.accounts', key: { _id: 1 } });
    for (const middle of SPLITS) await admin.command({ split: 'bank.accounts', middle: { _id: middle } });
    for (const [i, min] of SPLITS.entries()) await admin.command({ moveChunk: 'bank.accounts', find: { _id: min }, to: SHARDS[(i + 1) % 3] });
    await writer.db('bank').collection<AnyDoc>('accounts').insertMany(Array.from({ length: ACCOUNTS }, (_, _id) => ({ _id, balance: INITIAL })));
    await admin.command({ shardCollection: 'bank.ledger', key: { _id: 1 } });
  });

  it('never makes or loses money', { timeout: 240_000 }, async (t) => {
    const random = seededRandom(2121);
    const accounts = writer.db('bank').collection<AnyDoc>('accounts');
    const ledger = writer.db('bank').collection<AnyDoc>('ledger');
    const deadline = Date.now() + RUN_MS;
    const running = () => Date.now() < deadline;
    const reads: Balances[] = [];
    let attempts = 0;

    const mover = (async () => {
      while (running()) {
        await sleep(1500);
        const min = [0, ...SPLITS][Math.floor(random() * (SPLITS.length + 1))]!;
        await writer.db('admin').command({ moveChunk: 'bank.accounts', find: { _id: min }, to: SHARDS[Math.floor(random() * 3)] }).catch(() => undefined);
      }
    })();
    const chaos = (async () => {
      for (let i = 0; running(); i++) {
        await sleep(5000);
        if (!running()) break;
        const victim = i % 3;
        await cluster.shards[victim]!.kill9();
        await sleep(300);
        cluster.shards[victim] = await restartNode(cluster.shards[victim]!, { role: 'shard' });
      }
    })();
    const snapshots = (async () => {
      while (running()) {
        const session = reader.startSession();
        try {
          session.startTransaction({ readConcern: { level: 'snapshot' } });
          const docs = await reader.db('bank').collection<AnyDoc>('accounts').find({}, { session }).toArray();
          await session.commitTransaction();
          reads.push(new Map(docs.map((d) => [d._id as number, d.balance as number])));
        } catch {
          await session.abortTransaction().catch(() => undefined);
          await sleep(50);
        } finally {
          await session.endSession().catch(() => undefined);
        }
      }
    })();
    const client = async (n: number): Promise<void> => {
      for (let k = 0; running(); k++) {
        const from = Math.floor(random() * ACCOUNTS);
        const to = (from + 1 + Math.floor(random() * (ACCOUNTS - 1))) % ACCOUNTS;
        const amount = 1 + Math.floor(random() * 5);
        const session = writer.startSession();
        attempts += 1;
        try {
          await session.withTransaction(async () => {
            await accounts.updateOne({ _id: from }, { $inc: { balance: -amount } }, { session });
            await accounts.updateOne({ _id: to }, { $inc: { balance: amount } }, { session });
            await ledger.insertOne({ _id: `${n}-${k}`, from, to, amount }, { session });
          }, { maxCommitTimeMS: 10_000 });
        } catch (err) {
          // A transfer that failed for good is not in the ledger, or is, if its commit's outcome
          // was unknown: the ledger says which.
          if (!(err instanceof Error)) throw err;
          await sleep(100);
        } finally {
          await session.endSession().catch(() => undefined);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
    } finally {
      await Promise.all([mover, chaos, snapshots]);
    }

    const transfers = (await ledger.find({}).toArray()) as unknown as Transfer[];
    const initial = new Map(Array.from({ length: ACCOUNTS }, (_, id) => [id, INITIAL]));
    const final = new Map((await accounts.find({}).toArray()).map((d) => [d._id as number, d.balance as number]));
    t.diagnostic(`${transfers.length} of ${attempts} transfers committed, ${reads.length} snapshot reads`);
    assert.ok(transfers.length >= 20, `only ${transfers.length} transfers committed`);
    assert.ok(reads.length >= 5, `only ${reads.length} snapshot reads`);
    const report = checkBank(initial, transfers, reads, final);
    assert.deepEqual(report.badReads.map((r) => ({ index: r.index, total: r.total, missing: r.missing })), []);
    assert.deepEqual(report.badFinal, []);
  });
});
