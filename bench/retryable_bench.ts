// What a retryable write costs over a plain one through the router (issue 36's retryable ÷ plain
// aim): `npm run bench -- retryable`. A config server, a router and a shard; `bench.docs` sharded
// on {k: 1} in 4 chunks with 10,000 documents, as the router benchmark builds it. insertOne of a new
// document and updateOne({k}, {$inc}) from 8 concurrent requesters, each through a client with
// retryWrites=false (plain) and one with retryWrites=true (every write an lsid and a txnNumber,
// which the shard records in config.transactions in the write's own commit). ROUNDS rounds of 1 s,
// every (shard, op, kind) once per round in rotated order. CPU per op of the shard (every thread,
// /proc/<pid>/task/*/schedstat) and of the router.
//
// With DOCSHARD_BASELINE (another checkout), a second shard from that checkout holds its own copy
// of the collection (database `benchbase`) behind the same router: the shard's part before and
// after a change, in one run. With DOCSHARD_PROFILE_DIR, every shard runs under `node --cpu-prof`
// and its profile is summarised over its first loaded round of each op and kind
// (cpuprofile_summary.ts): where a retryable write's extra time goes.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import { spawnRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, spawnNode, tempDir, type AnyDoc, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { cpuSecondsExact } from './proc_cpu.js';
import { printSummary, summarise, type CpuProfile } from './cpuprofile_summary.js';
import { printTable } from './table.js';

const CONCURRENCY = 8;
const ROUNDS = Number(process.env.DOCSHARD_ROUNDS ?? 12);
const PRELOAD = 10_000;
const OPS = ['insert', 'update'] as const;
const KINDS = ['plain', 'retryable'] as const;

function doc(i: number): Record<string, unknown> {
  return { _id: i, k: i, name: `user-${i}`, email: `user-${i}@example.com`, score: i * 1.5, tags: ['alpha', 'beta', 'gamma'], note: 'x'.repeat(80) };
}

let nextKey = PRELOAD;
function runOp(op: typeof OPS[number], coll: Collection<AnyDoc>, i: number): Promise<unknown> {
  return op === 'insert' ? coll.insertOne(doc(nextKey++)) : coll.updateOne({ k: (i * 7919) % PRELOAD }, { $inc: { score: 1 } });
}

