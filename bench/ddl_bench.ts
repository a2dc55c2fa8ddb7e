import { MongoClient, type Collection } from 'mongodb';
import { printTable } from './table.js';
import { spawnCluster } from '../test/helpers/spawn_cluster.js';
import type { AnyDoc } from '../test/helpers/spawn_node.js';

// npm run bench -- ddl. Through a router over three shards, one run of each DDL coordinator on a
// collection of CHUNKS chunks spread over the shards (a hashed key presplit at shardCollection):
// the latency of shardCollection, refineCollectionShardKey, renameCollection and drop, and the
// write stall a rename causes: WRITERS clients insert one document at a time into the collection
// being renamed, and the latency of the inserts that overlapped the rename is set against that of
// the same inserts before it (p50, p99).

const CHUNKS = 1_000;
const SHARDS = 3;
const DOCS = 3_000;
const WRITERS = 8;
const STEADY_MS = 3_000;
const AFTER_MS = 500;

const DB = 'ddlbench';

interface Write {
  start: number;
  end: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const ms = (x: number): string => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : '–');

async function timed(what: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await what();
  return performance.now() - start;
}

// Inserts into `coll` from WRITERS clients, one document in flight each, until `stop` is set.
async function writers(coll: Collection<AnyDoc>, stop: { now: boolean }, writes: Write[]): Promise<void> {
  let next = 1_000_000;
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (!stop.now) {
      const k = next++;
      const start = performance.now();
      await coll.insertOne({ _id: k, k, j: k % 10 });
      writes.push({ start, end: performance.now() });
    }
  }));
}

export async function runDdlBench(): Promise<void> {
  const cluster = await spawnCluster({ shards: SHARDS });
  const client = new MongoClient(cluster.routers[0]!.uri);
  try {
    const admin = client.db('admin');
    await admin.command({ enableSharding: DB, primaryShard: 'shard0' });
    const ns = `${DB}.c`;
    const shardMs = await timed(() => admin.command({ shardCollection: ns, key: { k: 'hashed' }, numInitialChunks: CHUNKS }));
    const entry = await client.db('config').collection<AnyDoc>('collections').findOne({ _id: ns });
    const perShard = await client.db('config').collection<AnyDoc>('chunks').aggregate<AnyDoc>([
      { $match: { uuid: entry!.uuid } }, { $group: { _id: '$shard', n: { $sum: 1 } } }, { $sort: { _id: 1 } },
    ]).toArray();
    const coll = client.db(DB).collection<AnyDoc>('c');
    for (let i = 0; i < DOCS; i += 500) await coll.insertMany(Array.from({ length: 500 }, (_, n) => ({ _id: i + n, k: i + n, j: (i + n) % 10 })));

    await coll.createIndex({ k: 'hashed', j: 1 });
    const refineMs = await timed(() => admin.command({ refineCollectionShardKey: ns, key: { k: 'hashed', j: 1 } }));

    const writes: Write[] = [];
    const stop = { now: false };
    const load = writers(coll, stop, writes);
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const renameStart = performance.now();
    await admin.command({ renameCollection: ns, to: `${DB}.renamed` });
    const renameEnd = performance.now();
    await new Promise((r) => setTimeout(r, AFTER_MS));
    stop.now = true;
    await load;
    const latencies = (ws: Write[]): number[] => ws.map((w) => w.end - w.start).sort((a, b) => a - b);
    const steady = latencies(writes.filter((w) => w.end < renameStart));
    const overlapped = latencies(writes.filter((w) => w.end >= renameStart && w.start <= renameEnd));

    const dropMs = await timed(() => client.db(DB).command({ drop: 'renamed' }));

    const chunks = perShard.map((s) => `${String(s._id)} ${String(s.n)}`).join(', ');
    process.stdout.write(`ddl bench: ${CHUNKS} chunks over ${SHARDS} shards (${chunks}), ${DOCS} documents, ${WRITERS} writers during the rename\n`);
    printTable(['operation', 'latency'], [
      [`shardCollection (hashed, ${CHUNKS} initial chunks)`, ms(shardMs)],
      ['refineCollectionShardKey', ms(refineMs)],
      ['renameCollection (sharded)', ms(renameEnd - renameStart)],
      ['drop (sharded)', ms(dropMs)],
    ]);
    printTable(['inserts into the renamed collection', 'count', 'p50', 'p99', 'max'], [
      ['before the rename', String(steady.length), ms(percentile(steady, 0.5)), ms(percentile(steady, 0.99)), ms(steady.at(-1) ?? NaN)],
      ['overlapping the rename', String(overlapped.length), ms(percentile(overlapped, 0.5)), ms(percentile(overlapped, 0.99)), ms(overlapped.at(-1) ?? NaN)],
    ]);
  } finally {
    await client.close();
    await cluster.stop();
  }
}
