import { MongoClient } from 'mongodb';
import type { SuiteProcesses } from './fixtures.js';
import type { SpawnedRouter } from './spawn_cluster.js';
import type { SpawnedReplicaSet } from './spawn_replset.js';

// A sharded cluster whose shards (rs0, rs1, ...) and config server (cfg) are replica sets, as
// MongoDB deploys one, with routers that know the config server by its set (`--configdb cfg/...`).
// Every process is the suite's: stopped with it.
export interface SetCluster {
  config: SpawnedReplicaSet;
  shards: SpawnedReplicaSet[];
  routers: SpawnedRouter[];
}

export interface SetClusterOptions {
  shards: number;
  // Members of each shard's set.
  members: number;
  configMembers: number;
  routers: number;
  // To every process (e.g. --enableTestCommands).
  args?: string[];
}

export async function spawnSetCluster(p: SuiteProcesses, options: SetClusterOptions): Promise<SetCluster> {
  const args = options.args ?? [];
  const [config, ...shards] = await Promise.all([
    p.replicaSet({ name: 'cfg', members: options.configMembers, node: () => ({ role: 'config', extraArgs: args }) }),
    ...Array.from({ length: options.shards }, (_, i) => p.replicaSet({ name: `rs${i}`, members: options.members, node: () => ({ extraArgs: args }) })),
  ]);
  const routers: SpawnedRouter[] = [];
  for (let i = 0; i < options.routers; i++) routers.push(await p.router(`cfg/${config!.hosts.join(',')}`, args));
  const client = new MongoClient(routers[0]!.uri);
  try {
    for (const shard of shards) await client.db('admin').command({ addShard: `${shard.name}/${shard.hosts.join(',')}` });
  } finally {
    await client.close();
  }
  return { config: config!, shards, routers };
}
