// The write outage a client sees through the router when a shard's primary is killed (SIGKILL):
// from the kill to the first write on that shard the router acknowledges, with w: 1 and with
// w: 'majority' (two clients at once), beside when one of the set's survivors first says it is a
// writable primary (the set's share; the rest is the router's finding it and the write's own wait).
import { MongoClient } from 'mongodb';
import { restartNode, type AnyDoc } from '../test/helpers/spawn_node.js';
import { until } from '../test/helpers/spawn_replset.js';
import { rawCommand } from './raw_command.js';
import { healthyPrimary } from './replset_bench.js';
import type { SetsCluster } from './shardsets_cluster.js';

const KILLS = Number(process.env.DOCSHARD_BENCH_SHSETS_KILLS ?? 20);
const BUDGET_MS = Number(process.env.DOCSHARD_BENCH_SHSETS_KILL_S ?? 300) * 1000;
const LIMIT_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

const sec = (x: number): string => (Number.isFinite(x) ? `${(x / 1000).toFixed(2)} s` : '–');

// The time of the first insert into `db` the router acknowledges with write concern `w` (raw
// OP_MSG to the router, a new connection each attempt; again 10 ms after each failure).
async function firstAck(routerPort: number, db: string, w: 1 | 'majority', tag: string): Promise<number> {
  const deadline = performance.now() + LIMIT_MS;
  for (let attempt = 0; performance.now() < deadline; attempt++) {
    const reply = await rawCommand(routerPort, { insert: 'outage', documents: [{ _id: `${tag}-${attempt}` }], writeConcern: { w, wtimeout: 30_000 }, $db: db }, 35_000).catch(() => undefined);
    if (reply?.ok === 1 && reply.n === 1 && !reply.writeErrors && !reply.writeConcernError) return performance.now();
    await sleep(10);
  }
  return NaN;
}

async function firstWritablePrimary(ports: number[]): Promise<number> {
  const deadline = performance.now() + LIMIT_MS;
  while (performance.now() < deadline) {
    const replies = await Promise.all(ports.map((p) => rawCommand(p, { hello: 1, $db: 'admin' }, 2000).catch(() => undefined)));
    if (replies.some((r) => r?.isWritablePrimary === true)) return performance.now();
    await sleep(10);
  }
  return NaN;
}

export async function outageRows(cluster: SetsCluster): Promise<string[][]> {
  // One database per shard, unsharded, its primary shard that set: every write to it goes there.
  const client = new MongoClient(cluster.router.uri);
  try {
    for (const set of cluster.sets) {
      await client.db('admin').command({ enableSharding: `out_${set.name}`, primaryShard: set.name });
      await client.db(`out_${set.name}`).collection<AnyDoc>('outage').insertOne({ _id: 'first' }, { writeConcern: { w: 'majority' } });
    }
  } finally {
    await client.close();
  }
  const w1: number[] = [];
  const majority: number[] = [];
  const elected: number[] = [];
  let failed = 0;
  const started = performance.now();
  for (let k = 0; k < KILLS && performance.now() - started < BUDGET_MS; k++) {
    const set = cluster.sets[k % cluster.sets.length]!;
    const primary = await healthyPrimary(set);
    const old = set.nodes[primary]!;
    const survivors = set.nodes.filter((_, i) => i !== primary).map((n) => n.port);
    const killedAt = performance.now();
    await old.kill9();
    const [a, b, e] = await Promise.all([
      firstAck(cluster.router.port, `out_${set.name}`, 1, `${k}-w1`),
      firstAck(cluster.router.port, `out_${set.name}`, 'majority', `${k}-wmaj`),
      firstWritablePrimary(survivors),
    ]);
    if (Number.isNaN(a) || Number.isNaN(b)) failed += 1;
    else {
      w1.push(a - killedAt);
      majority.push(b - killedAt);
    }
    if (!Number.isNaN(e)) elected.push(e - killedAt);
    const restarted = await restartNode(old, { extraArgs: ['--replSet', set.name] });
    set.nodes[primary] = restarted;
    await until('the restarted member to be SECONDARY', async () => {
      const hello = await rawCommand(restarted.port, { hello: 1, $db: 'admin' }, 2000);
      return hello.secondary === true ? true : undefined;
    }, 120_000, 100);
  }
  const row = (label: string, xs: number[]): string[] => [label, String(xs.length), sec(percentile(xs, 0.5)), sec(percentile(xs, 0.99)), sec(Math.min(...xs)), sec(Math.max(...xs))];
  return [
    row('first write acknowledged through the router, w: 1', w1),
    row("first write acknowledged through the router, w: 'majority'", majority),
    row("(a survivor's hello says writable primary, polled directly)", elected),
    [`kills with no acknowledged write in ${LIMIT_MS / 1000} s`, String(failed), '', '', '', ''],
  ];
}
