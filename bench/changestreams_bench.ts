// npm run bench -- changestreams (issue 33, "Speed"): change streams through one router over two
// shards that are single-member replica sets, on this machine. The delivery latency from commit to
// the client with the other shard idle and busy; write throughput with 10, 100 and 1,000 streams
// open on the router against none, in the same run, and the events each stream receives a second;
// and how fast a stream that resumes far behind catches up. DOCSHARD_BENCH_CS_STREAMS (default
// "10,100,1000") names the stream counts, DOCSHARD_BENCH_CS_BEHIND (default 20000) how many
// events the resuming stream is behind.
import { loadavg } from 'node:os';
import { MongoClient, type ChangeStream, type Collection, type ResumeToken } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, spawnNode, type AnyDoc, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';
import { printTable } from './table.js';

const STREAM_COUNTS = (process.env.DOCSHARD_BENCH_CS_STREAMS ?? '10,100,1000').split(',').map(Number);
const BEHIND = Number(process.env.DOCSHARD_BENCH_CS_BEHIND ?? 20_000);
const LATENCY_SAMPLES = 300;
const PROBE_GAP_MS = 20;
// The busy shard's load: a batch of BUSY_BATCH inserts every BUSY_GAP_MS.
const BUSY_BATCH = 10;
const BUSY_GAP_MS = 20;
const WRITERS = 16;
const WRITE_SECONDS = 5;
// Where the chunks split: below it shard rs0, from it rs1.
const SPLIT = 1_000_000_000;

