// npm run bench -- reshard (issue 34, "Speed"): reshardCollection through one router over two shards
// that are single-member replica sets (config server a set too), in one run on the same data:
// 1. the copy rate of a resharding against the migration clone's (moveChunk of the chunk holding
//    the same documents), nothing else running, and the CPU seconds each took;
// 2. under a closed-loop write load through the router, the writers' throughput during a second
//    resharding ÷ before it, and the latency of their writes: during the whole resharding and
//    during its critical section (the coordinator's blocking-writes and committing states, seen by
//    sampling currentOp on the config server).
// DOCSHARD_BENCH_RESHARD_DOCS sets the collection's size (default 20,000 documents of 200 B).
import { loadavg } from 'node:os';
import { BSON } from 'bson';
import { MongoClient, type Collection } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, type AnyDoc } from '../test/helpers/spawn_node.js';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { cpuSeconds } from './proc_cpu.js';
import { printTable } from './table.js';
import { startTimedLoad, wall, type TimedOp } from './timed_load.js';

const MB = 1024 * 1024;
const DOCS = Number(process.env.DOCSHARD_BENCH_RESHARD_DOCS ?? 20_000);
const DOC_BYTES = 200;
const DB = 'bench';
const COLL = 'resh';
const NS = `${DB}.${COLL}`;
const WRITERS = 4;
const STEADY_MS = 5_000;
const SAMPLE_MS = 50;

// {_id, x, k, v, pad}: integers that fit int32, so every loaded document has the same BSON size.
const PAD = 'x'.repeat(DOC_BYTES - BSON.calculateObjectSize({ _id: 0, x: 0, k: 0, v: 0, pad: '' }));
const doc = (i: number): AnyDoc => ({ _id: i, x: i, k: i, v: 0, pad: PAD });

