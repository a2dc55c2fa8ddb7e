import path from 'node:path';
import { MongoClient, type ClientSession, type Collection } from 'mongodb';
import { cpuSeconds } from './proc_cpu.js';
import { printTable } from './table.js';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { spawnCluster } from '../test/helpers/spawn_cluster.js';

// npm run bench -- txn. Through a router over two shards: a transaction of three writes on one shard
// against the same three writes without one, and the latency of a transaction that reads both
// shards and writes one. What snapshot reads cost against plain reads on one node (with history to
// read through: every document updated since the snapshot's time), and, with DOCSHARD_BASELINE
// naming another checkout (one without versioned storage), what keeping versions costs the
// non-transactional paths: the same inserts, updates and point reads on a node of each checkout,
// rounds alternating between them.

const DOCS = 20_000;
const BATCH = 1000;
const UPDATES = 5_000;
const SECONDS = 3;
const ROUNDS = 3;
const CONCURRENCY = 16;

const BASELINE = process.env.DOCSHARD_BASELINE;

function doc(i: number): AnyDoc {
  return { _id: i, k: i, name: `user-${i}`, score: i * 1.5, note: 'x'.repeat(80) };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

interface Target {
  name: string;
  node: SpawnedNode;
  client: MongoClient;
  coll: Collection<AnyDoc>;
}

async function target(name: string, bin?: string): Promise<Target> {
  const node = await spawnNode(bin === undefined ? {} : { bin });
  const client = new MongoClient(node.uri, { maxPoolSize: CONCURRENCY });
  return { name, node, client, coll: client.db('bench').collection<AnyDoc>('docs') };
}

// `fn` run by CONCURRENCY workers until `count` operations are done or, without a count, for
// SECONDS: operations per second and the node's CPU per operation (µs).
async function measure(t: Target, fn: (i: number) => Promise<unknown>, count?: number): Promise<{ rate: number; cpuUs: number }> {
  const pid = t.node.child.pid!;
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  const deadline = Date.now() + SECONDS * 1000;
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (count === undefined ? Date.now() < deadline : next < count) await fn(next++);
  }));
  const ms = performance.now() - started;
  return { rate: Math.round((next / ms) * 1000), cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / next };
}

async function load(t: Target): Promise<void> {
  await t.coll.drop().catch(() => undefined);
  for (let b = 0; b < DOCS; b += BATCH) await t.coll.insertMany(Array.from({ length: BATCH }, (_, j) => doc(b + j)));
}

type Workload = { name: string; run(t: Target): Promise<{ rate: number; cpuUs: number }> };

const WORKLOADS: Workload[] = [
  {
    name: `insertMany, batches of ${BATCH}, ${CONCURRENCY} writers`,
    async run(t) {
      await t.coll.drop().catch(() => undefined);
      const r = await measure(t, (b) => t.coll.insertMany(Array.from({ length: BATCH }, (_, j) => doc(b * BATCH + j))), DOCS / BATCH);
      return { rate: r.rate * BATCH, cpuUs: r.cpuUs / BATCH };
    },
  },
  { name: `updateOne by _id ($inc), ${CONCURRENCY} concurrent`, run: (t) => measure(t, (i) => t.coll.updateOne({ _id: (i * 7919) % DOCS }, { $inc: { score: 1 } }), UPDATES) },
  { name: `findOne by _id, ${CONCURRENCY} concurrent`, run: (t) => measure(t, (i) => t.coll.findOne({ _id: (i * 7919) % DOCS })) },
];

async function storageCostRows(baseline: string): Promise<string[][]> {
  const targets = [await target('current'), await target('baseline', path.join(baseline, 'bin/docshard.js'))];
  try {
    const results = new Map<string, { current: number[]; baseline: number[]; cpuCurrent: number[]; cpuBaseline: number[] }>();
    for (const w of WORKLOADS) results.set(w.name, { current: [], baseline: [], cpuCurrent: [], cpuBaseline: [] });
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
        await load(t);
        for (const w of WORKLOADS) {
          const r = await w.run(t);
          const entry = results.get(w.name)!;
          (t.name === 'current' ? entry.current : entry.baseline).push(r.rate);
          (t.name === 'current' ? entry.cpuCurrent : entry.cpuBaseline).push(r.cpuUs);
        }
      }
    }
    return WORKLOADS.map((w) => {
      const e = results.get(w.name)!;
      const ratios = e.current.map((c, i) => c / e.baseline[i]!).sort((a, b) => a - b);
      return [w.name, `${median(e.current)}/s`, `${median(e.baseline)}/s`, `${(median(e.current) / median(e.baseline)).toFixed(2)} (rounds ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)})`, `${median(e.cpuCurrent).toFixed(1)} µs / ${median(e.cpuBaseline).toFixed(1)} µs`];
    });
  } finally {
    for (const t of targets) {
      await t.client.close();
      await t.node.stop();
      removeDir(t.node.dbpath);
    }
  }
}

