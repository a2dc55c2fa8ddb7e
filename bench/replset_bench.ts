// npm run bench -- replset [writes] [lag] [sync] [failover] (issue 31, "Speed"): a 3-member replica
// set of real docshard processes. Majority writes against w: 1 on the same set, replication lag
// seen from outside, initial sync throughput, and failover time after a SIGKILL of the primary at
// two election timeouts. Sizes: DOCSHARD_BENCH_RS_MB (initial sync's data, default 128),
// DOCSHARD_BENCH_RS_KILLS (failovers per timeout, default 20).
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { BSON } from 'bson';
import { MongoClient, type Collection } from 'mongodb';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { removeDir, restartNode, type AnyDoc } from '../test/helpers/spawn_node.js';
import { printTable } from './table.js';
import { rawCommand } from './raw_command.js';

const MB = 1024 * 1024;
const WRITERS = 8;
const WRITE_OPS = 2000; // per round, over all writers
const WRITE_ROUNDS = 3;
const LAG_RATE = 50; // inserts per second: below what a busy 2-core machine saturates at
const LAG_MS = 15_000;
const DOC_BYTES = 1024;
const SYNC_MB = Number(process.env.DOCSHARD_BENCH_RS_MB ?? 128);
const KILLS = Number(process.env.DOCSHARD_BENCH_RS_KILLS ?? 20);
const FAILOVER_LIMIT_MS = 60_000;

const PAD = 'x'.repeat(DOC_BYTES - BSON.calculateObjectSize({ _id: 0, k: 0, n: 0, pad: '' }));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

const ms = (x: number): string => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : '–');

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function withClient<T>(uri: string, fn: (c: MongoClient) => Promise<T>): Promise<T> {
  const c = new MongoClient(uri, { serverSelectionTimeoutMS: 2000 });
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

// The primary's index, once its replSetGetStatus shows every member PRIMARY or SECONDARY at the
// same applied optime: a kill or a wipe then starts from a settled set.
export async function healthyPrimary(set: SpawnedReplicaSet): Promise<number> {
  return until('a primary with two caught-up secondaries', async () => {
    for (const [i, node] of set.nodes.entries()) {
      const status = await withClient(node.uri, (c) => c.db('admin').command({ replSetGetStatus: 1 })).catch(() => undefined);
      const members = status?.members as AnyDoc[] | undefined;
      if (!members || members[i]?.stateStr !== 'PRIMARY') continue;
      const ok = members.every((m) => m.stateStr === 'PRIMARY' || m.stateStr === 'SECONDARY');
      const applied = new Set(members.map((m) => String((m.optime as AnyDoc).ts)));
      return ok && applied.size === 1 ? i : undefined;
    }
    return undefined;
  }, 180_000, 200);
}

// --- 1. w: 'majority' against w: 1 -------------------------------------------------------------

async function timedOps(writers: number, total: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, async () => {
    for (let i = next++; i < total; i = next++) await op(i);
  }));
  return (total / (performance.now() - started)) * 1000;
}

