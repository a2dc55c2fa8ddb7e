// npm run bench -- migration: one live chunk migration of a 128 MB chunk between the two shards of
// a real cluster (config server, 2 shards, 1 router, as test/helpers/spawn_cluster.ts starts them),
// first with nothing else running, then back again under a steady insert/update load through the
// router. Prints clone MB/s, total migration time, write ops/s during the migration ÷ steady, and
// the latency of the writes that overlapped the donor's critical section (issue 4, "Benchmark").
import { availableParallelism } from 'node:os';
import { BSON } from 'bson';
import { MongoClient, type Collection, type Db } from 'mongodb';
import { spawnCluster } from '../test/helpers/spawn_cluster.js';
import { cpuSeconds } from './proc_cpu.js';
import type { AnyDoc } from '../test/helpers/spawn_node.js';
import { untilDonorReads } from '../test/helpers/donor_load.js';
import { printTable } from './table.js';
import { startTimedLoad, wall, type TimedOp } from './timed_load.js';

const MB = 1024 * 1024;
const NS_DB = 'bench';
const NS_COLL = 'mig';
const NS = `${NS_DB}.${NS_COLL}`;
const DOC_BYTES = 1024; // BSON size of every document, loaded or inserted
const DOCS = (128 * MB) / DOC_BYTES; // 131,072 documents: a 128 MB chunk
// The moving chunk is [0, HI); the collection also has [MinKey, 0) and [HI, MaxKey), which stay
// on shard0, so the donor keeps a chunk as it would in a real cluster.
const HI = 1_000_000_000;
const LOAD_BATCH = 1000;
const LOADERS = 4;
const WRITERS = 8; // concurrent requesters of the steady load, one write in flight each
const WARMUP_MS = 2_000;
const STEADY_MS = 5_000;
const AFTER_MS = 3_000;
// If the loaded migration has not finished by then the load is stopped, so the run ends anyway;
// the table then says so.
const LOADED_MIGRATION_LIMIT_MS = 120_000;
const DONOR_STEPS = 6;
const WARMUP_DOCS = 16_384; // 16 MB in [HI, MaxKey)

// {_id, k, n, pad}: all integers fit int32, so every document has the same BSON size.
const PAD = 'x'.repeat(DOC_BYTES - BSON.calculateObjectSize({ _id: 0, k: 0, n: 0, pad: '' }));
function doc(k: number): AnyDoc {
  return { _id: k, k, n: 0, pad: PAD };
}



function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function latencies(ops: readonly TimedOp[]): Float64Array {
  return Float64Array.from(ops.map((o) => o.end - o.start)).sort();
}

const ms = (x: number): string => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : '–');
const secs = (x: number): string => `${(x / 1000).toFixed(1)} s`;

type Roles = Record<'shard0' | 'shard1' | 'router' | 'config' | 'client', number | undefined>;
// Each process's CPU seconds per second of wall clock between two samples, shard1 (the donor of
// the loaded move) first.
function coresBusy(from: Record<keyof Roles, number>, to: Record<keyof Roles, number>, ms: number): string {
  return (['shard1', 'shard0', 'router', 'client'] as const).map((k) => ((to[k] - from[k]) / (ms / 1000)).toFixed(2)).join(' / ');
}

const cpuOf = (pids: Roles): Record<keyof Roles, number> =>
  Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) as Record<keyof Roles, number>;

interface MoveResult {
  totalMs: number; // the moveChunk command, as the client sees it
  steps: number[]; // the donor's "step N of 6" milliseconds (moveChunk.from)
  startedAt: number; // the donor's moveChunk.start time (when its step 1 began)
  finishedAt: number; // the donor's moveChunk.from time (after its cleanup effects)
  clonedBytes: number; // the recipient's countBytesClonedOnRecipient, after − before
  clonedDocs: number;
  // The recipient's kClone phase (the _migrateClone loop) as seen by sampling its serverStatus
  // every SAMPLE_MS: from the first sample in kClone to the last one.
  cloneSampledMs: number;
  // CPU seconds each process used over the same sampled kClone window (/proc, Linux).
  cpu: Record<keyof Roles, number>;
}

