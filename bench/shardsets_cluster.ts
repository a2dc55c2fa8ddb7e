// A cluster of two shards that are 3-member replica sets, as issue 32's speed figures measure it:
// a config server, the sets added through the router in set form (`rs0/h1,h2,h3`), one router.
import { MongoClient } from 'mongodb';
import { spawnRouter, type SpawnedRouter } from '../test/helpers/spawn_cluster.js';
import { removeDir, spawnNode, type SpawnedNode } from '../test/helpers/spawn_node.js';
import { spawnReplicaSet, type SpawnedReplicaSet } from '../test/helpers/spawn_replset.js';

export interface SetsCluster {
  config: SpawnedNode;
  sets: SpawnedReplicaSet[];
  router: SpawnedRouter;
  stop(): Promise<void>;
}

export async function spawnSetsCluster(shards: number): Promise<SetsCluster> {
  const sets: SpawnedReplicaSet[] = [];
  const nodes: SpawnedNode[] = [];
  let router: SpawnedRouter | undefined;
  const stop = async (): Promise<void> => {
    await router?.stop();
    await Promise.allSettled(sets.map((s) => s.stop()));
    await Promise.allSettled(nodes.map((n) => n.stop()));
    for (const n of [...nodes, ...sets.flatMap((s) => s.nodes)]) removeDir(n.dbpath);
  };
  try {
    const config = await spawnNode({ role: 'config' });
    nodes.push(config);
    for (let i = 0; i < shards; i++) sets.push(await spawnReplicaSet({ name: `rs${i}` }));
    router = await spawnRouter(config.port);
    const client = new MongoClient(router.uri);
    try {
      for (const s of sets) await client.db('admin').command({ addShard: `${s.name}/${s.hosts.join(',')}` });
    } finally {
      await client.close();
    }
    return { config, sets, router, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