const progress = (what: string): boolean => process.stderr.write(`${new Date().toISOString()} ${what}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (x: number): string => (Number.isFinite(x) ? `${Math.round(x)} ms` : '–');
const mbps = (bytes: number, took: number): string => (bytes / MB / (took / 1000)).toFixed(2);

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}


// WRITERS requesters through the router, one write in flight each: an insert of a new document
// alternating with an $inc of a loaded one. The filter names _id, x and k (never changed), so it
// holds the shard key whichever of the two it is.
function startLoad(coll: Collection<AnyDoc>): { ops: TimedOp[]; stop(): Promise<void> } {
  let next = 10 * DOCS;
  return startTimedLoad(WRITERS, (i) => {
    if (i % 2 === 0) return coll.insertOne(doc(next++));
    const id = (i * 7919) % DOCS;
    return coll.updateOne({ _id: id, x: id, k: id }, { $inc: { v: 1 } });
  });
}

// The coordinator's states as currentOp on the config server shows them, each with the wall-clock
// times it was first and last seen, sampled every SAMPLE_MS while `run` goes on.
async function withStates(config: MongoClient, run: () => Promise<unknown>): Promise<{ tookMs: number; end: number; states: Map<string, { first: number; last: number }> }> {
  const states = new Map<string, { first: number; last: number }>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const t = wall();
      const inprog = (await config.db('admin').command({ currentOp: 1 })).inprog as AnyDoc[];
      for (const op of inprog) {
        if (!String(op.desc).startsWith('ReshardingCoordinatorService')) continue;
        const seen = states.get(op.coordinatorState as string);
        if (seen) seen.last = t;
        else states.set(op.coordinatorState as string, { first: t, last: t });
      }
      await sleep(SAMPLE_MS);
    }
  })();
  const t0 = wall();
  try {
    await run();
  } finally {
    sampling = false;
    await sampler;
  }
  const end = wall();
  return { tookMs: end - t0, end, states };
}

// The time from the first sample in `state` to the first sample of the next state seen (or `end`):
// a state shorter than a sample's gap is not seen, and its time counts to the one before it.
function span(states: Map<string, { first: number; last: number }>, state: string, end: number): number {
  const seen = [...states.keys()];
  const i = seen.indexOf(state);
  if (i < 0) return NaN;
  return (states.get(seen[i + 1] ?? '')?.first ?? end) - states.get(state)!.first;
}

export async function runReshardBench(): Promise<void> {
  const began = wall();
  const sets: SpawnedReplicaSet[] = [];
  let router: SpawnedRouter | undefined;
  let client: MongoClient | undefined;
  let config: MongoClient | undefined;
  try {
    sets.push(await spawnReplicaSet({ name: 'cfg', members: 1, node: () => ({ role: 'config' }) }));
    for (const name of ['rs0', 'rs1']) sets.push(await spawnReplicaSet({ name, members: 1 }));
    router = await spawnRouter(`cfg/${sets[0]!.hosts.join(',')}`);
    client = new MongoClient(router.uri, { maxPoolSize: WRITERS + 8 });
    config = new MongoClient(`mongodb://${sets[0]!.hosts[0]}/?directConnection=true`);
    const admin = client.db('admin');
    for (const s of sets.slice(1)) await admin.command({ addShard: `${s.name}/${s.hosts.join(',')}` });
    await admin.command({ balancerStop: 1 });
    await client.db('config').collection<AnyDoc>('settings').updateOne({ _id: 'autosplit' }, { $set: { enabled: false } }, { upsert: true });
    await admin.command({ enableSharding: DB, primaryShard: 'rs0' });
    await admin.command({ shardCollection: NS, key: { x: 1 } });
    // [0, 10·DOCS) holds the loaded documents; the load's inserts go above it, on rs0.
    await admin.command({ split: NS, middle: { x: 0 } });
    await admin.command({ split: NS, middle: { x: 10 * DOCS } });
    const coll = client.db(DB).collection<AnyDoc>(COLL);
    const t0 = wall();
    for (let i = 0; i < DOCS; i += 1000) await coll.insertMany(Array.from({ length: Math.min(1000, DOCS - i) }, (_, j) => doc(i + j)), { ordered: false });
    const bytes = DOCS * DOC_BYTES;
    progress(`loaded ${DOCS} × ${DOC_BYTES} B in ${ms(wall() - t0)}`);

    // The CPU seconds the config server and both shards spent: steadier than the wall-clock time on
    // a shared machine, where the processes wait for a core.
    const clusterCpu = (): number => sets.reduce((sum, s) => sum + s.nodes.reduce((n, node) => n + cpuSeconds(node.child.pid), 0), 0);

    // 1. The migration clone: the chunk holding every document, rs0 → rs1, idle; the command's
    // time and the donor's clone phase (its changelog steps 1 + 2 of 6).
    const m0 = wall();
    const moveCpu0 = clusterCpu();
    await admin.command({ moveChunk: NS, find: { x: 0 }, to: 'rs1', _waitForDelete: true });
    const moveMs = wall() - m0;
    const moveCpu = clusterCpu() - moveCpu0;
    const entry = await client.db('config').collection<AnyDoc>('changelog').findOne({ what: 'moveChunk.from', ns: NS }, { sort: { time: -1 } });
    const steps = Array.from({ length: 6 }, (_, i) => Number((entry?.details as AnyDoc | undefined)?.[`step ${i + 1} of 6`] ?? NaN));
    const moveClone = steps[0]! + steps[1]!;
    progress(`moveChunk: ${ms(moveMs)}, donor steps ${steps.join(', ')} ms`);

    // The same documents resharded, idle: {x: 1} → {k: 'hashed'}.
    const idleCpu0 = clusterCpu();
    const idle = await withStates(config, () => admin.command({ reshardCollection: NS, key: { k: 'hashed' } }));
    const idleCpu = clusterCpu() - idleCpu0;
    const idleCloning = span(idle.states, 'cloning', idle.end);
    progress(`idle resharding: ${ms(idle.tookMs)}, states ${[...idle.states.keys()].join(' → ')}`);

    // 2. Under load: the steady rate, then {k: 'hashed'} → {x: 'hashed'} while the writers go on.
    const load = startLoad(coll);
    await sleep(1000);
    const steadyFrom = wall();
    await sleep(STEADY_MS);
    const r0 = wall();
    const loaded = await withStates(config, () => admin.command({ reshardCollection: NS, key: { x: 'hashed' } }));
    const r1 = loaded.end;
    await sleep(1000);
    await load.stop();
    progress(`loaded resharding: ${ms(loaded.tookMs)}, states ${[...loaded.states.keys()].join(' → ')}`);

    const ended = (from: number, to: number): TimedOp[] => load.ops.filter((o) => o.end >= from && o.end < to);
    const steady = ended(steadyFrom, r0);
    const during = ended(r0, r1);
    const steadyRate = (steady.length / (r0 - steadyFrom)) * 1000;
    const duringRate = (during.length / (r1 - r0)) * 1000;
    const lat = (ops: readonly TimedOp[]): number[] => ops.map((o) => o.end - o.start).sort((a, b) => a - b);
    const pcts = (xs: readonly number[]): string => `${ms(percentile(xs, 0.5))} / ${ms(percentile(xs, 0.99))} / ${ms(xs[xs.length - 1] ?? NaN)}`;
    // The critical section: from the first sample in blocking-writes to the command's answer (the
    // donors release their writes at the commit, which the coordinator reaches just before done).
    const csFrom = loaded.states.get('blocking-writes')?.first ?? NaN;
    const stalled = lat(load.ops.filter((o) => o.start <= r1 && o.end >= csFrom));
    const duringLat = lat(during);
    // Where the slowest write of the resharding began: which coordinator state it waited out.
    const slowest = during.reduce<TimedOp | undefined>((a, o) => (a === undefined || o.end - o.start > a.end - a.start ? o : a), undefined);
    const stateAt = (t: number): string => [...loaded.states.entries()].filter(([, s]) => s.first <= t).map(([name]) => name).pop() ?? 'before the first sample';
    const failed = load.ops.filter((o) => !o.ok).length;
    const yes = (b: boolean): string => (b ? 'yes' : '**no**');
    const ratio = duringRate / steadyRate;

    process.stdout.write(`\nResharding ${DOCS} docs of ${DOC_BYTES} B (${(bytes / MB).toFixed(1)} MB), 2 single-member shards + 1 router, load average ${loadavg().map((x) => x.toFixed(1)).join(' / ')}\n\n`);
    printTable(['measure', 'result', 'aim', 'met'], [
      ['migration: moveChunk of the chunk holding them (_waitForDelete)', `${ms(moveMs)}: **${mbps(bytes, moveMs)} MB/s**`, '', ''],
      ['migration: clone phase (donor steps 1 + 2 of 6)', `${ms(moveClone)}: ${mbps(bytes, moveClone)} MB/s`, '', ''],
      ['resharding, idle ({x: 1} → {k: hashed}): reshardCollection', `${ms(idle.tookMs)}: **${mbps(bytes, idle.tookMs)} MB/s**`, '', ''],
      [`resharding, idle: cloning state, and applying if not seen (sampled every ${SAMPLE_MS} ms)`, `${ms(idleCloning)}: ${mbps(bytes, idleCloning)} MB/s`, '', ''],
      ['resharding ÷ migration, whole command', (moveMs / idle.tookMs).toFixed(2), '', ''],
      ['CPU seconds of the config server and shards: migration, idle resharding', `${moveCpu.toFixed(1)} s, ${idleCpu.toFixed(1)} s`, '', ''],
      ['resharding under load ({k: hashed} → {x: hashed}): reshardCollection', ms(loaded.tookMs), '', ''],
      ['coordinator states under load, first seen → next first seen', [...loaded.states.keys()].map((s) => `${s} ${ms(span(loaded.states, s, r1))}`).join(', '), '', ''],
      [`write ops/s, ${STEADY_MS / 1000} s before`, steadyRate.toFixed(0), '', ''],
      ['write ops/s during the resharding', duringRate.toFixed(0), '', ''],
      ['**during ÷ before**', `**${ratio.toFixed(2)}**`, '≥ 0.7', yes(ratio >= 0.7)],
      ['write p50 / p99 / max, before', pcts(lat(steady)), '', ''],
      [`write p50 / p99 / max, during the resharding (${duringLat.length} writes)`, pcts(duringLat), '', ''],
      ['slowest write during the resharding: began in state', slowest === undefined ? '–' : `${stateAt(slowest.start)} (${ms(slowest.end - slowest.start)}, ${ms(slowest.start - r0)} after the command was sent)`, '', ''],
      [`**critical section stall p50 / p99 / max** (${stalled.length} writes overlapping blocking-writes → answer)`, `**${pcts(stalled)}**`, 'p99 ≤ 500 ms', yes(percentile(stalled, 0.99) <= 500)],
      ['failed writes', String(failed), '0', yes(failed === 0)],
    ]);
    process.stdout.write(`\nload: ${WRITERS} writers through the router, insertOne of new ${DOC_BYTES} B docs alternating with updateOne({_id, x, k}, {$inc}); whole run ${ms(wall() - began)}\n`);
  } finally {
    await config?.close();
    await client?.close();
    await router?.stop();
    await Promise.allSettled(sets.map((s) => s.stop()));
    for (const n of sets.flatMap((s) => s.nodes)) removeDir(n.dbpath);
  }
}