const SAMPLE_MS = 100;

async function shardingStats(db: Db): Promise<AnyDoc> {
  return (await db.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
}

// moveChunk of [0, HI) through the router, timed; then the donor's changelog entries and the
// recipient's counters for it.
async function moveChunk(router: MongoClient, recipient: Db, from: string, to: string, waitForDelete: boolean, pids: Roles): Promise<MoveResult> {
  const before = await shardingStats(recipient);
  // The recipient's phase, sampled: when its kClone phase (the _migrateClone loop) began and ended.
  let cloneFirst = NaN;
  let cloneLast = NaN;
  let cpuFirst = cpuOf(pids);
  let cpuLast = cpuFirst;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const t = wall();
      const m = (await shardingStats(recipient)).docshard?.migration as AnyDoc | null;
      if (m?.phase === 'kClone') {
        if (Number.isNaN(cloneFirst)) {
          cloneFirst = t;
          cpuFirst = cpuOf(pids);
        }
        cloneLast = wall();
        cpuLast = cpuOf(pids);
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  const t0 = wall();
  try {
    await router.db('admin').command({ moveChunk: NS, find: { k: 0 }, to, _waitForDelete: waitForDelete });
  } finally {
    sampling = false;
    await sampler;
  }
  const totalMs = wall() - t0;
  const cpu = Object.fromEntries(Object.keys(pids).map((k) => [k, cpuLast[k as keyof Roles] - cpuFirst[k as keyof Roles]])) as Record<keyof Roles, number>;
  const after = await shardingStats(recipient);

  // The donor writes its changelog entries without waiting for them; give them a moment.
  const changelog = router.db('config').collection<AnyDoc>('changelog');
  const since = new Date(t0 - 1000);
  let start: AnyDoc | null = null;
  let done: AnyDoc | null = null;
  for (let i = 0; i < 100 && (start === null || done === null); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    start = await changelog.findOne({ what: 'moveChunk.start', ns: NS, 'details.from': from, time: { $gte: since } }, { sort: { time: -1 } });
    done = await changelog.findOne({ what: 'moveChunk.from', ns: NS, 'details.from': from, time: { $gte: since } }, { sort: { time: -1 } });
  }
  if (start === null || done === null) throw new Error('the donor did not log moveChunk.start / moveChunk.from');
  const details = done.details as AnyDoc;
  const steps = Array.from({ length: DONOR_STEPS }, (_, i) => Number(details[`step ${i + 1} of ${DONOR_STEPS}`] ?? NaN));
  return {
    totalMs,
    steps,
    startedAt: (start.time as Date).getTime(),
    finishedAt: (done.time as Date).getTime(),
    clonedBytes: Number(after.countBytesClonedOnRecipient) - Number(before.countBytesClonedOnRecipient),
    clonedDocs: Number(after.countDocsClonedOnRecipient) - Number(before.countDocsClonedOnRecipient),
    cloneSampledMs: cloneLast - cloneFirst,
    cpu,
  };
}

// The donor's steps (migration_source_manager.ts: one step per phase change, timed from run()):
//   1 kCreated→kCloning: the cloner's snapshot of the range's record ids (MigrationChunkClonerSource
//   .start, a scan of the whole range); 2 kCloning→kCloneCaughtUp: persist the coordinator document
//   and the range deletion task, _recvChunkStart, the whole _migrateClone loop and the catch-up
//   until the recipient reports steady; 3 enter the critical section (writes); 4 _recvChunkCommit
//   (the recipient drains the last _transferMods); 5 block reads too; 6 _configsvrCommitChunkMigration.
// Steps 1 + 2 are the clone phase: clone MB/s = bytes cloned ÷ (step 1 + step 2).
const clonePhaseMs = (m: MoveResult): number => m.steps[0]! + m.steps[1]!;
const cloneMBps = (m: MoveResult): number => m.clonedBytes / MB / (clonePhaseMs(m) / 1000);
const commitReachedMs = (m: MoveResult): number => m.steps.reduce((a, b) => a + b, 0);

// A closed-loop write load through the router: WRITERS requesters, each with one write in flight,
// alternating an insert of a new 1 KB document into [0, HI) and an update by shard key
// ({k}: $inc) of a random preloaded document, every op timed with its start and end.
function startLoad(coll: Collection<AnyDoc>): { ops: TimedOp[]; stop(): Promise<void> } {
  let nextKey = DOCS;
  let seed = 12345;
  const rand = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  return startTimedLoad(WRITERS, (i) => (i % 2 === 0 ? coll.insertOne(doc(nextKey++)) : coll.updateOne({ k: Math.floor(rand() * DOCS) }, { $inc: { n: 1 } })));
}

function rate(ops: readonly TimedOp[], from: number, to: number): { ops: TimedOp[]; perSec: number } {
  const inside = ops.filter((o) => o.end >= from && o.end < to);
  return { ops: inside, perSec: (inside.length / (to - from)) * 1000 };
}

export async function runMigrationBench(): Promise<void> {
  const began = wall();
  const cluster = await spawnCluster({ shards: 2 });
  const router = new MongoClient(cluster.routers[0]!.uri, { maxPoolSize: WRITERS + LOADERS });
  const direct = cluster.shards.map((s) => new MongoClient(s.uri, { maxPoolSize: 2 }));
  try {
    const admin = router.db('admin');
    // The config server balances by default; only this benchmark moves chunks. The router's
    // auto-splitter would cut the 128 MB chunk while it is loaded: off too.
    await admin.command({ balancerStop: 1 });
    await router.db('config').collection<AnyDoc>('settings').updateOne({ _id: 'autosplit' }, { $set: { enabled: false } }, { upsert: true });
    await admin.command({ enableSharding: NS_DB, primaryShard: 'shard0' });
    await admin.command({ shardCollection: NS, key: { k: 1 } });
    await admin.command({ split: NS, middle: { k: 0 } });
    await admin.command({ split: NS, middle: { k: HI } });
    const coll = router.db(NS_DB).collection<AnyDoc>(NS_COLL);
    const pids: Roles = { shard0: cluster.shards[0]!.child.pid, shard1: cluster.shards[1]!.child.pid, router: cluster.routers[0]!.pid, config: cluster.config.child.pid, client: process.pid };

    const tLoad = wall();
    let nextBatch = 0;
    await Promise.all(Array.from({ length: LOADERS }, async () => {
      for (let b = nextBatch++; b * LOAD_BATCH < DOCS; b = nextBatch++) {
        await coll.insertMany(Array.from({ length: Math.min(LOAD_BATCH, DOCS - b * LOAD_BATCH) }, (_, j) => doc(b * LOAD_BATCH + j)), { ordered: false });
      }
    }));
    const loadMs = wall() - tLoad;
    const onShard0 = await direct[0]!.db(NS_DB).collection(NS_COLL).countDocuments({});
    if (onShard0 !== DOCS) throw new Error(`shard0 holds ${onShard0} documents, expected ${DOCS}`);
    process.stderr.write(`loaded ${DOCS} × ${DOC_BYTES} B (${(DOCS * DOC_BYTES) / MB} MB) in ${secs(loadMs)}\n`);

    // 1. Idle: shard0 → shard1, waiting for the donor's range deletion.
    // Warm-up: V8 compiles the clone path (donor and recipient, both directions) on a small chunk
    // first, so the measured moves show the steady throughput rather than the first run's.
    await coll.insertMany(Array.from({ length: WARMUP_DOCS }, (_, i) => doc(HI + i)), { ordered: false });
    for (const to of ['shard1', 'shard0']) await admin.command({ moveChunk: NS, find: { k: HI }, to, _waitForDelete: true });
    // The warm-up's inserts must have left the donor's load window, or the idle move starts paced.
    await untilDonorReads(direct[0]!, false);

    const idle = await moveChunk(router, direct[1]!.db('admin'), 'shard0', 'shard1', true, pids);
    process.stderr.write(`idle move: ${secs(idle.totalMs)}, steps ${idle.steps.join(', ')} ms\n`);

    // 2. Under load: steady rate first, then shard1 → shard0 while the load runs, then a little after.
    const load = startLoad(coll);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const cpuSteadyFrom = cpuOf(pids);
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const steadyTo = wall();
    const cpuSteadyTo = cpuOf(pids);
    const steady = rate(load.ops, steadyTo - STEADY_MS, steadyTo);
    const m0 = wall();
    let finished = false;
    const moving = moveChunk(router, direct[0]!.db('admin'), 'shard1', 'shard0', false, pids).finally(() => { finished = true; });
    const limit = setTimeout(() => { if (!finished) void load.stop(); }, LOADED_MIGRATION_LIMIT_MS);
    const loaded = await moving;
    clearTimeout(limit);
    const m1 = wall();
    const cpuDuringTo = cpuOf(pids);
    await new Promise((r) => setTimeout(r, AFTER_MS));
    await load.stop();
    const overLimit = m1 - m0 > LOADED_MIGRATION_LIMIT_MS;
    process.stderr.write(`loaded move: ${secs(loaded.totalMs)}, steps ${loaded.steps.join(', ')} ms\n`);

    const during = rate(load.ops, m0, m1);
    const afterwards = rate(load.ops, m1, m1 + AFTER_MS);
    // The critical section, from the donor's own timings (same machine, same clock): it is entered
    // at the end of step 2 (the enterCriticalSection effect runs as the donor enters
    // kCloneCaughtUp), and left after step 6, once the decision is persisted and the filtering
    // metadata refreshed; the exit itself is not logged, but it comes before the cleanup effects
    // that end with the moveChunk.from entry, whose time is therefore an upper bound. The writes
    // the critical section stalled are those in flight at some moment of that window: ops whose
    // [start, end] intersects [enter, moveChunk.from time]. Every write of the load targets the
    // moving chunk, so every such op hit the donor while writes were blocked (or its StaleConfig
    // retry after the commit), save a few that began just before the window and finished inside
    // it; the upper bound also takes in a few ms of writes after the exit, which can only pull p50
    // down, not p99 up.
    const csEnter = loaded.startedAt + loaded.steps[0]! + loaded.steps[1]!;
    const csCommitted = loaded.startedAt + commitReachedMs(loaded);
    const csBound = loaded.finishedAt;
    const stalled = load.ops.filter((o) => o.start <= csBound && o.end >= csEnter);
    const stalledLat = latencies(stalled);
    const steadyLat = latencies(steady.ops);
    const duringLat = latencies(during.ops);
    const errors = load.ops.filter((o) => !o.ok).length;
    const ratio = during.perSec / steady.perSec;
    const cpuRow = (m: MoveResult, donor: 'shard0' | 'shard1', recipient: 'shard0' | 'shard1'): string =>
      [m.cpu[donor], m.cpu[recipient], m.cpu.router, m.cpu.client].map((x) => x.toFixed(1)).join(' / ') + ` (window ${secs(m.cloneSampledMs)} × ${availableParallelism()} cores)`;
    const yes = (b: boolean): string => (b ? 'yes' : '**no**');

    process.stdout.write(`\nMigration of a ${(DOCS * DOC_BYTES) / MB} MB chunk (${DOCS} docs of ${DOC_BYTES} B), 2 shards + 1 router, loaded in ${secs(loadMs)}\n\n`);
    printTable(['measure', 'idle (shard0 → shard1)', `under load (shard1 → shard0)`, 'aim', 'met'], [
      ['bytes cloned (recipient counter)', `${(idle.clonedBytes / MB).toFixed(1)} MB, ${idle.clonedDocs} docs`, `${(loaded.clonedBytes / MB).toFixed(1)} MB, ${loaded.clonedDocs} docs`, '', ''],
      ['clone phase (donor steps 1 + 2 of 6)', ms(clonePhaseMs(idle)), ms(clonePhaseMs(loaded)), '', ''],
      ['**clone MB/s** (bytes ÷ steps 1 + 2)', `**${cloneMBps(idle).toFixed(1)}**`, cloneMBps(loaded).toFixed(1), '≥ 100', yes(cloneMBps(idle) >= 100)],
      [`clone MB/s, recipient kClone window only (sampled every ${SAMPLE_MS} ms)`, (idle.clonedBytes / MB / (idle.cloneSampledMs / 1000)).toFixed(1), (loaded.clonedBytes / MB / (loaded.cloneSampledMs / 1000)).toFixed(1), '', ''],
      ['donor steps 1–6 (ms)', idle.steps.join(' / '), loaded.steps.join(' / '), '', ''],
      ['commit reached (Σ steps)', secs(commitReachedMs(idle)), secs(commitReachedMs(loaded)), '', ''],
      ['range deletion wait (total − commit reached)', secs(idle.totalMs - commitReachedMs(idle)), '', '', ''],
      ['**total migration time** (moveChunk)', `**${secs(idle.totalMs)}** (_waitForDelete)`, `**${secs(loaded.totalMs)}**${overLimit ? ' (load stopped at limit)' : ''}`, '', ''],
      [`write ops/s, steady (${STEADY_MS / 1000} s before)`, '', steady.perSec.toFixed(0), '', ''],
      ['write ops/s during the migration', '', during.perSec.toFixed(0), '', ''],
      ['**during ÷ steady**', '', `**${ratio.toFixed(2)}**`, '≥ 0.8', yes(ratio >= 0.8)],
      [`write ops/s after (${AFTER_MS / 1000} s)`, '', afterwards.perSec.toFixed(0), '', ''],
      ['write p50 / p99, steady', '', `${ms(percentile(steadyLat, 0.5))} / ${ms(percentile(steadyLat, 0.99))}`, '', ''],
      ['write p50 / p99 / max, during the migration', '', `${ms(percentile(duringLat, 0.5))} / ${ms(percentile(duringLat, 0.99))} / ${ms(duringLat[duringLat.length - 1] ?? NaN)}`, '', ''],
      ['critical section: enter → commit (steps 3–6)', '', ms(csCommitted - csEnter), '', ''],
      ['critical section: enter → moveChunk.from (exit ≤ this)', '', ms(csBound - csEnter), '', ''],
      [`**CS stall p50 / p99** (${stalled.length} writes overlapping it)`, '', `**${ms(percentile(stalledLat, 0.5))} / ${ms(percentile(stalledLat, 0.99))}**`, 'p99 ≤ 100 ms', yes(percentile(stalledLat, 0.99) <= 100)],
      ['CS stall, every overlapping write (ms)', '', Array.from(stalledLat, (x) => x.toFixed(0)).join(', '), '', ''],
      ['cores busy, steady → during the migration: donor / recipient / router / client', '', `${coresBusy(cpuSteadyFrom, cpuSteadyTo, STEADY_MS)} → ${coresBusy(cpuSteadyTo, cpuDuringTo, m1 - m0)}`, '', ''],
      ['CPU s in the kClone window: donor / recipient / router / client', cpuRow(idle, 'shard0', 'shard1'), cpuRow(loaded, 'shard1', 'shard0'), '', ''],
      ['failed writes', '', String(errors), '0', yes(errors === 0)],
    ]);
    process.stdout.write(`\nload: ${WRITERS} concurrent writers through the router, inserts of new ${DOC_BYTES} B docs into the moving chunk alternating with updateOne({k}, {$inc}) of loaded docs; whole run ${secs(wall() - began)}\n`);
  } finally {
    await router.close();
    await Promise.all(direct.map((c) => c.close()));
    await cluster.stop();
  }
}

