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
  // Each member's own loopback address, by set (0 the config server's, then the shards' in order)
  // and member; 127.0.0.1 when absent.
  address?: (set: number, member: number) => string;
  electionTimeoutMillis?: number;
}

export async function spawnSetCluster(p: SuiteProcesses, options: SetClusterOptions): Promise<SetCluster> {
  const args = options.args ?? [];
  const [config, ...shards] = await Promise.all([
    p.replicaSet({ name: 'cfg', members: options.configMembers, node: () => ({ role: 'config', extraArgs: args }), ...setOptions(options, 0) }),
    ...Array.from({ length: options.shards }, (_, i) => p.replicaSet({ name: `rs${i}`, members: options.members, node: () => ({ extraArgs: args }), ...setOptions(options, i + 1) })),
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

function setOptions(options: SetClusterOptions, set: number): { address?: (member: number) => string; electionTimeoutMillis?: number } {
  const { address, electionTimeoutMillis } = options;
  return { ...(address === undefined ? {} : { address: (member: number) => address(set, member) }), ...(electionTimeoutMillis === undefined ? {} : { electionTimeoutMillis }) };
}