const progress = (what: string): boolean => process.stderr.write(`${new Date().toISOString()} ${what}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

interface Cluster {
  router: SpawnedRouter;
  client: MongoClient;
  coll: Collection<AnyDoc>;
  stop(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  const nodes: SpawnedNode[] = [];
  const sets: SpawnedReplicaSet[] = [];
  let router: SpawnedRouter | undefined;
  let client: MongoClient | undefined;
  const stop = async (): Promise<void> => {
    await client?.close();
    await router?.stop();
    await Promise.allSettled([...sets.map((s) => s.stop()), ...nodes.map((n) => n.stop())]);
    for (const n of [...nodes, ...sets.flatMap((s) => s.nodes)]) removeDir(n.dbpath);
  };
  try {
    nodes.push(await spawnNode({ role: 'config' }));
    for (const name of ['rs0', 'rs1']) sets.push(await spawnReplicaSet({ name, members: 1 }));
    router = await spawnRouter(nodes[0]!.port);
    client = new MongoClient(router.uri, { maxPoolSize: WRITERS + 8 });
    const admin = client.db('admin');
    for (const s of sets) await admin.command({ addShard: `${s.name}/${s.hosts.join(',')}` });
    await admin.command({ enableSharding: 'bench', primaryShard: 'rs0' });
    await admin.command({ shardCollection: 'bench.t', key: { _id: 1 } });
    await admin.command({ split: 'bench.t', middle: { _id: SPLIT } });
    await admin.command({ moveChunk: 'bench.t', find: { _id: SPLIT }, to: 'rs1', _waitForDelete: true });
    return { router, client, coll: client.db('bench').collection<AnyDoc>('t'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

let nextId = 0;
// A new _id on the shard asked for.
const idOn = (shard: 0 | 1): number => (shard === 0 ? 0 : SPLIT) + nextId++;

// Opens a stream and waits for its first reply, so that it sees every later write.
async function openStream(coll: Collection<AnyDoc>, options: object = {}): Promise<ChangeStream<AnyDoc>> {
  const stream = coll.watch([], { maxAwaitTimeMS: 500, ...options });
  await stream.tryNext();
  return stream;
}

// Reads `stream` in the background until stopped, calling `onEvent` for each event.
function consume(stream: ChangeStream<AnyDoc>, onEvent: (e: AnyDoc) => void): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const e = await stream.tryNext().catch(() => null);
      if (e !== null) onEvent(e as AnyDoc);
    }
  })();
  return async () => {
    stopped = true;
    await stream.close();
    await loop;
  };
}

// Commit to client: the event's wallTime (the shard's wall clock at the commit, this machine's
// clock) to the moment the stream hands it over. Probes are inserts on rs0, one every PROBE_GAP_MS;
// with `busy`, rs1 takes a batch of inserts into the same collection every BUSY_GAP_MS meanwhile.
async function latency(c: Cluster, busy: boolean): Promise<number[]> {
  const stream = await openStream(c.coll);
  const probes = new Set<number>();
  const samples: number[] = [];
  const stopReading = consume(stream, (e) => {
    const id = (e.documentKey as AnyDoc)._id as number;
    if (probes.has(id)) samples.push(Date.now() - (e.wallTime as Date).getTime());
  });
  let loading = busy;
  const load = (async () => {
    while (loading) {
      await c.coll.insertMany(Array.from({ length: BUSY_BATCH }, () => ({ _id: idOn(1), pad: 'x'.repeat(100) })));
      await sleep(BUSY_GAP_MS);
    }
  })();
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const id = idOn(0);
    probes.add(id);
    await c.coll.insertOne({ _id: id, pad: 'x'.repeat(100) });
    await sleep(PROBE_GAP_MS);
  }
  for (const until = Date.now() + 5000; samples.length < LATENCY_SAMPLES && Date.now() < until;) await sleep(20);
  loading = false;
  await load;
  await stopReading();
  return samples;
}

// WRITERS concurrent insertOne on both shards for WRITE_SECONDS, with `streams` streams open on
// the router (each its own connection: a getMore waits on it). Writes a second, and the events each
// stream received a second over the same window (and whether they all arrived in the end).
async function throughput(c: Cluster, streams: number): Promise<{ rate: number; perStream: number; complete: boolean }> {
  const readers = new MongoClient(c.router.uri, { maxPoolSize: streams + 4, minPoolSize: 0 });
  const counts: number[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    const coll = readers.db('bench').collection<AnyDoc>('t');
    for (let i = 0; i < streams; i += 50) {
      const opened = await Promise.all(Array.from({ length: Math.min(50, streams - i) }, () => openStream(coll)));
      for (const s of opened) {
        const k = counts.push(0) - 1;
        stops.push(consume(s, () => (counts[k]! += 1)));
      }
    }
    const started = performance.now();
    const deadline = Date.now() + WRITE_SECONDS * 1000;
    let n = 0;
    await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
      while (Date.now() < deadline) {
        await c.coll.insertOne({ _id: idOn(w % 2 === 0 ? 0 : 1), pad: 'x'.repeat(100) });
        n += 1;
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const inWindow = counts.reduce((a, b) => a + b, 0);
    for (const until = Date.now() + 30_000; counts.some((k) => k < n) && Date.now() < until;) await sleep(100);
    return { rate: n / seconds, perStream: streams === 0 ? 0 : inWindow / streams / seconds, complete: counts.every((k) => k === n) };
  } finally {
    await Promise.all(stops.map((s) => s()));
    await readers.close();
  }
}

// A stream resuming BEHIND events back (half on each shard, written in batches of 500 with no
// stream open): events a second until it has them all.
async function catchUp(c: Cluster): Promise<{ rate: number; seconds: number }> {
  const stream = await openStream(c.coll);
  const from = stream.resumeToken as ResumeToken;
  await stream.close();
  for (let i = 0; i < BEHIND; i += 500) {
    await c.coll.insertMany(Array.from({ length: Math.min(500, BEHIND - i) }, (_, j) => ({ _id: idOn(j % 2 === 0 ? 0 : 1), pad: 'x'.repeat(100) })));
  }
  const started = performance.now();
  const resumed = c.coll.watch([], { resumeAfter: from, maxAwaitTimeMS: 500, batchSize: 1000 });
  let seen = 0;
  for (const until = Date.now() + 600_000; seen < BEHIND && Date.now() < until;) if ((await resumed.tryNext()) !== null) seen += 1;
  if (seen < BEHIND) throw new Error(`the resumed stream had ${seen} of ${BEHIND} events after 10 minutes`);
  const seconds = (performance.now() - started) / 1000;
  await resumed.close();
  return { rate: BEHIND / seconds, seconds };
}

export async function runChangeStreamsBench(): Promise<void> {
  const c = await startCluster();
  try {
    // Warm-up: every path once.
    await latency(c, false).then(() => throughput(c, 1));
    const rows: string[][] = [];
    for (const busy of [false, true]) {
      progress(`latency, other shard ${busy ? 'busy' : 'idle'}`);
      const samples = await latency(c, busy);
      rows.push([`commit → client, other shard ${busy ? `busy (${(BUSY_BATCH * 1000) / BUSY_GAP_MS} inserts/s offered)` : 'idle'}`, `p50 ${percentile(samples, 0.5)} ms, p99 ${percentile(samples, 0.99)} ms, max ${Math.max(...samples)} ms`, `${samples.length}/${LATENCY_SAMPLES} probes`]);
    }
    for (const streams of STREAM_COUNTS) {
      progress(`throughput, ${streams} streams against none`);
      const none = await throughput(c, 0);
      const some = await throughput(c, streams);
      rows.push([
        `${WRITERS} writers, ${streams} streams open ÷ none`,
        `${Math.round(some.rate)}/s ÷ ${Math.round(none.rate)}/s = ${(some.rate / none.rate).toFixed(2)}`,
        `${some.perStream.toFixed(0)} events/s per stream in the window${some.complete ? '' : ', NOT all delivered within 30 s after'}`,
      ]);
    }
    progress(`catch-up from ${BEHIND} events behind`);
    const caught = await catchUp(c);
    rows.push([`a stream resuming ${BEHIND} events behind`, `${Math.round(caught.rate)} events/s`, `${caught.seconds.toFixed(1)} s to catch up`]);
    printTable(['change streams through a router (2 single-member shards)', 'result', 'notes'], rows);
    process.stdout.write(`load average at the end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
  } finally {
    await c.stop();
  }
}
