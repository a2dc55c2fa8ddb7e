import { Timestamp } from 'bson';
import type { Doc } from '../../../src/bson/values.js';
import type { ShardServices } from '../../../src/mongod_commands/command.js';
import { coordinatorStep, type CoordinatorStepFunction } from '../../../src/sessions/transaction_coordinator_state_machine.js';
import { Incarnation, mulberry32, Scheduler } from '../scheduler.js';
import { SimNetwork, type Fate } from '../sim_network.js';
import { ClusterProcesses, SIM_EPOCH_MS, type SimProcess } from './cluster_world.js';
import { checkBank, checkChunksTile, checkItems, checkOneOwner, checkSessionsExpired } from './invariants.js';
import { takeOverProcessGlobals } from './process_globals.js';
import { SimDriver, succeeded } from './sim_driver.js';
import { ACCOUNTS, bankReaderWorkload, ddlStormWorkload, itemsWorkload, moverWorkload, OPENING_BALANCE, transferWorkload, type Model, type WorkloadEnv } from './workloads.js';

// Bugs a run can plant in the real code, to show that the simulator catches them.
export const PLANTED_BUGS = {
  // The donor commits a migration without holding the critical section: writes keep landing on it.
  migrationSkipsCriticalSection: (shard: ShardServices) => {
    Object.assign(shard.sharding.criticalSection, { enter: () => undefined, enterForReads: () => undefined });
  },
  // A two-phase commit coordinator that takes a participant's refusal for a vote to commit.
  commitAfterAbortVote: (shard: ShardServices) => {
    const ignoresRefusals: CoordinatorStepFunction = (state, event) => coordinatorStep(state, event.type === 'voteReceived' && !('prepareTimestamp' in event.vote)
      ? { ...event, vote: { shardId: event.vote.shardId, prepareTimestamp: new Timestamp({ t: 1, i: 0 }) } }
      : event);
    shard.transactionCoordinators.testingKnobs.step = ignoresRefusals;
  },
} as const;

export type PlantedBug = keyof typeof PLANTED_BUGS;

export interface SimOptions {
  readonly seed: number;
  // Virtual milliseconds of workload and faults before the cluster is left to settle and checked.
  readonly durationMs?: number;
  readonly shards?: number;
  readonly faults?: boolean;
  readonly bug?: PlantedBug;
}

export interface SimResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly steps: number;
  readonly virtualMs: number;
  readonly stats: Doc;
  // The last steps before the first violation (or the end).
  readonly traceTail: readonly string[];
  readonly trace: readonly string[];
}

const MAX_STEPS = 2_000_000;
const SETTLE_MS = 30_000;
// About one crash every 4000 steps, a couple of seconds of a busy cluster's virtual time.
const STEP_CRASH_PROBABILITY = 1 / 4000;
// Past MongoDB's 30-minute logical session timeout, and the TTL monitor's and the reaper's rounds after it.
const SESSION_EXPIRY_JUMP_MS = 31 * 60 * 1000;
const SESSION_REAP_WAIT_MS = 30_000;

// The command that runs exactly this seed again.
export function replayCommand(options: SimOptions): string {
  const extra = [
    options.durationMs === undefined ? '' : ` --duration ${options.durationMs}`,
    options.bug === undefined ? '' : ` --bug ${options.bug}`,
    options.faults === false ? ' --no-faults' : '',
  ].join('');
  return `npm run sim -- --seeds 1 --from ${options.seed}${extra}`;
}

