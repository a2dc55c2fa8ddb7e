import { MaxKey } from 'bson';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { MongoClient, type Collection } from 'mongodb';
import { Binary, MinKey, ObjectId, Timestamp } from '../src/bson/values.js';
import type { ChunkType, CollectionType } from '../src/catalog/type_chunk.js';
import { ChunkManager } from '../src/router/chunk_manager.js';
import { cpuSeconds } from './proc_cpu.js';
import { spawnCluster, spawnRouter } from '../test/helpers/spawn_cluster.js';
import type { AnyDoc } from '../test/helpers/spawn_node.js';
import { printTable } from './table.js';
import { SECURITY_HEADERS, securityRows } from './security_bench.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONCURRENCY = 8;
const SECONDS = 1;
// Each path is measured once per round, in a rotated order, so drift on this shared machine (other
// load, the shard's growing data) falls on all three paths alike instead of on whichever ran last.
// Many short rounds rather than a few long ones: this machine's speed drifts by a third or more
// within a minute, and 3 rounds of 4 s let one slow stretch decide a ratio. 24 rather than 12:
// with 12, two runs of the same tree differed by up to 0.08 in a ratio whose aim is 0.9.
const ROUNDS = 24;
const PRELOAD = 10_000;
const CHUNKS = 1_000_000;
// Gap between synthetic chunk bounds, so a chunk can be split at an integer in its middle.
const STEP = 10;

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

interface Sample {
  ops: number;
  ms: number;
  latencies: number[];
}

// CONCURRENCY requesters, each with one request in flight, for SECONDS; every request timed.
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

function merge(samples: Sample[]): Sample {
  return { ops: samples.reduce((n, s) => n + s.ops, 0), ms: samples.reduce((n, s) => n + s.ms, 0), latencies: samples.flatMap((s) => s.latencies) };
}

