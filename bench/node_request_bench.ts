// What one request costs a shard's CPU: `npm run bench -- node-request`. A single-member replica
// set of `docshard shard` (the command layer runs as on any replica-set shard: primary checks,
// read and write concerns) serves findOne by _id and insertOne from 8 concurrent requesters of the
// official driver. With DOCSHARD_BASELINE (one or more other checkouts, comma-separated), each
// gets a set of its own beside this checkout's, and every round runs each op on every set in a
// rotated order: a change to the command path measured before and after in one run.
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { removeDir, type AnyDoc } from '../test/helpers/spawn_node.js';
import { cpuSecondsExact } from './proc_cpu.js';
import { printTable } from './table.js';

const CONCURRENCY = 8;
const SECONDS = 1;
const ROUNDS = 20;
const PRELOAD = 10_000;
const WARM_UP = 3000;

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

interface Target {
  label: string;
  set: SpawnedReplicaSet;
  client: MongoClient;
  coll: Collection<AnyDoc>;
  pid: number;
}

interface Round {
  ops: number;
  cpuUs: number;
}

const OPS = {
  'findOne by _id': (t: Target, i: number) => t.coll.findOne({ _id: (i * 7919) % PRELOAD }),
  'insertOne (~223 B doc), w: majority': (t: Target, i: number) => t.coll.insertOne(doc(PRELOAD + i)),
};
type OpName = keyof typeof OPS;

function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

// CONCURRENCY requesters, one request in flight each, for SECONDS: the node's CPU (every thread,
// from the scheduler's own counters) over the requests it served. Insert keys go on from `next`.
async function round(t: Target, op: OpName, next: { key: number }): Promise<Round> {
  let ops = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const before = cpuSecondsExact(t.pid);
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      await OPS[op](t, next.key++);
      ops += 1;
    }
  }));
  return { ops, cpuUs: (cpuSecondsExact(t.pid) - before) * 1e6 };
}

async function startTarget(label: string, name: string, bin?: string): Promise<Target> {
  const set = await spawnReplicaSet({ members: 1, name, node: () => (bin === undefined ? {} : { bin }) });
  const client = new MongoClient(set.uri, { maxPoolSize: CONCURRENCY, retryWrites: false });
  const coll = client.db('bench').collection<AnyDoc>('docs');
  for (let b = 0; b < PRELOAD; b += 1000) await coll.insertMany(Array.from({ length: 1000 }, (_, j) => doc(b + j)));
  return { label, set, client, coll, pid: set.nodes[0]!.child.pid! };
}

export async function runNodeRequestBench(): Promise<void> {
  const baselines = (process.env.DOCSHARD_BASELINE ?? '').split(',').filter((b) => b !== '').map((b) => path.resolve(b));
  const targets: Target[] = [];
  try {
    targets.push(await startTarget('this checkout', 'rs0'));
    for (const [i, b] of baselines.entries()) targets.push(await startTarget(`baseline ${path.basename(b)}`, `rs${i + 1}`, path.join(b, 'bin/docshard.js')));
    // Insert keys never meet the preloaded ones nor each other's.
    const next = { key: PRELOAD * 10 };
    const warmUps = (Object.keys(OPS) as OpName[]).flatMap((op) => targets.map((t) => ({ op, t })));
    for (const { op, t } of warmUps) {
      for (let i = 0; i < WARM_UP; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, () => OPS[op](t, next.key++)));
    }
    const rounds: Record<string, Round[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      const order = targets.map((_, i) => targets[(i + r) % targets.length]!);
      for (const op of Object.keys(OPS) as OpName[]) {
        for (const t of order) (rounds[`${op}/${t.label}`] ??= []).push(await round(t, op, next));
      }
    }
    const rows: string[][] = [];
    const perOp = (rs: Round[]): number => rs.reduce((n, x) => n + x.cpuUs, 0) / rs.reduce((n, x) => n + x.ops, 0);
    for (const op of Object.keys(OPS) as OpName[]) {
      const own = rounds[`${op}/${targets[0]!.label}`]!;
      for (const t of targets) {
        const rs = rounds[`${op}/${t.label}`]!;
        const ops = rs.reduce((n, x) => n + x.ops, 0);
        // This checkout's CPU per request ÷ this baseline's, over the run and round by round (the
        // two ran back to back in each round).
        const ratios = Float64Array.from(rs, (x, i) => (own[i]!.cpuUs / own[i]!.ops) / (x.cpuUs / x.ops)).sort();
        const vs = t === targets[0] ? ['', ''] : [`**${(perOp(own) / perOp(rs)).toFixed(3)}**`, `${percentile(ratios, 0.5).toFixed(3)}; ${percentile(ratios, 0.25).toFixed(3)}–${percentile(ratios, 0.75).toFixed(3)}`];
        rows.push([`${op}, ${t.label}`, String(Math.round(ops / (ROUNDS * SECONDS))), `${perOp(rs).toFixed(1)} µs`, ...vs]);
      }
    }
    printTable([`${CONCURRENCY} concurrent requesters, ${ROUNDS} × ${SECONDS} s per node`, 'ops/s', 'node CPU/op', 'this checkout ÷ it', 'per round: median; middle half'], rows);
  } finally {
    await Promise.all(targets.map((t) => t.client.close()));
    for (const t of targets) {
      await t.set.stop();
      for (const n of t.set.nodes) removeDir(n.dbpath);
    }
  }
}