// One seed of the whole cluster: a config server, shards and two routers started with their real
// composition roots; CRUD through both routers with retryable writes, transfers and snapshot reads
// in transactions, migrations beside the balancer's, and a DDL storm, for `durationMs` of virtual
// time, under crashes, power loss, partitions, lost connections and clock jumps; then every fault
// stops, every process is up again, and the cluster is checked once it has settled. The routing
// table and the owners of each key are checked after every step.
export async function runSeed(options: SimOptions): Promise<SimResult> {
  const { seed, durationMs = 20_000, faults = true } = options;
  const scheduler = new Scheduler({ seed });
  const random = mulberry32(seed * 7919 + 17);
  const violations: string[] = [];
  let violationStep: number | undefined;
  const violation = (message: string): void => {
    violationStep ??= scheduler.trace.length;
    violations.push(`at ${scheduler.nowMs} ms: ${message}`);
  };
  const exits: string[] = [];
  const restore = takeOverProcessGlobals(seed, () => SIM_EPOCH_MS + scheduler.nowMs, (code) => {
    exits.push(`process.exit(${String(code)}) at ${scheduler.trace.at(-1) ?? 'start'}`);
    throw new Error('process.exit in a simulated process');
  });
  const onRejection = (reason: unknown): void => violation(`unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}`);
  process.on('unhandledRejection', onRejection);

  const partitions = new Set<string>();
  let faulty = false;
  const name = (who: string): string => who.replace(/#\d+$/, '').replace(/\.sim:\d+$/, '');
  const fate = (from: string, host: string): Fate => {
    if (!faulty) return 'deliver';
    if (partitions.has(`${name(from)}|${name(host)}`)) return 'reset';
    return random() < 0.002 ? 'reset' : 'deliver';
  };
  const network = new SimNetwork(scheduler, {
    request: (_command, from, host) => fate(from, host),
    reply: (_command, from, host) => fate(from, host),
    latencyMs: () => Math.floor(random() * 4),
  });
  const shardCount = options.shards ?? 3;
  const procs = new ClusterProcesses(scheduler, network, shardCount, 2);
  const client = procs.client('client');
  const clientClock = scheduler.clockOf(new Incarnation('clients'), SIM_EPOCH_MS);
  const nemesisClock = scheduler.clockOf(new Incarnation('nemesis'), SIM_EPOCH_MS);
  const driver = new SimDriver(client, procs.routers.map((r) => r.host), clientClock.sleep, random);
  const model: Model = { items: new Map(), bankReads: 0, transfers: { committed: 0, failed: 0 }, sessions: [] };
  let stopped = false;
  const env: WorkloadEnv = { driver, random, sleep: clientClock.sleep, stopped: () => stopped, shardNames: procs.shards.map((s) => s.name), model, violation };

  let chunksChanged = true;
  const onStarted = (p: SimProcess): void => {
    const shard = procs.shardServices(p);
    if (shard !== undefined && options.bug !== undefined) PLANTED_BUGS[options.bug](shard);
    const config = p.role === 'config' ? procs.configServices() : undefined;
    if (config !== undefined) {
      chunksChanged = true;
      const changed = (_w: unknown, ns: string): void => { if (ns === 'config.chunks' || ns === 'config.collections') chunksChanged = true; };
      config.storage.observers.push({ onInsert: changed, onUpdate: changed, onDelete: changed });
    }
  };
  const start = (p: SimProcess): void => procs.start(p, onStarted);
  const checkStep = (): void => {
    const config = procs.configServices();
    if (chunksChanged && config !== undefined) {
      chunksChanged = false;
      for (const v of checkChunksTile(config.local)) violation(v);
    }
    const shards = procs.shards.flatMap((p) => { const s = procs.shardServices(p); return s === undefined ? [] : [[p.name, s] as const]; });
    for (const v of checkOneOwner(shards)) violation(v);
  };

  let finished = false;
  const stats: Doc = {};
  const main = async (): Promise<void> => {
    for (const p of procs.all) start(p);
    await clientClock.sleep(100);
    await setUp(driver, procs.shards.map((s) => s.name));
    faulty = faults;
    const workloads = [
      itemsWorkload(env, 0), itemsWorkload(env, 1), transferWorkload(env), transferWorkload(env), bankReaderWorkload(env),
      moverWorkload(env), ddlStormWorkload(env),
      ...(faults ? [nemesis()] : []),
    ];
    await clientClock.sleep(durationMs);
    stopped = true;
    await Promise.all(workloads);
    faulty = false;
    partitions.clear();
    for (const p of procs.all) if (!procs.up(p)) start(p);
    await clientClock.sleep(SETTLE_MS);
    await finalChecks();
    await expireSessions();
    finished = true;
  };
  const crashAndRestart = (p: SimProcess): void => {
    procs.crash(p);
    void nemesisClock.sleep(100 + Math.floor(random() * 3000)).then(() => { if (!procs.up(p)) start(p); });
  };
  const nemesis = async (): Promise<void> => {
    while (!stopped) {
      await nemesisClock.sleep(500 + Math.floor(random() * 2500));
      if (stopped) return;
      const r = random();
      const p = procs.all[Math.floor(random() * procs.all.length)]!;
      if (r < 0.25) {
        crashAndRestart(p);
      } else if (r < 0.65) {
        const q = procs.all.filter((x) => x !== p)[Math.floor(random() * (procs.all.length - 1))]!;
        const pair = [`${p.name}|${q.name}`, `${q.name}|${p.name}`];
        scheduler.trace.push(`  partition ${p.name} | ${q.name}`);
        for (const x of pair) partitions.add(x);
        void nemesisClock.sleep(1000 + Math.floor(random() * 4000)).then(() => { for (const x of pair) partitions.delete(x); });
      } else if (r < 0.85) {
        const jump = Math.floor(random() * 13_000) - 3_000;
        p.skewMs += jump;
        scheduler.trace.push(`  ${p.name}'s clock jumps ${jump} ms`);
      } else if (r < 0.9) {
        scheduler.trace.push('  power loss');
        for (const x of procs.all) procs.crash(x);
        void nemesisClock.sleep(500).then(() => { for (const x of procs.all) if (!procs.up(x)) start(x); });
      }
    }
  };
  // Every clock moves past the sessions' timeout, and the session jobs and TTL monitors get time
  // to reap them.
  const expireSessions = async (): Promise<void> => {
    for (const p of procs.all) p.skewMs += SESSION_EXPIRY_JUMP_MS;
    scheduler.trace.push(`  every clock jumps ${SESSION_EXPIRY_JUMP_MS} ms`);
    await clientClock.sleep(SESSION_REAP_WAIT_MS);
    const stores = procs.all.flatMap((p) => {
      const services = p.role === 'config' ? procs.configServices() : procs.shardServices(p);
      if (services === undefined) return [];
      return [[p.name, services.local, 'config.transactions'] as const, ...(p.role === 'config' ? [[p.name, services.local, 'config.system.sessions'] as const] : [])];
    });
    for (const v of checkSessionsExpired(model.sessions, stores)) violation(v);
  };
  const finalChecks = async (): Promise<void> => {
    const items = await readAll(driver, 'app', 'items');
    const accounts = await readAll(driver, 'bank', 'accounts');
    if (items === undefined || accounts === undefined) {
      violation('the cluster did not answer the final reads after it settled');
      return;
    }
    for (const v of checkItems(model, items)) violation(v);
    for (const v of checkBank(accounts)) violation(v);
    const consistency = await driver.send(driver.routers[0]!, 'admin', { checkMetadataConsistency: 1 });
    const inconsistencies = consistency.reply?.ok === 1 ? ((consistency.reply.cursor as Doc).firstBatch as Doc[]) : undefined;
    if (inconsistencies === undefined) violation(`checkMetadataConsistency failed: ${JSON.stringify(consistency.reply ?? consistency.error?.message)}`);
    else if (inconsistencies.length > 0) violation(`checkMetadataConsistency found ${JSON.stringify(inconsistencies)}`);
    Object.assign(stats, {
      items: model.items.size,
      acked: [...model.items.values()].filter((r) => r.insert === 'acked').length,
      transfers: model.transfers,
      snapshotReads: model.bankReads,
      lives: Object.fromEntries(procs.all.map((p) => [p.name, p.lives])),
    });
  };

  let steps = 0;
  try {
    void main().catch((err: unknown) => {
      violation(`the workload failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      finished = true;
    });
    while (!finished && steps < MAX_STEPS) {
      if (!(await scheduler.runOne())) break;
      steps++;
      checkStep();
      // Beside the nemesis, whose faults come when nothing is ready to run, a crash can come
      // between any two steps: after a commit and before the message it made possible.
      if (faulty && !stopped && random() < STEP_CRASH_PROBABILITY) crashAndRestart(procs.all[Math.floor(random() * procs.all.length)]!);
      for (const p of procs.problems.splice(0)) violation(p);
      for (const e of exits.splice(0)) violation(e);
    }
    if (!finished) violation(steps >= MAX_STEPS ? `no end after ${MAX_STEPS} steps` : 'the cluster stopped with the workload unfinished');
  } finally {
    process.off('unhandledRejection', onRejection);
    restore();
    await procs.close();
  }
  const tailEnd = violationStep ?? scheduler.trace.length;
  return { seed, violations, steps, virtualMs: scheduler.nowMs, stats, traceTail: scheduler.trace.slice(Math.max(0, tailEnd - 40), tailEnd), trace: scheduler.trace };
}

// The cluster every seed starts from: its shards added, app.items sharded on {k: 1} and
// bank.accounts on {_id: 1}, spread over the shards, and the accounts opened.
async function setUp(driver: SimDriver, shards: readonly string[]): Promise<void> {
  const router = driver.routers[0]!;
  const must = async (db: string, cmd: Doc): Promise<void> => {
    const outcome = await driver.send(router, db, cmd, 60_000);
    if (!succeeded(outcome)) throw new Error(`set-up ${JSON.stringify(cmd)}: ${JSON.stringify(outcome.reply ?? outcome.error?.message)}`);
  };
  for (const shard of shards) await must('admin', { addShard: `${shard}.sim:27018`, name: shard });
  await must('admin', { shardCollection: 'app.items', key: { k: 1 } });
  await must('admin', { shardCollection: 'bank.accounts', key: { _id: 1 } });
  await must('bank', { insert: 'accounts', documents: Array.from({ length: ACCOUNTS }, (_, i) => ({ _id: i, balance: OPENING_BALANCE })) });
  for (let i = 1; i < shards.length; i++) {
    const k = Math.floor((1000 * i) / shards.length);
    await must('admin', { split: 'app.items', middle: { k } });
    await must('admin', { moveChunk: 'app.items', find: { k }, to: shards[i] });
    const id = Math.floor((ACCOUNTS * i) / shards.length);
    await must('admin', { split: 'bank.accounts', middle: { _id: id } });
    await must('admin', { moveChunk: 'bank.accounts', find: { _id: id }, to: shards[i] });
  }
}

// Every document of a collection through the routers, retried while the cluster settles.
async function readAll(driver: SimDriver, db: string, coll: string): Promise<Doc[] | undefined> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const router = driver.routers[attempt % driver.routers.length]!;
    const first = await driver.send(router, db, { find: coll, filter: {}, sort: { _id: 1 }, batchSize: 100_000 });
    if (succeeded(first) && first.reply !== undefined) {
      const cursor = first.reply.cursor as Doc;
      const docs = [...(cursor.firstBatch as Doc[])];
      let id = cursor.id;
      let complete = true;
      while (Number(id) !== 0) {
        const more = await driver.send(router, db, { getMore: id, collection: coll, batchSize: 100_000 });
        if (!succeeded(more) || more.reply === undefined) { complete = false; break; }
        docs.push(...((more.reply.cursor as Doc).nextBatch as Doc[]));
        id = (more.reply.cursor as Doc).id;
      }
      if (complete) return docs;
    }
    await driver.sleep(2000);
  }
  return undefined;
}
