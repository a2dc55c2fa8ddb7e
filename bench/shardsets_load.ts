// Through the router over shards that are 3-member sets: writes with w: 'majority' against w: 1,
// and point reads with readPreference secondaryPreferred against primary, each pair in
// alternating rounds of a fixed duration at the same concurrency.
import { MongoClient, type Collection, type ReadPreferenceMode } from 'mongodb';
import type { AnyDoc } from '../test/helpers/spawn_node.js';
import type { SetsCluster } from './shardsets_cluster.js';

const CONCURRENCY = 16;
const SECONDS = Number(process.env.DOCSHARD_BENCH_SHSETS_ROUND_S ?? 8);
const ROUNDS = 2;
const PRELOAD = 4000;

interface Sample {
  ops: number;
  ms: number;
  latencies: number[];
}

async function measure(op: (i: number) => Promise<unknown>): Promise<Sample> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      await op(latencies.length);
      latencies.push(performance.now() - t0);
    }
  }));
  return { ops: latencies.length, ms: performance.now() - started, latencies };
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

const rate = (samples: Sample[]): number => (samples.reduce((n, s) => n + s.ops, 0) / samples.reduce((n, s) => n + s.ms, 0)) * 1000;

// Two ways of one operation, ROUNDS rounds each, which goes first alternating, so that a drift in
// the machine's speed falls on both: a row per way and one for their ratio with each round's.
async function pair(label: string, names: [string, string], ops: [(i: number) => Promise<unknown>, (i: number) => Promise<unknown>]): Promise<{ rows: string[][]; sent: [number, number] }> {
  const samples: [Sample[], Sample[]] = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    for (const w of r % 2 === 0 ? [0, 1] : [1, 0]) samples[w]!.push(await measure(ops[w]!));
  }
  const rows = names.map((name, w) => {
    const all = samples[w]!.flatMap((s) => s.latencies);
    return [`${label}, ${name}`, String(Math.round(rate(samples[w]!))), `${percentile(all, 0.5).toFixed(1)} ms`, `${percentile(all, 0.99).toFixed(1)} ms`, ''];
  });
  const perRound = samples[0].map((s, i) => ((s.ops / s.ms) / (samples[1][i]!.ops / samples[1][i]!.ms)).toFixed(2)).join(', ');
  rows.push([`${label}: ${names[0]} ÷ ${names[1]}`, `**${(rate(samples[0]) / rate(samples[1])).toFixed(2)}**`, '', '', perRound]);
  const sent = (w: 0 | 1): number => samples[w].reduce((n, s) => n + s.ops, 0);
  return { rows, sent: [sent(0), sent(1)] };
}

async function opcountersQuery(cluster: SetsCluster): Promise<{ primaries: number; secondaries: number }> {
  const out = { primaries: 0, secondaries: 0 };
  for (const set of cluster.sets) {
    for (const node of set.nodes) {
      const c = new MongoClient(node.uri);
      try {
        const status = await c.db('admin').command({ serverStatus: 1 });
        const hello = await c.db('admin').command({ hello: 1 });
        out[hello.isWritablePrimary === true ? 'primaries' : 'secondaries'] += Number(status.opcounters?.query ?? 0);
      } finally {
        await c.close();
      }
    }
  }
  return out;
}

export async function loadRows(cluster: SetsCluster): Promise<{ writes: string[][]; reads: string[][] }> {
  const client = new MongoClient(cluster.router.uri, { maxPoolSize: CONCURRENCY });
  try {
    const admin = client.db('admin');
    // A hashed key presplits the empty collection over both shards: no migration needed.
    await admin.command({ enableSharding: 'bench' });
    await admin.command({ shardCollection: 'bench.docs', key: { k: 'hashed' } });
    const coll: Collection<AnyDoc> = client.db('bench').collection('docs');
    for (let b = 0; b < PRELOAD; b += 500) {
      await coll.insertMany(Array.from({ length: 500 }, (_, j) => ({ k: b + j, n: 0, note: 'x'.repeat(100) })), { writeConcern: { w: 1 } });
    }
    let nextKey = PRELOAD;
    const insert = (w: 1 | 'majority') => (): Promise<unknown> => coll.insertOne({ k: nextKey++, n: 0, note: 'x'.repeat(100) }, { writeConcern: { w } });
    const update = (w: 1 | 'majority') => (i: number): Promise<unknown> => coll.updateOne({ k: (i * 7919) % PRELOAD }, { $inc: { n: 1 } }, { writeConcern: { w } });
    const read = (mode: ReadPreferenceMode) => (i: number): Promise<unknown> => coll.findOne({ k: (i * 7919) % PRELOAD }, { readPreference: mode });
    // Warm-up of every path, in the router, the members and the driver.
    for (const op of [insert(1), insert('majority'), update(1), update('majority'), read('primary'), read('secondaryPreferred')]) {
      for (let i = 0; i < 400; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => op(i + j)));
    }
    const writes = [
      ...(await pair(`insertOne, ${CONCURRENCY} clients`, ["w: 'majority'", 'w: 1'], [insert('majority'), insert(1)])).rows,
      ...(await pair(`updateOne $inc, ${CONCURRENCY} clients`, ["w: 'majority'", 'w: 1'], [update('majority'), update(1)])).rows,
    ];
    const before = await opcountersQuery(cluster);
    const { rows: reads, sent } = await pair(`findOne({k}), ${CONCURRENCY} clients`, ['secondaryPreferred', 'primary'], [read('secondaryPreferred'), read('primary')]);
    const after = await opcountersQuery(cluster);
    // Where the reads went: the members' own count of queries over both ways' rounds.
    reads.push([`(sent: ${sent[0]} secondaryPreferred, ${sent[1]} primary; queries the secondaries counted: ${after.secondaries - before.secondaries}, the primaries: ${after.primaries - before.primaries})`, '', '', '', '']);
    return { writes, reads };
  } finally {
    await client.close();
  }
}
