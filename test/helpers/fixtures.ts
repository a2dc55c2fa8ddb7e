import { after, before } from 'node:test';
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { spawnCluster, spawnRouter, type SpawnClusterOptions, type SpawnedCluster, type SpawnedRouter } from './spawn_cluster.js';
import { removeDir, spawnNode, tempDir, type SpawnedNode, type SpawnNodeOptions } from './spawn_node.js';
import { startUp, stopUp, type Up } from './spawn_up.js';
import { spawnReplicaSet, type SpawnedReplicaSet, type SpawnReplicaSetOptions } from './spawn_replset.js';

// What a suite starts for its tests, stopped in one place after the last of them: first what the
// suite asked to run while everything is still up, then the clients, then the routers, `docshard
// up`s, nodes and clusters, the config servers last, then every directory removed (the nodes'
// dbpaths among them). A suite whose start fails half-way is stopped as far as it got (node:test
// runs after() when before() failed).
export class SuiteProcesses {
  private readonly clients: MongoClient[] = [];
  private readonly routers: SpawnedRouter[] = [];
  private readonly nodes: SpawnedNode[] = [];
  private readonly configNodes: SpawnedNode[] = [];
  private readonly clusters: SpawnedCluster[] = [];
  private readonly ups: Up[] = [];
  private readonly dirs: string[] = [];
  private readonly beforeStops: (() => Promise<unknown> | void)[] = [];

  async node(options: SpawnNodeOptions = {}): Promise<SpawnedNode> {
    const config = options.role === 'config';
    const node = await spawnNode({ ...options, dbpath: options.dbpath ?? this.dir(config ? 'docshard-cfg-' : 'docshard-test-') });
    (config ? this.configNodes : this.nodes).push(node);
    return node;
  }

  // `config`: the config server's port, or a --configdb as given (a set's `cfg/h1:p1,...`).
  async router(config: number | string, extraArgs: readonly string[] = []): Promise<SpawnedRouter> {
    const router = await spawnRouter(config, extraArgs);
    this.routers.push(router);
    return router;
  }

  // A replica set (spawn_replset.ts), its members stopped and their directories removed with the
  // suite's; a config server's last, as a single config server's.
  async replicaSet(options: SpawnReplicaSetOptions = {}): Promise<SpawnedReplicaSet> {
    const set = await spawnReplicaSet({ ...options, node: (i) => ({ ...options.node?.(i), dbpath: this.dir('docshard-rs-') }) });
    (options.node?.(0).role === 'config' ? this.configNodes : this.nodes).push(...set.nodes);
    return set;
  }

  // Stopped through its own stop(), which reads its fields: a node a test restarted in place of a
  // killed one is the one stopped.
  async cluster(options: SpawnClusterOptions): Promise<SpawnedCluster> {
    const cluster = await spawnCluster(options);
    this.clusters.push(cluster);
    return cluster;
  }

  // `docshard up` over a directory of the suite's; SIGTERM stops it and the processes it started.
  async up(shards: number, flags: string[] = []): Promise<Up> {
    const up = await startUp(this.dir('docshard-up-'), shards, flags);
    this.ups.push(up);
    return up;
  }

  // A client (it connects on first use), closed before the processes stop.
  connect(uri: string, options?: MongoClientOptions): MongoClient {
    const client = new MongoClient(uri, options);
    this.clients.push(client);
    return client;
  }

  dir(prefix = 'docshard-test-'): string {
    const dir = tempDir(prefix);
    this.dirs.push(dir);
    return dir;
  }

  // Runs first at the end, while every process is up (turning a fail point off, ending sessions).
  beforeStop(fn: () => Promise<unknown> | void): void {
    this.beforeStops.push(fn);
  }

  async stop(): Promise<void> {
    const failures: unknown[] = [];
    const settle = async (work: Promise<unknown>[]): Promise<void> => {
      for (const r of await Promise.allSettled(work)) if (r.status === 'rejected') failures.push(r.reason);
    };
    for (const fn of this.beforeStops.splice(0)) await settle([Promise.resolve().then(fn)]);
    await Promise.all(this.clients.splice(0).map((c) => c.close().catch(() => undefined)));
    await settle(this.routers.splice(0).map((r) => r.stop()));
    await settle(this.ups.splice(0).map(stopUp));
    // Config servers last, as a cluster stops: the shards may still ask them something.
    await settle([...this.nodes.splice(0).map((n) => n.stop()), ...this.clusters.splice(0).map((c) => c.stop())]);
    await settle(this.configNodes.splice(0).map((n) => n.stop()));
    // DOCSHARD_KEEP_DIRS=1 keeps them for a look after a failure (a soak's), and names them.
    const dirs = this.dirs.splice(0);
    if (process.env.DOCSHARD_KEEP_DIRS === '1') process.stderr.write(`kept: ${dirs.join(' ')}\n`);
    else for (const dir of dirs) removeDir(dir);
    if (failures.length > 0) throw new AggregateError(failures, 'stopping the suite\'s processes failed');
  }
}

// Registers the suite's before() and after(): `start` runs in before() and starts what the suite
// needs through `processes`; after() stops all of it.
export function withProcesses(start: (processes: SuiteProcesses) => unknown): void {
  const processes = new SuiteProcesses();
  before(() => start(processes));
  after(() => processes.stop());
}

interface Fixture {
  // SuiteProcesses.connect: a client closed with the suite.
  connect(uri: string, options?: MongoClientOptions): MongoClient;
  processes: SuiteProcesses;
}

export interface NodeFixture extends Fixture {
  node: SpawnedNode;
  // Connected directly to the node.
  client: MongoClient;
}

// One node for the suite's tests; `ready` takes it over (and may add to its setup).
export function withNode(options: SpawnNodeOptions, ready: (fixture: NodeFixture) => unknown): void {
  withProcesses(async (processes) => {
    const node = await processes.node(options);
    await ready({ node, client: processes.connect(node.uri), connect: (uri, o) => processes.connect(uri, o), processes });
  });
}

export interface ClusterFixture extends Fixture {
  cluster: SpawnedCluster;
  // Connected to the first router.
  client: MongoClient;
}

// A cluster (spawnCluster's) for the suite's tests; `ready` takes it over.
export function withCluster(options: SpawnClusterOptions, ready: (fixture: ClusterFixture) => unknown): void {
  withProcesses(async (processes) => {
    const cluster = await processes.cluster(options);
    await ready({ cluster, client: processes.connect(cluster.routers[0]!.uri), connect: (uri, o) => processes.connect(uri, o), processes });
  });
}