interface Tally { ops: number; ms: number; shardCpu: number; routerCpu: number; perRound: number[]; windows: { from: number; to: number }[] }

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function runRetryableBench(): Promise<void> {
  const baseline = process.env.DOCSHARD_BASELINE;
  const profileDir = process.env.DOCSHARD_PROFILE_DIR;
  const config = await spawnNode({ role: 'config', dbpath: tempDir('docshard-cfg-') });
  const flags = process.env.DOCSHARD_NODE_FLAGS;
  if (profileDir !== undefined) process.env.DOCSHARD_NODE_FLAGS = `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${profileDir}`;
  const shards: { name: string; db: string; node: SpawnedNode }[] = [];
  try {
    shards.push({ name: 'this checkout', db: 'bench', node: await spawnNode({ role: 'shard' }) });
    if (baseline !== undefined) shards.push({ name: 'baseline', db: 'benchbase', node: await spawnNode({ role: 'shard', bin: path.join(path.resolve(baseline), 'bin/docshard.js') }) });
  } finally {
    if (flags === undefined) delete process.env.DOCSHARD_NODE_FLAGS;
    else process.env.DOCSHARD_NODE_FLAGS = flags;
  }
  const router = await spawnRouter(config.port);
  const setup = new MongoClient(router.uri);
  const clients = { plain: new MongoClient(router.uri, { maxPoolSize: CONCURRENCY, retryWrites: false }), retryable: new MongoClient(router.uri, { maxPoolSize: CONCURRENCY, retryWrites: true }) };
  const tallies = new Map<string, Tally>();
  try {
    const admin = setup.db('admin');
    for (const [i, s] of shards.entries()) {
      await admin.command({ addShard: `127.0.0.1:${s.node.port}`, name: `shard${i}` });
      await admin.command({ enableSharding: s.db, primaryShard: `shard${i}` });
      await admin.command({ shardCollection: `${s.db}.docs`, key: { k: 1 } });
      for (let c = 1; c < 4; c++) await admin.command({ split: `${s.db}.docs`, middle: { k: (c * PRELOAD) / 4 } });
      const coll = setup.db(s.db).collection<AnyDoc>('docs');
      for (let b = 0; b < PRELOAD; b += 1000) await coll.insertMany(Array.from({ length: 1000 }, (_, j) => doc(b + j)));
    }
    const cases = shards.flatMap((s) => OPS.flatMap((op) => KINDS.map((kind) => ({ s, op, kind, key: `${s.name} ${op} ${kind}` }))));
    for (const c of cases) {
      const coll = clients[c.kind].db(c.s.db).collection<AnyDoc>('docs');
      for (let i = 0; i < 1000; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => runOp(c.op, coll, i + j)));
    }
    for (let round = 0; round < ROUNDS; round++) {
      const rates = new Map<string, number>();
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + round) % cases.length]!;
        const coll = clients[c.kind].db(c.s.db).collection<AnyDoc>('docs');
        const shardBefore = cpuSecondsExact(c.s.node.child.pid);
        const routerBefore = cpuSecondsExact(router.pid);
        const from = monotonicUs();
        const started = performance.now();
        const deadline = started + 1000;
        let ops = 0;
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < deadline) await runOp(c.op, coll, ops++);
        }));
        const ms = performance.now() - started;
        const t = tallies.get(c.key) ?? { ops: 0, ms: 0, shardCpu: 0, routerCpu: 0, perRound: [], windows: [] };
        t.ops += ops;
        t.ms += ms;
        t.shardCpu += cpuSecondsExact(c.s.node.child.pid) - shardBefore;
        t.routerCpu += cpuSecondsExact(router.pid) - routerBefore;
        t.windows.push({ from, to: monotonicUs() });
        tallies.set(c.key, t);
        rates.set(c.key, ops / ms);
      }
      for (const s of shards) for (const op of OPS) tallies.get(`${s.name} ${op} retryable`)!.perRound.push(rates.get(`${s.name} ${op} retryable`)! / rates.get(`${s.name} ${op} plain`)!);
    }
  } finally {
    await Promise.all([setup.close(), clients.plain.close(), clients.retryable.close()]);
    await router.stop();
    for (const s of shards) await s.node.stop();
    await config.stop();
    for (const n of [config, ...shards.map((s) => s.node)]) removeDir(n.dbpath);
  }
  const rate = (t: Tally): number => (t.ops / t.ms) * 1000;
  const us = (cpu: number, t: Tally): string => ((cpu / t.ops) * 1e6).toFixed(1);
  process.stdout.write(`\n## Retryable ÷ plain writes through the router (${ROUNDS} rounds of 1 s)\n\n`);
  printTable(['shard', 'op', 'plain ops/s', 'retryable ops/s', 'retryable ÷ plain (per-round median)', 'shard CPU µs/op, plain / retryable', 'router CPU µs/op, plain / retryable'],
    shards.flatMap((s) => OPS.map((op) => {
      const plain = tallies.get(`${s.name} ${op} plain`)!;
      const retry = tallies.get(`${s.name} ${op} retryable`)!;
      return [s.name, op, rate(plain).toFixed(0), rate(retry).toFixed(0), `${(rate(retry) / rate(plain)).toFixed(2)} (${median(retry.perRound).toFixed(2)})`,
        `${us(plain.shardCpu, plain)} / ${us(retry.shardCpu, retry)}`, `${us(plain.routerCpu, plain)} / ${us(retry.routerCpu, retry)}`];
    })));
  if (profileDir === undefined) return;
  for (const s of shards) {
    const file = readdirSync(profileDir).find((f) => f.includes(`.${s.node.child.pid}.0.`) && f.endsWith('.cpuprofile'));
    if (file === undefined) continue;
    const profile = JSON.parse(readFileSync(path.join(profileDir, file), 'utf8')) as CpuProfile;
    for (const op of OPS) for (const kind of KINDS) {
      const t = tallies.get(`${s.name} ${op} ${kind}`)!;
      process.stdout.write(`\n### shard (${s.name}), ${op}, ${kind}: ${path.join(profileDir, file)}, first round\n\n`);
      printSummary(summarise(profile, t.windows[0]!), 30, { requests: Math.round(t.ops / t.windows.length), cpuUs: (t.shardCpu / t.windows.length) * 1e6 });
    }
  }
}
