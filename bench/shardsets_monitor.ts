// The router's ReplicaSetMonitor cost (issue 32, "Speed"): the CPU an idle router spends when its
// config.shards names 10 shards that are 3-member sets (one monitor per set, a streaming hello and
// a round-trip ping per member), beside a router of the same code over 10 single-node shards,
// both measured over the same seconds.
import { readFileSync } from 'node:fs';
import { MongoClient } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { spawnReplicaSet, until, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { cpuSecondsExact } from './proc_cpu.js';

const SETS = 10;
const MEMBERS = 3;
const IDLE_SECONDS = Number(process.env.DOCSHARD_BENCH_SHSETS_IDLE_S ?? 30);
const SLICES = 6;
// Sets started at once: 30 processes starting together on 2 loaded cores could outrun spawnNode's 30 s.
const START_AT_ONCE = 5;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid: number | undefined): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

const cpuOf = (pids: (number | undefined)[]): number => pids.reduce<number>((s, p) => s + cpuSecondsExact(p), 0);

async function startSets(): Promise<SpawnedReplicaSet[]> {
  const sets: SpawnedReplicaSet[] = [];
  try {
    for (let i = 0; i < SETS; i += START_AT_ONCE) {
      const names = Array.from({ length: Math.min(START_AT_ONCE, SETS - i) }, (_, j) => `rs${i + j}`);
      const started = await Promise.allSettled(names.map((name) => spawnReplicaSet({ name, members: MEMBERS })));
      for (const s of started) if (s.status === 'fulfilled') sets.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    return sets;
  } catch (err) {
    await stopSets(sets);
    throw err;
  }
}

async function stopSets(sets: SpawnedReplicaSet[]): Promise<void> {
  await Promise.allSettled(sets.map((s) => s.stop()));
  for (const s of sets) for (const n of s.nodes) removeDir(n.dbpath);
}

// A config server whose config.shards holds `shards` as written (the form addShard leaves), and a
// router over it that has sent listDatabases to every shard.
async function routerOver(shards: { _id: string; host: string }[], config: SpawnedNode): Promise<SpawnedRouter> {
  const toConfig = new MongoClient(config.uri);
  try {
    await toConfig.db('config').collection<AnyDoc>('shards').insertMany(shards.map((s) => ({ ...s, state: 1 })));
  } finally {
    await toConfig.close();
  }
  const router = await spawnRouter(config.port);
  const client = new MongoClient(router.uri);
  try {
    const list = await client.db('admin').command({ listDatabases: 1 });
    if (list.ok !== 1) throw new Error(`listDatabases: ${JSON.stringify(list)}`);
  } finally {
    await client.close();
  }
  return router;
}

// Every set's monitor knows its three members and one primary, by connPoolStats through the router.
async function monitorsSettled(router: SpawnedRouter): Promise<void> {
  const client = new MongoClient(router.uri);
  try {
    await until('every set monitored, 3 members and a primary each', async () => {
      const stats = await client.db('admin').command({ connPoolStats: 1 });
      const sets = Object.values((stats.replicaSets ?? {}) as Record<string, { hosts: AnyDoc[] }>);
      const ready = sets.filter((s) => s.hosts.length === MEMBERS && s.hosts.every((h) => h.ok === true) && s.hosts.filter((h) => h.ismaster === true).length === 1);
      return ready.length === SETS ? true : undefined;
    }, 120_000, 500);
  } finally {
    await client.close();
  }
}

export async function monitorCostRows(): Promise<{ rows: string[][]; note: string }> {
  const started: { sets: SpawnedReplicaSet[]; nodes: SpawnedNode[]; routers: SpawnedRouter[] } = { sets: [], nodes: [], routers: [] };
  const node = async (role: 'shard' | 'config'): Promise<SpawnedNode> => {
    const n = await spawnNode({ role });
    started.nodes.push(n);
    return n;
  };
  try {
    started.sets = await startSets();
    const sets = started.sets;
    const singles: SpawnedNode[] = [];
    for (let i = 0; i < SETS; i++) singles.push(await node('shard'));
    const setRouter = await routerOver(sets.map((s) => ({ _id: s.name, host: `${s.name}/${s.hosts.join(',')}` })), await node('config'));
    started.routers.push(setRouter);
    const singleRouter = await routerOver(singles.map((n, i) => ({ _id: `shard${i}`, host: `127.0.0.1:${n.port}` })), await node('config'));
    started.routers.push(singleRouter);
    await monitorsSettled(setRouter);
    // Let the start-up's work (module loading, first connections, the settling check) die down.
    await sleep(5000);

    const memberPids = sets.flatMap((s) => s.nodes.map((n) => n.child.pid));
    const singlePids = singles.map((n) => n.child.pid);
    const sliceMs = (IDLE_SECONDS * 1000) / SLICES;
    const perSlice: { sets: number; singles: number }[] = [];
    const t0 = performance.now();
    const before = { sets: cpuSecondsExact(setRouter.pid), singles: cpuSecondsExact(singleRouter.pid), members: cpuOf(memberPids), plain: cpuOf(singlePids) };
    let last = { sets: before.sets, singles: before.singles, at: t0 };
    for (let s = 0; s < SLICES; s++) {
      await sleep(sliceMs);
      const now = { sets: cpuSecondsExact(setRouter.pid), singles: cpuSecondsExact(singleRouter.pid), at: performance.now() };
      const secs = (now.at - last.at) / 1000;
      perSlice.push({ sets: ((now.sets - last.sets) * 1000) / secs, singles: ((now.singles - last.singles) * 1000) / secs });
      last = now;
    }
    const secs = (last.at - t0) / 1000;
    const perSec = (cpu: number): number => (cpu * 1000) / secs;
    const setsMs = perSec(last.sets - before.sets);
    const singlesMs = perSec(last.singles - before.singles);
    const membersMs = perSec(cpuOf(memberPids) - before.members);
    const plainMs = perSec(cpuOf(singlePids) - before.plain);
    const f = (x: number): string => x.toFixed(2);
    const slices = (k: 'sets' | 'singles'): string => perSlice.map((p) => f(p[k])).join(', ');
    const rows = [
      [`router over ${SETS} sets of ${MEMBERS} members`, `${f(setsMs)} ms/s`, `${rssMb(setRouter.pid).toFixed(0)} MB`, slices('sets')],
      [`router over ${SETS} single-node shards`, `${f(singlesMs)} ms/s`, `${rssMb(singleRouter.pid).toFixed(0)} MB`, slices('singles')],
      ['ratio, sets ÷ single-node', `**${(setsMs / singlesMs).toFixed(2)}**`, '', ''],
      [`the monitors' share: difference, per set; per member`, `${f(setsMs - singlesMs)} ms/s; ${f((setsMs - singlesMs) / SETS)}; ${f((setsMs - singlesMs) / (SETS * MEMBERS))}`, '', ''],
      [`(the ${SETS * MEMBERS} members, all together; the ${SETS} single-node shards)`, `${f(membersMs)} ms/s; ${f(plainMs)} ms/s`, '', ''],
    ];
    return { rows, note: `${IDLE_SECONDS} s idle, both routers measured over the same seconds, in ${SLICES} slices` };
  } finally {
    await Promise.allSettled(started.routers.map((r) => r.stop()));
    await stopSets(started.sets);
    await Promise.allSettled(started.nodes.map((n) => n.stop()));
    for (const n of started.nodes) removeDir(n.dbpath);
  }
}
