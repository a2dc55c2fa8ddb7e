import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { checkListAppend, type Key, type MicroOp, type Transaction } from '../helpers/list_append_checker.js';
import { runListAppendTransaction } from '../helpers/list_append_transaction.js';
import { listAppendWorkload } from '../helpers/list_append_workload.js';
import { seededRandom } from '../../src/router/merge/merge_test_support.js';
import { withCluster } from '../helpers/fixtures.js';

// Issue 21's list-append workload, checked the way Jepsen's Elle checks it
// (test/helpers/list_append_checker.ts): transactions read and append to lists in documents on
// two shards through a router while a mover migrates one chunk back and forth and a shard is
// killed with -9 and restarted. Snapshot isolation allows write skew (G2-item) and nothing else:
// no G0, G1a, G1b, G1c, G-single, no read that is not a prefix of the key's order, no duplicate,
// no transaction missing its own appends. A transaction reads and appends to keys of both shards,
// so those that append to both commit through the two-phase commit.

const WORKERS = 4;
const TXNS_PER_WORKER = 40;
const SPLIT = 1000;

// Odd keys live in the chunk from SPLIT on, which the mover moves between the shards.
const docId = (key: Key): number => (Number(key) % 2) * SPLIT + Number(key);

describe('list-append transactions across shards, with migrations and kill -9', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    cluster = f.cluster;
    client = f.connect(cluster.routers[0]!.uri, { retryWrites: false });
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'la', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'la.lists', key: { _id: 1 } });
    await admin.command({ split: 'la.lists', middle: { _id: SPLIT } });
    await admin.command({ moveChunk: 'la.lists', find: { _id: SPLIT }, to: 'shard1' });
  });

  it('shows no anomaly but write skew', { timeout: 180_000 }, async (t) => {
    const lists = client.db('la').collection<AnyDoc>('lists');
    const next = listAppendWorkload(seededRandom(21), { activeKeys: 6, maxOpsPerTxn: 4 });
    const history: Transaction[] = [];
    let running = true;

    const mover = (async () => {
      let to = 'shard0';
      while (running) {
        await new Promise((r) => setTimeout(r, 1500));
        if (!running) break;
        await client.db('admin').command({ moveChunk: 'la.lists', find: { _id: SPLIT }, to, _waitForDelete: false }).catch(() => undefined);
        to = to === 'shard0' ? 'shard1' : 'shard0';
      }
    })();
    const chaos = (async () => {
      await new Promise((r) => setTimeout(r, 4000));
      await cluster.shards[0]!.kill9();
      await new Promise((r) => setTimeout(r, 500));
      cluster.shards[0] = await restartNode(cluster.shards[0]!, { role: 'shard' });
    })();

    const worker = async (): Promise<void> => {
      for (let t = 0; t < TXNS_PER_WORKER; t++) history.push(await runListAppendTransaction(client, lists, next(), docId));
    };
    try {
      await Promise.all(Array.from({ length: WORKERS }, worker));
    } finally {
      running = false;
      await mover;
      await chaos;
    }

    // A final read of every key, which gives each key its whole order.
    const keys = [...new Set(history.flatMap((t) => t.ops.map((op) => op[1])))];
    const finalReads: MicroOp[] = [];
    for (const key of keys) {
      const doc = await lists.findOne({ _id: docId(key) });
      finalReads.push(['r', key, (doc?.v as number[] | undefined) ?? null]);
    }
    history.push({ outcome: 'ok', ops: finalReads });

    const committed = history.filter((h) => h.outcome === 'ok').length;
    t.diagnostic(`${committed} committed, ${history.filter((h) => h.outcome === 'info').length} unknown, ${history.filter((h) => h.outcome === 'failed').length} failed`);
    assert.ok(committed >= WORKERS * TXNS_PER_WORKER / 8, `only ${committed} of ${history.length} transactions committed`);
    const anomalies = checkListAppend(history).filter((a) => a.type !== 'G2-item');
    assert.deepEqual(anomalies.map((a) => ({ type: a.type, txns: a.txns.map((t) => t.ops) })), []);
  });
});
