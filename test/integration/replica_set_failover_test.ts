import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { checkListAppend, type Key, type MicroOp, type Transaction } from '../helpers/list_append_checker.js';
import { runListAppendTransaction } from '../helpers/list_append_transaction.js';
import { listAppendWorkload } from '../helpers/list_append_workload.js';
import { holdsEveryAcknowledgedWriteOnce, writeLoad, type WriteLoad } from '../helpers/replset_write_load.js';
import { seededRandom } from '../../src/router/merge/merge_test_support.js';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const WRITERS = 8;
const TXN_WORKERS = 3;

// Beside the writes, list-append transactions (snapshot read concern, w: 'majority' commits) on
// la.lists, one document a key, until stopped: their history for the list-append checker.
function listAppendLoad(client: MongoClient): { history: Transaction[]; stop: () => Promise<void> } {
  const lists = client.db('la').collection<AnyDoc>('lists');
  const next = listAppendWorkload(seededRandom(31), { activeKeys: 6, maxOpsPerTxn: 4 });
  const history: Transaction[] = [];
  let stopping = false;
  const workers = Array.from({ length: TXN_WORKERS }, async () => {
    while (!stopping) history.push(await runListAppendTransaction(client, lists, next(), (key) => key, { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } }));
  });
  return { history, stop: async () => { stopping = true; await Promise.all(workers); } };
}

