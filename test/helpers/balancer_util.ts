import { after, before } from 'node:test';
import { MongoClient, type Db } from 'mongodb';
import { spawnCluster, type SpawnedCluster } from './spawn_cluster.js';
import type { AnyDoc } from './spawn_node.js';

// Config-server parameters that make the balancer take a round every 200 ms.
export const FAST_BALANCER_ARGS = [
  '--setParameter', 'balancerIdleRoundIntervalMillis=200',
  '--setParameter', 'balancerMigrationsThrottlingMs=0',
];
export const FAST_RANGE_DELETION_ARGS = ['--setParameter', 'orphanCleanupDelaySecs=0'];

export interface BalancerSuite {
  cluster: SpawnedCluster;
  client: MongoClient;
  admin: Db;
  config: Db;
}

// Registers the suite's before/after hooks: a cluster (3 shards, fast balancer rounds and range
// deletion unless `options` say otherwise) and a client on its first router. The fields are set
// once `before` has run, so tests read them through the returned object.
export function balancerSuite(options: Partial<Parameters<typeof spawnCluster>[0]> = {}, setup?: (suite: BalancerSuite) => Promise<void>): BalancerSuite {
  const suite = {} as BalancerSuite;
  before(async () => {
    suite.cluster = await spawnCluster({ shards: 3, configArgs: FAST_BALANCER_ARGS, shardArgs: FAST_RANGE_DELETION_ARGS, ...options });
    suite.client = new MongoClient(suite.cluster.routers[0]!.uri);
    suite.admin = suite.client.db('admin');
    suite.config = suite.client.db('config');
    await setup?.(suite);
  });
  after(async () => {
    await suite.client?.close();
    await suite.cluster?.stop();
  });
  return suite;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function chunkCounts(config: Db, ns: string): Promise<Map<string, number>> {
  const coll = await config.collection('collections').findOne({ _id: ns as unknown as AnyDoc });
  const counts = new Map<string, number>();
  for (const c of await config.collection('chunks').find({ uuid: coll!.uuid }).toArray()) counts.set(c.shard, (counts.get(c.shard) ?? 0) + 1);
  return counts;
}

export async function chunksOf(config: Db, ns: string): Promise<AnyDoc[]> {
  const coll = await config.collection('collections').findOne({ _id: ns as unknown as AnyDoc });
  return config.collection('chunks').find({ uuid: coll!.uuid }).sort({ min: 1 }).toArray();
}

// Each shard's owned bytes of a collection, as the balancer sees them.
export async function ownedBytes(cluster: SpawnedCluster, ns: string): Promise<number[]> {
  return Promise.all(cluster.shards.map(async (s) => {
    const client = new MongoClient(`mongodb://127.0.0.1:${s.port}/?directConnection=true`);
    try {
      const reply = await client.db('admin').command({ _shardsvrGetStatsForBalancing: 1, collections: [{ ns }] });
      return Number((reply.stats as AnyDoc[])[0].collSize);
    } finally {
      await client.close();
    }
  }));
}

export async function rounds(admin: Db): Promise<number> {
  return Number((await admin.command({ balancerStatus: 1 })).numBalancerRounds);
}

// Waits until the balancer has run `n` more rounds.
export async function waitRounds(admin: Db, n: number): Promise<void> {
  const start = await rounds(admin);
  await waitFor(`${n} balancer rounds`, async () => (await rounds(admin)) >= start + n, 60_000, 100);
}

export async function commits(config: Db, ns: string): Promise<number> {
  return config.collection('changelog').countDocuments({ what: 'moveChunk.commit', ns });
}