async function snapshotRows(): Promise<string[][]> {
  const t = await target('current');
  try {
    await load(t);
    // A time before every document changes: snapshot reads then go through the history of each.
    const session = t.client.startSession({ causalConsistency: true });
    await t.coll.findOne({ _id: 0 }, { session });
    const before = session.operationTime!;
    await session.endSession();
    await t.coll.updateMany({}, { $inc: { score: 1 } });
    await t.coll.createIndex({ k: 1 });
    const snapshot = { readConcern: { level: 'snapshot' as const, atClusterTime: before } };
    const db = t.client.db('bench');
    const rows: string[][] = [];
    const pairs: [string, (i: number, rc?: object) => Promise<unknown>][] = [
      ['find by _id', (i, rc) => db.command({ find: 'docs', filter: { _id: (i * 7919) % DOCS }, limit: 1, singleBatch: true, ...rc })],
      ['find k in [a, a+100)', (i, rc) => db.command({ find: 'docs', filter: { k: { $gte: (i * 97) % (DOCS - 100), $lt: ((i * 97) % (DOCS - 100)) + 100 } }, batchSize: 200, ...rc })],
    ];
    for (const [name, fn] of pairs) {
      const plain: number[] = [];
      const snap: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        plain.push((await measure(t, (i) => fn(i))).rate);
        snap.push((await measure(t, (i) => fn(i, snapshot))).rate);
      }
      rows.push([`${name}, ${CONCURRENCY} concurrent, every document changed since the snapshot`, `${median(snap)}/s`, `${median(plain)}/s`, (median(snap) / median(plain)).toFixed(2), '']);
    }
    return rows;
  } finally {
    await t.client.close();
    await t.node.stop();
    removeDir(t.node.dbpath);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function clusterRows(): Promise<string[][]> {
  const cluster = await spawnCluster({ shards: 2 });
  const client = new MongoClient(cluster.routers[0]!.uri, { maxPoolSize: CONCURRENCY });
  try {
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'bench', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bench.t', key: { _id: 1 } });
    await admin.command({ split: 'bench.t', middle: { _id: 1_000_000 } });
    await admin.command({ moveChunk: 'bench.t', find: { _id: 1_000_000 }, to: 'shard1' });
    const coll = client.db('bench').collection<AnyDoc>('t');
    await coll.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: 1_000_000 + i, n: 0 })));
    let id = 0;
    // Three writes to shard0's chunk: an insert and two updates of it.
    const three = async (session?: ClientSession): Promise<void> => {
      const mine = id++;
      await coll.insertOne({ _id: mine, n: 0 }, { session });
      await coll.updateOne({ _id: mine }, { $inc: { n: 1 } }, { session });
      await coll.updateOne({ _id: mine }, { $inc: { n: 1 } }, { session });
    };
    const rate = async (fn: () => Promise<void>): Promise<number> => {
      const deadline = Date.now() + SECONDS * 1000;
      let n = 0;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) {
          await fn();
          n += 1;
        }
      }));
      return Math.round(n / SECONDS);
    };
    const plain: number[] = [];
    const txn: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      plain.push(await rate(() => three()));
      txn.push(await rate(async () => {
        const session = client.startSession();
        try {
          await session.withTransaction(() => three(session));
        } finally {
          await session.endSession();
        }
      }));
    }
    const rows = [[`3 writes on one shard, ${CONCURRENCY} concurrent`, `${median(txn)}/s in a transaction`, `${median(plain)}/s without`, (median(txn) / median(plain)).toFixed(2)]];
    // One at a time: the whole transaction, and its commitTransaction alone. With a write on each
    // shard the commit is a two-phase commit (prepare on both, the decision persisted, commit).
    const latency = async (twoWriters: boolean): Promise<{ whole: number[]; commit: number[] }> => {
      const whole: number[] = [];
      const commit: number[] = [];
      for (let i = 0; i < 300; i++) {
        const session = client.startSession();
        const started = performance.now();
        try {
          session.startTransaction();
          const other = { _id: 1_000_000 + (i % 1000) };
          if (twoWriters) await coll.updateOne(other, { $inc: { n: 1 } }, { session });
          else await coll.findOne(other, { session });
          await coll.updateOne({ _id: (i * 7) % id }, { $inc: { n: 1 } }, { session });
          const committing = performance.now();
          await session.commitTransaction();
          commit.push(performance.now() - committing);
          whole.push(performance.now() - started);
        } finally {
          await session.endSession();
        }
      }
      return { whole: whole.sort((a, b) => a - b), commit: commit.sort((a, b) => a - b) };
    };
    const ms = (sorted: number[], q: number): string => `${percentile(sorted, q).toFixed(1)} ms`;
    for (const [label, twoWriters] of [['read on shard1, write on shard0', false], ['write on shard1 and on shard0 (two-phase commit)', true]] as const) {
      const { whole, commit } = await latency(twoWriters);
      rows.push([`${label}, one at a time: whole transaction`, `p50 ${ms(whole, 0.5)}`, `p99 ${ms(whole, 0.99)}`, '']);
      rows.push([`${label}, one at a time: commitTransaction`, `p50 ${ms(commit, 0.5)}`, `p99 ${ms(commit, 0.99)}`, '']);
    }
    return rows;
  } finally {
    await client.close();
    await cluster.stop();
  }
}

export async function runTxnBench(): Promise<void> {
  printTable(['transactions through a router over 2 shards', 'transaction', 'plain / p99', 'ratio'], await clusterRows());
  process.stdout.write('\n');
  const rows = await snapshotRows();
  printTable(['snapshot read against plain read, one node', 'snapshot', 'plain', 'ratio', ''], rows);
  if (BASELINE === undefined) {
    process.stdout.write('\n(set DOCSHARD_BASELINE to a checkout without versioned storage to measure its cost)\n');
    return;
  }
  process.stdout.write('\n');
  printTable([`one node, this checkout against ${BASELINE}, ${ROUNDS} rounds`, 'current', 'baseline', 'ratio (median)', 'node CPU/op current / baseline'], await storageCostRows(BASELINE));
}