// The router ÷ proxy ratio of each round on its own (their rounds ran back to back), so a reader
// sees how far one round strays from the run's ratio: the median and the middle half of them.
function roundSpread(router: Sample[], proxy: Sample[]): string {
  const ratios = Float64Array.from(router, (r, i) => (r.ops / r.ms) / (proxy[i]!.ops / proxy[i]!.ms)).sort();
  return `${percentile(ratios, 0.5).toFixed(2)}; ${percentile(ratios, 0.25).toFixed(2)}–${percentile(ratios, 0.75).toFixed(2)}`;
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function startProxy(targetPort: number): Promise<{ port: number; pid: number | undefined; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'tcp_proxy.ts'), String(targetPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l)));
    child.once('exit', (code) => reject(new Error(`tcp proxy exited with ${code}`)));
  });
  return {
    port,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

// `router` is the driver with retryWrites=false, as it talks to the shard directly (a standalone
// node never gets retryable writes): the fair comparison for the router's own cost. `retryable` is
// the same router with the driver's default, retryWrites=true: every write carries an lsid and
// txnNumber, and the shard records it (issue 20's aim: ≥ 0.9 of `router`). `baseline`, only when
// DOCSHARD_BASELINE names another checkout of docshard, is a second router run from that
// checkout's sources in the same cluster (retryWrites=false): a change to the router measured
// before and after in one run, e.g. the console's cost while no page is open.
type PathName = 'direct' | 'proxy' | 'router' | 'retryable' | 'baseline';
const BASELINE = process.env.DOCSHARD_BASELINE;
const PATHS: readonly PathName[] = BASELINE === undefined ? ['direct', 'proxy', 'router', 'retryable'] : ['direct', 'proxy', 'router', 'retryable', 'baseline'];

async function clusterRows(): Promise<string[][]> {
  const cluster = await spawnCluster({ shards: 1 });
  const shard = cluster.shards[0]!;
  const proxy = await startProxy(shard.port);
  const baseline = BASELINE === undefined ? undefined : await spawnRouter(cluster.config.port, [], 0, path.join(path.resolve(BASELINE), 'bin/docshard.js'));
  // One pool per path, each as large as the number of requesters, so no path waits for a socket.
  const clients: Partial<Record<PathName, MongoClient>> & Record<'direct' | 'proxy' | 'router' | 'retryable', MongoClient> = {
    direct: new MongoClient(shard.uri, { maxPoolSize: CONCURRENCY }),
    proxy: new MongoClient(`mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, { maxPoolSize: CONCURRENCY }),
    router: new MongoClient(cluster.routers[0]!.uri, { maxPoolSize: CONCURRENCY, retryWrites: false }),
    retryable: new MongoClient(cluster.routers[0]!.uri, { maxPoolSize: CONCURRENCY, retryWrites: true }),
    ...(baseline !== undefined ? { baseline: new MongoClient(baseline.uri, { maxPoolSize: CONCURRENCY, retryWrites: false }) } : {}),
  };
  try {
    const admin = clients.router.db('admin');
    await admin.command({ enableSharding: 'bench', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bench.docs', key: { k: 1 } });
    // A few chunks (all on the one shard) so the router's look-up is a real search, not the
    // single [MinKey, MaxKey) chunk.
    for (let s = 1; s < 4; s++) await admin.command({ split: 'bench.docs', middle: { k: (s * PRELOAD) / 4 } });
    const routed = clients.router.db('bench').collection<AnyDoc>('docs');
    for (let b = 0; b < PRELOAD; b += 1000) await routed.insertMany(Array.from({ length: 1000 }, (_, j) => doc(b + j)));

    const colls = Object.fromEntries(PATHS.map((p) => [p, clients[p]!.db('bench').collection<AnyDoc>('docs')])) as Record<PathName, Collection<AnyDoc>>;
    // Keys for inserts are unique across paths and rounds; they all land in the last chunk.
    let nextKey = PRELOAD;
    const ops = {
      // Point read by shard key: the router targets one chunk, the shard uses the {k: 1} index.
      read: (coll: Collection<AnyDoc>) => (i: number) => coll.findOne({ k: (i * 7919) % PRELOAD }),
      insert: (coll: Collection<AnyDoc>) => () => coll.insertOne(doc(nextKey++)),
      // An update by shard key: one shard, a $inc in place.
      update: (coll: Collection<AnyDoc>) => (i: number) => coll.updateOne({ k: (i * 7919) % PRELOAD }, { $inc: { score: 1 } }),
    };
    type OpName = keyof typeof ops;
    const samples: Record<string, Sample[]> = {};

    // Warm-up: fills each pool and lets the three processes' JITs settle before anything counts.
    for (const p of PATHS) {
      for (const op of Object.keys(ops) as OpName[]) {
        const run = ops[op](colls[p]);
        for (let i = 0; i < 2000; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => run(i + j)));
      }
    }
    // The CPU of the process in between (none for direct), per operation: the router's own cost
    // beside the proxy's, steadier than throughput when the machine is shared.
    const hopPid: Record<PathName, number | undefined> = { direct: undefined, proxy: proxy.pid, router: cluster.routers[0]!.pid, retryable: cluster.routers[0]!.pid, baseline: baseline?.pid };
    const hopCpu: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = PATHS.map((_, i) => PATHS[(i + round) % PATHS.length]!);
      for (const op of Object.keys(ops) as OpName[]) {
        for (const p of order) {
          const before = cpuSeconds(hopPid[p]);
          (samples[`${op}/${p}`] ??= []).push(await measure(ops[op](colls[p])));
          hopCpu[`${op}/${p}`] = (hopCpu[`${op}/${p}`] ?? 0) + cpuSeconds(hopPid[p]) - before;
        }
      }
    }

    const rows: string[][] = [];
    const label = { read: 'point read findOne({k})', insert: 'insertOne (~223 B doc)', update: 'updateOne({k}, {$inc})' };
    for (const op of Object.keys(ops) as OpName[]) {
      const rate: Partial<Record<PathName, number>> = {};
      for (const p of PATHS) {
        const s = merge(samples[`${op}/${p}`]!);
        const sorted = Float64Array.from(s.latencies).sort();
        rate[p] = (s.ops / s.ms) * 1000;
        const cpu = p === 'direct' ? '' : `${((hopCpu[`${op}/${p}`]! * 1e6) / s.ops).toFixed(0)} µs`;
        rows.push([`${label[op]}, ${p}`, String(Math.round(rate[p]!)), `${percentile(sorted, 0.5).toFixed(2)} ms`, `${percentile(sorted, 0.99).toFixed(2)} ms`, cpu, (rate[p]! / rate.direct!).toFixed(2)]);
      }
      const ratio = rate.router! / rate.direct! / (rate.proxy! / rate.direct!);
      rows.push([`${label[op]}: (router/direct) ÷ (proxy/direct)`, '', '', '', '', `**${ratio.toFixed(2)}**`, roundSpread(samples[`${op}/router`]!, samples[`${op}/proxy`]!)]);
      if (op !== 'read') {
        rows.push([`${label[op]}: retryable ÷ router`, '', '', '', '', `**${(rate.retryable! / rate.router!).toFixed(2)}**`, roundSpread(samples[`${op}/retryable`]!, samples[`${op}/router`]!)]);
      }
      if (baseline !== undefined) {
        rows.push([`${label[op]}: router ÷ baseline`, '', '', '', '', `**${(rate.router! / rate.baseline!).toFixed(2)}**`, roundSpread(samples[`${op}/router`]!, samples[`${op}/baseline`]!)]);
      }
    }
    return rows;
  } finally {
    await Promise.all(PATHS.map((p) => clients[p]!.close()));
    await baseline?.stop();
    await proxy.stop();
    await cluster.stop();
  }
}

// 1M chunks of one collection as config.chunks would hold them after many splits and migrations:
// [MinKey, 10), [10, 20), ..., [9999990, MaxKey) spread over four shards, each with its own lastmod.
function syntheticRoutingTable(): { collection: CollectionType; chunks: ChunkType[] } {
  const uuid = new Binary(Buffer.alloc(16, 1), 4);
  const timestamp = new Timestamp({ t: 1_700_000_000, i: 1 });
  const collection: CollectionType = { _id: 'bench.docs', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key: { k: 1 }, unique: false };
  const chunks: ChunkType[] = new Array<ChunkType>(CHUNKS);
  for (let i = 0; i < CHUNKS; i++) {
    const shard = `shard${i % 4}`;
    chunks[i] = {
      _id: new ObjectId(),
      uuid,
      min: { k: i === 0 ? new MinKey() : i * STEP },
      max: { k: i === CHUNKS - 1 ? new MaxKey() : (i + 1) * STEP },
      shard,
      lastmod: new Timestamp({ t: 1, i }),
      onCurrentShardSince: timestamp,
      history: [{ validAfter: timestamp, shard }],
    };
  }
  return { collection, chunks };
}

function chunkManagerRows(): string[][] {
  const { collection, chunks } = syntheticRoutingTable();
  // In key order, as the router's catalog cache reads them (sort {min: 1}), so create takes its
  // already-sorted path just as it does in a real load.
  const loads: number[] = [];
  let cm: ChunkManager | undefined;
  for (let r = 0; r < 3; r++) {
    cm = undefined;
    const t0 = performance.now();
    cm = ChunkManager.create(collection, chunks);
    loads.push(performance.now() - t0);
  }
  const table = cm!;

  const keys = Array.from({ length: CHUNKS }, () => ({ k: Math.floor(Math.random() * CHUNKS * STEP) }));
  // Using each result keeps the look-ups from being optimized away, and catches a wrong answer.
  let misses = 0;
  const lookUp = (): number => {
    const t0 = performance.now();
    for (const key of keys) {
      const min = table.findIntersectingChunk(key).min.k;
      if (typeof min === 'number' && min > key.k) misses++;
    }
    return performance.now() - t0;
  };
  lookUp(); // warm-up pass: JIT the search before it is timed
  const lookUpMs = median([lookUp(), lookUp(), lookUp()]);
  if (misses > 0) throw new Error(`${misses} look-ups returned a chunk that does not hold the key`);

  // One split, as the router sees it on refresh: the chunks with lastmod >= its collection version,
  // i.e. the previous newest chunk (unchanged) and the two halves of the split chunk.
  const refreshes: number[] = [];
  const top = chunks[CHUNKS - 1]!;
  for (let r = 0; r < 21; r++) {
    const c = chunks[1 + Math.floor(Math.random() * (CHUNKS - 2))]!;
    const mid = (c.min.k as number) + STEP / 2;
    const half = (min: unknown, max: unknown, minor: number): ChunkType => ({ ...c, _id: new ObjectId(), min: { k: min }, max: { k: max }, lastmod: new Timestamp({ t: 1, i: minor }) });
    const changed = [top, half(c.min.k, mid, CHUNKS), half(mid, c.max.k, CHUNKS + 1)];
    const t0 = performance.now();
    const next = table.applyChunkChanges(changed);
    refreshes.push(performance.now() - t0);
    if (next.numChunks !== CHUNKS + 1) throw new Error(`split left ${next.numChunks} chunks`);
  }
  return [
    ['ChunkManager.create (full load)', `${Math.round(median(loads))} ms`, 'median of 3 loads'],
    ['findIntersectingChunk, random keys', `${Math.round((CHUNKS / lookUpMs) * 1000)} look-ups/s`, `median of 3 × 1M; ${((lookUpMs * 1000) / CHUNKS).toFixed(2)} µs each`],
    ['applyChunkChanges, one chunk split (incremental refresh)', `${median(refreshes).toFixed(2)} ms`, `median of 21; max ${Math.max(...refreshes).toFixed(2)} ms`],
  ];
}

export async function runRouterBench(): Promise<void> {
  // The cluster part first and on its own: the 1M-chunk tables take most of a gigabyte of heap,
  // whose garbage collection would otherwise land in the client's request timings.
  printTable([`${CONCURRENCY} concurrent requesters, ${ROUNDS} × ${SECONDS} s per path`, 'ops/s', 'p50', 'p99', 'hop CPU/op', '÷ direct', 'per round: median; middle half'], await clusterRows());
  process.stdout.write('\n');
  // With authentication and TLS on (issue 23): another cluster, set up as security_bench.ts does.
  printTable(SECURITY_HEADERS, await securityRows('router'));
  process.stdout.write('\n');
  printTable([`ChunkManager, ${CHUNKS / 1_000_000}M chunks (in process, no cluster)`, 'result', 'how'], chunkManagerRows());
}