// Issue 31's failover under load: 8 clients write with w: 'majority' and retryable writes (the
// driver's defaults against a set) while the primary is killed with SIGKILL, at the default
// election timeout. A new primary is elected within 12 s; afterwards every member holds every
// acknowledged write exactly once, and a write whose outcome the client never learned at most once.
// Through the kill, list-append transactions run too, and the list-append checker finds no anomaly
// in their history.
describe('a three-member replica set under write load loses the primary', () => {
  let set: SpawnedReplicaSet;
  let processes: SuiteProcesses;
  const restarted: SpawnedNode[] = [];
  // The tests' clients are the suite's, closed while the members are up: one closed after they
  // stopped waits out its server selection (30 s) to end its sessions.
  withProcesses(async (p) => {
    processes = p;
    set = await p.replicaSet({ members: 3 });
  });
  after(async () => {
    for (const n of restarted) await n.stop();
  });
  // What earlier tests of the suite acknowledged (and could not know) stays on every member.
  const previous: WriteLoad[] = [];
  const holdsEveryAcknowledgedWrite = async (load: WriteLoad): Promise<void> => {
    previous.push(load);
    for (const host of set.hosts) await holdsEveryAcknowledgedWriteOnce(connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`), host, previous);
  };

  // Every member up, PRIMARY or SECONDARY, at the same optime.
  const converged = (via: MongoClient): Promise<true> => until('every member at the same optime', async () => {
    const status = await via.db('admin').command({ replSetGetStatus: 1 });
    const members = status.members as AnyDoc[];
    if (members.some((m) => m.health !== 1 || (m.stateStr !== 'PRIMARY' && m.stateStr !== 'SECONDARY'))) return undefined;
    return new Set(members.map((m) => JSON.stringify(m.optime))).size === 1 ? true : undefined;
  }, 90_000);

  // Every member holds the same lists, the last read of the history; in it the checker finds no
  // anomaly but write skew (G2-item, which snapshot isolation allows), and every append of a
  // committed transaction is in its key's list.
  const listsShowNoAnomaly = async (history: Transaction[], t: { diagnostic: (m: string) => void }): Promise<void> => {
    const keys = [...new Set(history.flatMap((h) => h.ops.map((op) => op[1])))];
    const onMember = async (host: string): Promise<MicroOp[]> => {
      const docs = await connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`).db('la').collection<AnyDoc>('lists').find({}).toArray();
      return keys.map((key): MicroOp => ['r', key, (docs.find((d) => d._id === key)?.v as number[] | undefined) ?? null]);
    };
    const [finalReads, ...others] = await Promise.all(set.hosts.map(onMember));
    others.forEach((reads, i) => assert.deepEqual(reads, finalReads, `${set.hosts[i + 1]} holds other lists than ${set.hosts[0]}`));
    history.push({ outcome: 'ok', ops: finalReads! });
    t.diagnostic(`${history.filter((h) => h.outcome === 'ok').length} transactions committed, ${history.filter((h) => h.outcome === 'info').length} unknown, ${history.filter((h) => h.outcome === 'failed').length} failed`);
    const anomalies = checkListAppend(history).filter((a) => a.type !== 'G2-item');
    assert.deepEqual(anomalies.map((a) => ({ type: a.type, txns: a.txns.map((h) => h.ops) })), []);
    const final = new Map<Key, readonly number[]>(finalReads!.map((op) => [op[1], (op[2] as number[] | null) ?? []]));
    const lost = history.filter((h) => h.outcome === 'ok').flatMap((h) => h.ops.filter((op) => op[0] === 'append' && !final.get(op[1])!.includes(op[2])));
    assert.deepEqual(lost, [], 'appends of committed transactions missing from the lists');
  };

  const connect = (uri: string): MongoClient => processes.connect(uri, { serverSelectionTimeoutMS: 30_000, heartbeatFrequencyMS: 500 });

  it('elects a new primary within 12 s, and every member ends holding each acknowledged write once', { timeout: 240_000 }, async (t) => {
    const client = connect(set.uri);
    const load = writeLoad(client, WRITERS);
    const txns = listAppendLoad(client);
    const { ackedInserts } = load;
    const committed = (): number => txns.history.filter((h) => h.outcome === 'ok').length;
    // Stopped however the test ends, as in the next test.
    let primaryHost: string;
    let primary: SpawnedNode;
    let survivor: MongoClient;
    let newPrimary: string;
    let electedAfterMs: number;
    try {
      await until('writes and transactions under way', async () => (ackedInserts.size >= 200 && committed() >= 20 ? true : undefined));
      const hello = await client.db('admin').command({ hello: 1 });
      primaryHost = String(hello.primary);
      primary = set.nodes[set.hosts.indexOf(primaryHost)]!;
      const killedAt = Date.now();
      await primary.kill9();
      survivor = connect(`mongodb://${set.hosts.find((h) => h !== primaryHost)}/?directConnection=true`);
      newPrimary = await until('a new primary', async () => {
        const status = await survivor.db('admin').command({ replSetGetStatus: 1 });
        const p = (status.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.health === 1);
        return p !== undefined && p.name !== primaryHost ? String(p.name) : undefined;
      }, 30_000, 50);
      electedAfterMs = Date.now() - killedAt;
      const acknowledgedBefore = ackedInserts.size;
      const committedBefore = committed();
      await until('writes and transactions acknowledged by the new primary', async () => (ackedInserts.size >= acknowledgedBefore + 200 && committed() >= committedBefore + 20 ? true : undefined), 60_000);
    } finally {
      await load.stop();
      await txns.stop();
    }
    t.diagnostic(`new primary after ${electedAfterMs} ms; ${ackedInserts.size} inserts acknowledged`);
    assert.ok(electedAfterMs <= 12_000, `the new primary ${newPrimary} took ${electedAfterMs} ms`);

    // The old primary comes back from its files; whatever it wrote that no majority held is undone
    // (by rollback or, its history gone with the process, by syncing again), and it catches up.
    const back = await restartNode(primary, { extraArgs: ['--replSet', set.name] });
    restarted.push(back);
    set.nodes[set.nodes.indexOf(primary)] = back;
    await converged(survivor);

    await holdsEveryAcknowledgedWrite(load);
    await listsShowNoAnomaly(txns.history, t);
  });

  it('a primary stopped (SIGSTOP) for 30 s is replaced, and once continued steps down and undoes what no majority held', { timeout: 240_000 }, async (t) => {
    const client = connect(set.uri);
    const load = writeLoad(client, WRITERS);
    // Stopped however the test ends: writers left running keep the file from ending.
    try {
      await until('writes under way', async () => (load.ackedInserts.size >= 200 ? true : undefined));
      const primaryHost = String((await client.db('admin').command({ hello: 1 })).primary);
      const primary = set.nodes[set.hosts.indexOf(primaryHost)]!;
      const stoppedAt = Date.now();
      primary.child.kill('SIGSTOP');
      const survivor = connect(`mongodb://${set.hosts.find((h) => h !== primaryHost)}/?directConnection=true`);
      try {
        await until('a new primary', async () => {
          const status = await survivor.db('admin').command({ replSetGetStatus: 1 });
          const p = (status.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.health === 1);
          return p !== undefined && p.name !== primaryHost ? true : undefined;
        }, 30_000, 50);
        const electedAfterMs = Date.now() - stoppedAt;
        t.diagnostic(`new primary after ${electedAfterMs} ms`);
        assert.ok(electedAfterMs <= 12_000, `the new primary took ${electedAfterMs} ms`);
        await sleep(Math.max(0, 30_000 - (Date.now() - stoppedAt)));
      } finally {
        primary.child.kill('SIGCONT');
      }
      await until('the old primary a secondary', async () => {
        const h = await connect(`mongodb://${primaryHost}/?directConnection=true`).db('admin').command({ hello: 1 });
        return h.secondary === true ? true : undefined;
      }, 60_000);
      await load.stop();
      await converged(survivor);
      await holdsEveryAcknowledgedWrite(load);
    } finally {
      await load.stop();
    }
  });
});