async function writeConcernRows(set: SpawnedReplicaSet): Promise<string[][]> {
  const client = new MongoClient(set.uri, { maxPoolSize: WRITERS });
  try {
    const coll: Collection<AnyDoc> = client.db('bench').collection('wc');
    const PRELOAD = 10_000;
    for (let i = 0; i < PRELOAD; i += 1000) {
      await coll.insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: -(i + j) - 1, n: 0 })), { writeConcern: { w: 'majority' } });
    }
    let nextId = 0;
    const insert = (w: 1 | 'majority') => (): Promise<unknown> => coll.insertOne({ _id: nextId++, k: nextId, n: 0 }, { writeConcern: { w } });
    const update = (w: 1 | 'majority') => (i: number): Promise<unknown> => coll.updateOne({ _id: -((i * 7919) % PRELOAD) - 1 }, { $inc: { n: 1 } }, { writeConcern: { w } });
    // Warm both paths up, in the node and in the driver.
    for (const w of [1, 'majority'] as const) {
      await timedOps(WRITERS, 400, insert(w));
      await timedOps(WRITERS, 400, update(w));
    }
    const rows: string[][] = [];
    for (const [name, make] of [['insertOne', insert], ['updateOne $inc', update]] as const) {
      const ones: number[] = [];
      const majorities: number[] = [];
      for (let r = 0; r < WRITE_ROUNDS; r++) {
        // Alternating which goes first, so a drift in the machine's speed falls on both.
        if (r % 2 === 0) {
          ones.push(await timedOps(WRITERS, WRITE_OPS, make(1)));
          majorities.push(await timedOps(WRITERS, WRITE_OPS, make('majority')));
        } else {
          majorities.push(await timedOps(WRITERS, WRITE_OPS, make('majority')));
          ones.push(await timedOps(WRITERS, WRITE_OPS, make(1)));
        }
      }
      const perRound = majorities.map((m, i) => (m / ones[i]!).toFixed(2)).join(', ');
      rows.push([`${name}, ${WRITERS} writers, ${WRITE_OPS} per round`, `${Math.round(median(majorities))} ops/s`, `${Math.round(median(ones))} ops/s`, (median(majorities) / median(ones)).toFixed(2), perRound]);
    }
    return rows;
  } finally {
    await client.close();
  }
}

// --- 2. Replication lag --------------------------------------------------------------------------

// Inserts of increasing _id into the primary at LAG_RATE per second (w: 1, one connection pool),
// while one poller per secondary reads its highest _id back-to-back: a document's lag on a
// secondary is the end of the first poll that saw it minus the client's send (an upper bound on
// the primary's commit) or ack (a lower bound) of its insert.
async function lagRows(set: SpawnedReplicaSet): Promise<string[][]> {
  const primary = await healthyPrimary(set);
  const secondaries = set.nodes.map((_, i) => i).filter((i) => i !== primary);
  const writer = new MongoClient(set.nodes[primary]!.uri);
  const pollers = secondaries.map((i) => new MongoClient(set.nodes[i]!.uri));
  const sentAt: number[] = [];
  const ackedAt: number[] = [];
  const seenAt = secondaries.map(() => [] as number[]);
  const pollRtts: number[] = [];
  let stop = false;
  try {
    const coll = writer.db('bench').collection<AnyDoc>('lag');
    await coll.insertOne({ _id: -1 }, { writeConcern: { w: 3 } });
    const polls = pollers.map(async (p, s) => {
      const c = p.db('bench').collection<AnyDoc>('lag');
      let seen = -1;
      while (!stop) {
        const t0 = performance.now();
        const top = await c.find({}, { sort: { _id: -1 }, limit: 1, projection: { _id: 1 } }).next();
        const t1 = performance.now();
        pollRtts.push(t1 - t0);
        const id = (top?._id as number | undefined) ?? -1;
        for (let i = seen + 1; i <= id; i++) seenAt[s]![i] = t1;
        seen = Math.max(seen, id);
      }
    });
    const inserts: Promise<unknown>[] = [];
    const started = performance.now();
    const count = Math.round((LAG_MS / 1000) * LAG_RATE);
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / LAG_RATE;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      sentAt[i] = performance.now();
      inserts.push(coll.insertOne({ _id: i, at: Date.now() }, { writeConcern: { w: 1 } }).then(() => { ackedAt[i] = performance.now(); }));
    }
    await Promise.all(inserts);
    await until('the secondaries to apply every insert', async () => (seenAt.every((s) => s[count - 1] !== undefined) ? true : undefined), 60_000);
    stop = true;
    await Promise.all(polls);
    const rows = secondaries.map((member, s) => {
      const fromSend = sentAt.map((t, i) => seenAt[s]![i]! - t);
      const fromAck = ackedAt.map((t, i) => seenAt[s]![i]! - t);
      return [`member ${member} (secondary)`, ms(percentile(fromSend, 0.5)), ms(percentile(fromSend, 0.99)), ms(percentile(fromAck, 0.5)), ms(percentile(fromAck, 0.99)), ms(Math.max(...fromSend))];
    });
    const acks = ackedAt.map((t, i) => t - sentAt[i]!);
    rows.push([`(insert ack on the primary; poll round trip)`, ms(percentile(acks, 0.5)), ms(percentile(acks, 0.99)), ms(percentile(pollRtts, 0.5)), ms(percentile(pollRtts, 0.99)), '']);
    return rows;
  } finally {
    stop = true;
    await writer.close();
    await Promise.all(pollers.map((p) => p.close()));
  }
}

