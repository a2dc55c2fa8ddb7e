// Where the router's CPU goes per request, under the router benchmark's load (bench/router_bench.ts:
// the same cluster, documents and 8 concurrent requesters): `npm run bench -- router-profile [op...]`
// with ops among read, insert, update, retryable-insert, retryable-update (all by default). Each op
// gets a router of its own started with `node --cpu-prof`, warmed up, then loaded for SECONDS;
// its profile, kept in DOCSHARD_PROFILE_DIR (a new temporary folder otherwise) for a flame graph
// (Chrome DevTools, speedscope), is summarised over the loaded stretch alone (cpuprofile_summary.ts).
// With DOCSHARD_BASELINE (another checkout, as the router benchmark takes it), that checkout's
// router is profiled first for each op, in the same cluster: a change's profile before and after.
import { readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import { spawnCluster, spawnRouter } from '../test/helpers/spawn_cluster.js';
import { tempDir, type AnyDoc } from '../test/helpers/spawn_node.js';
import { cpuSeconds } from './proc_cpu.js';
import { loadFileOf, printSummary, summarise, type CpuProfile, type ProfileLoad } from './cpuprofile_summary.js';

const CONCURRENCY = 8;
const SECONDS = 10;
const WARM_UP = 2000;
const PRELOAD = 10_000;

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

let nextKey = PRELOAD;
const OPS = {
  read: { retryWrites: false, run: (c: Collection<AnyDoc>, i: number) => c.findOne({ k: (i * 7919) % PRELOAD }) },
  insert: { retryWrites: false, run: (c: Collection<AnyDoc>) => c.insertOne(doc(nextKey++)) },
  update: { retryWrites: false, run: (c: Collection<AnyDoc>, i: number) => c.updateOne({ k: (i * 7919) % PRELOAD }, { $inc: { score: 1 } }) },
  'retryable-insert': { retryWrites: true, run: (c: Collection<AnyDoc>) => c.insertOne(doc(nextKey++)) },
  'retryable-update': { retryWrites: true, run: (c: Collection<AnyDoc>, i: number) => c.updateOne({ k: (i * 7919) % PRELOAD }, { $inc: { score: 1 } }) },
};
type OpName = keyof typeof OPS;

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

// `bin`: another checkout's bin/docshard.js (DOCSHARD_BASELINE), profiled the same way beside.
async function profileOp(configPort: number, dir: string, op: OpName, bin?: string): Promise<void> {
  // spawnRouter passes DOCSHARD_NODE_FLAGS to the process it starts.
  const flags = process.env.DOCSHARD_NODE_FLAGS;
  // A sample every 100 µs rather than V8's 1 ms: a router busy a tenth of the time gives 10 s of
  // load only about 1,000 samples at 1 ms, too few to tell apart areas of 1 to 3% of it.
  process.env.DOCSHARD_NODE_FLAGS = `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dir}`;
  const router = await spawnRouter(configPort, [], 0, bin).finally(() => {
    if (flags === undefined) delete process.env.DOCSHARD_NODE_FLAGS;
    else process.env.DOCSHARD_NODE_FLAGS = flags;
  });
  const client = new MongoClient(router.uri, { maxPoolSize: CONCURRENCY, retryWrites: OPS[op].retryWrites });
  let window: { from: number; to: number };
  let requests = 0;
  let cpuUs = 0;
  try {
    const coll = client.db('bench').collection<AnyDoc>('docs');
    for (let i = 0; i < WARM_UP; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => OPS[op].run(coll, i + j)));
    const cpuBefore = cpuSeconds(router.pid);
    const from = monotonicUs();
    const deadline = performance.now() + SECONDS * 1000;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await OPS[op].run(coll, requests++);
    }));
    window = { from, to: monotonicUs() };
    cpuUs = (cpuSeconds(router.pid) - cpuBefore) * 1e6;
  } finally {
    await client.close();
    await router.stop();
  }
  // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile: thread 0 is the main one (the logger's
  // worker writes its own).
  const file = readdirSync(dir).find((f) => f.includes(`.${router.pid}.0.`) && f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no profile of router ${router.pid} in ${dir}`);
  const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as CpuProfile;
  writeFileSync(loadFileOf(path.join(dir, file)), JSON.stringify({ window, requests, cpuUs } satisfies ProfileLoad));
  if (window.from < profile.startTime || window.to > profile.endTime) throw new Error('the profile does not span the loaded stretch: its clock is not this process\'s');
  process.stdout.write(`\n### ${op}${bin === undefined ? '' : ' (baseline)'}: ${path.join(dir, file)}\n\n`);
  printSummary(summarise(profile, window), 30, { requests, cpuUs });
}

export async function runRouterProfile(): Promise<void> {
  const asked = process.argv.slice(3);
  const unknown = asked.filter((a) => !(a in OPS));
  if (unknown.length > 0) throw new Error(`unknown op ${unknown.join(', ')}; known: ${Object.keys(OPS).join(', ')}`);
  const ops = (asked.length > 0 ? asked : Object.keys(OPS)) as OpName[];
  const dir = process.env.DOCSHARD_PROFILE_DIR ?? tempDir('docshard-profile-');
  const cluster = await spawnCluster({ shards: 1 });
  const client = new MongoClient(cluster.routers[0]!.uri);
  try {
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'bench', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'bench.docs', key: { k: 1 } });
    for (let s = 1; s < 4; s++) await admin.command({ split: 'bench.docs', middle: { k: (s * PRELOAD) / 4 } });
    const coll = client.db('bench').collection<AnyDoc>('docs');
    for (let b = 0; b < PRELOAD; b += 1000) await coll.insertMany(Array.from({ length: 1000 }, (_, j) => doc(b + j)));
    const baseline = process.env.DOCSHARD_BASELINE;
    for (const op of ops) {
      if (baseline !== undefined) await profileOp(cluster.config.port, dir, op, path.join(path.resolve(baseline), 'bin/docshard.js'));
      await profileOp(cluster.config.port, dir, op);
    }
  } finally {
    await client.close();
    await cluster.stop();
  }
}