// --- 3. Initial sync -----------------------------------------------------------------------------

// SYNC_MB of 1 KB documents loaded into the set; then a secondary is stopped, its dbpath wiped
// and the member restarted on it: with no oplog it initial-syncs. Timed from the restart's spawn
// to the member reporting SECONDARY with every document.
async function initialSyncRows(set: SpawnedReplicaSet): Promise<string[][]> {
  const docs = Math.round((SYNC_MB * MB) / DOC_BYTES);
  const primary = await healthyPrimary(set);
  const loadStarted = performance.now();
  await withClient(set.nodes[primary]!.uri, async (c) => {
    const coll = c.db('bench').collection<AnyDoc>('sync');
    let next = 0;
    await Promise.all([0, 1].map(async () => {
      for (let b = next; b < docs; b = next) {
        next += 1000;
        await coll.insertMany(Array.from({ length: Math.min(1000, docs - b) }, (_, j) => ({ _id: b + j, k: b + j, n: 0, pad: PAD })), { writeConcern: { w: 1 } });
      }
    }));
    await coll.insertOne({ _id: -1, k: -1, n: 0, pad: PAD }, { writeConcern: { w: 3, wtimeout: 600_000 } });
  });
  const loadMs = performance.now() - loadStarted;
  const target = set.nodes.findIndex((_, i) => i !== primary);
  const old = set.nodes[target]!;
  await old.stop();
  removeDir(old.dbpath);
  mkdirSync(old.dbpath, { recursive: true });
  const started = performance.now();
  const fresh = await restartNode(old, { extraArgs: ['--replSet', set.name] });
  set.nodes[target] = fresh;
  const listeningMs = performance.now() - started;
  await until('the wiped member to be SECONDARY with every document', async () => withClient(fresh.uri, async (c) => {
    const hello = await c.db('admin').command({ hello: 1 });
    if (hello.secondary !== true) return undefined;
    const n = await c.db('bench').collection('sync').estimatedDocumentCount();
    return n === docs + 1 ? true : undefined;
  }), 1_800_000, 100);
  const syncMs = performance.now() - started;
  const bytes = (docs + 1) * DOC_BYTES;
  return [
    ['data set', `${((docs + 1) / 1000).toFixed(1)}k documents of ${DOC_BYTES} B: ${(bytes / MB).toFixed(1)} MB (loaded with w: 1, 2 writers, into the set in ${(loadMs / 1000).toFixed(1)} s)`],
    ['restart of the wiped member to listening', `${(listeningMs / 1000).toFixed(1)} s`],
    ['restart to SECONDARY with every document', `${(syncMs / 1000).toFixed(1)} s`],
    ['initial sync MB/s (bytes ÷ restart to SECONDARY)', (bytes / MB / (syncMs / 1000)).toFixed(1)],
    ['initial sync MB/s from listening', (bytes / MB / ((syncMs - listeningMs) / 1000)).toFixed(1)],
  ];
}

// --- 4. Failover ---------------------------------------------------------------------------------

// The first insert a surviving member acknowledges with w: 'majority' (the default write concern),
// each survivor asked again 10 ms after each refusal.
async function firstMajorityWrite(set: SpawnedReplicaSet, survivors: number[], id: number): Promise<void> {
  let done = false;
  const deadline = performance.now() + FAILOVER_LIMIT_MS;
  await Promise.any(survivors.map(async (i) => {
    while (!done && performance.now() < deadline) {
      const reply = await rawCommand(set.nodes[i]!.port, { insert: 'failover', documents: [{ _id: `${id}-${i}` }], writeConcern: { w: 'majority', wtimeout: 30_000 }, $db: 'bench' }, 35_000).catch(() => undefined);
      if (reply?.ok === 1 && reply.n === 1 && !reply.writeErrors && !reply.writeConcernError) {
        done = true;
        return;
      }
      await sleep(10);
    }
    throw new Error('no write');
  }));
}

// When a survivor's hello first says it is a writable primary (polled every 10 ms, raw OP_MSG):
// the election's share of a failover, the rest being the majority write's wait.
async function firstWritablePrimary(set: SpawnedReplicaSet, survivors: number[]): Promise<number> {
  const deadline = performance.now() + FAILOVER_LIMIT_MS;
  while (performance.now() < deadline) {
    const replies = await Promise.all(survivors.map((i) => rawCommand(set.nodes[i]!.port, { hello: 1, $db: 'admin' }, 2000).catch(() => undefined)));
    if (replies.some((r) => r?.isWritablePrimary === true)) return performance.now();
    await sleep(10);
  }
  return NaN;
}

async function failoverRow(electionTimeoutMillis: number | undefined): Promise<string[]> {
  const set = await spawnReplicaSet(electionTimeoutMillis === undefined ? {} : { electionTimeoutMillis });
  const times: number[] = [];
  const electedTimes: number[] = [];
  let failed = 0;
  try {
    for (let k = 0; k < KILLS; k++) {
      const primary = await healthyPrimary(set);
      const old = set.nodes[primary]!;
      const survivors = set.nodes.map((_, i) => i).filter((i) => i !== primary);
      const started = performance.now();
      await old.kill9();
      const elected = firstWritablePrimary(set, survivors);
      try {
        await firstMajorityWrite(set, survivors, k);
        times.push(performance.now() - started);
        electedTimes.push((await elected) - started);
      } catch {
        failed += 1;
      }
      set.nodes[primary] = await restartNode(old, { extraArgs: ['--replSet', set.name] });
    }
  } finally {
    await set.stop();
    for (const n of set.nodes) removeDir(n.dbpath);
  }
  const label = electionTimeoutMillis === undefined ? '10 s (default)' : `${electionTimeoutMillis / 1000} s`;
  return [label, String(times.length), ms(percentile(times, 0.5)), ms(percentile(times, 0.99)), ms(Math.min(...times)), ms(Math.max(...times)), `${ms(percentile(electedTimes, 0.5))} / ${ms(percentile(electedTimes, 0.99))}`, String(failed)];
}

export async function runReplsetBench(): Promise<void> {
  const parts = new Set(process.argv.slice(3));
  const want = (p: string): boolean => parts.size === 0 || parts.has(p);
  process.stdout.write(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n\n`);
  if (want('writes') || want('lag') || want('sync')) {
    const set = await spawnReplicaSet();
    try {
      if (want('writes')) {
        printTable(['3-member set', "w: 'majority'", 'w: 1', 'ratio (medians)', 'per-round ratios'], await writeConcernRows(set));
        process.stdout.write('\n');
      }
      if (want('lag')) {
        printTable([`lag, ${LAG_RATE} inserts/s for ${LAG_MS / 1000} s`, 'p50 from send', 'p99 from send', 'p50 from ack', 'p99 from ack', 'max from send'], await lagRows(set));
        process.stdout.write('\n');
      }
      if (want('sync')) {
        printTable(['initial sync', 'value'], await initialSyncRows(set));
        process.stdout.write('\n');
      }
    } finally {
      await set.stop();
      for (const n of set.nodes) removeDir(n.dbpath);
    }
  }
  if (want('failover')) {
    const rows = [await failoverRow(undefined), await failoverRow(1000)];
    printTable(['failover: SIGKILL of the primary → first w: majority write acked', 'kills', 'p50', 'p99', 'min', 'max', 'hello says writable primary, p50 / p99', 'no write in 60 s'], rows);
  }
  process.stdout.write(`\nload average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
}
