import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { nodeFlags, removeDir, spawnNode, tempDir, type SpawnedNode } from './spawn_node.js';
import { docshardTestBin } from './test_bin.js';

export interface SpawnedRouter {
  port: number;
  // Its log lines (stdout and stderr), for a look after a failure.
  logs: string[];
  uri: string;
  pid: number | undefined;
  // SIGKILL, as `kill -9`.
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

export interface SpawnedCluster {
  config: SpawnedNode;
  shards: SpawnedNode[];
  routers: SpawnedRouter[];
  stop(): Promise<void>;
}

// `port`: 0 for an ephemeral one; a restarted router takes its old one, which its clients know.
// `bin`: another checkout's bin/docshard.js, for a benchmark's before-and-after in one cluster.
// `config`: the config server's port, or a --configdb as given (a set's `cfg/h1:p1,...`).
export async function spawnRouter(config: number | string, extraArgs: readonly string[] = [], port = 0, bin?: string): Promise<SpawnedRouter> {
  const configdb = typeof config === 'number' ? `127.0.0.1:${config}` : config;
  const child = spawn(process.execPath, [...nodeFlags(), bin ?? await docshardTestBin(), 'router', '--port', String(port), '--configdb', configdb, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`router did not start: ${logs.join('')}`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      logs.push(line);
      if (line.includes('"Waiting for connections"')) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`router exited with ${code}: ${logs.join('\n')}`)); });
  });
  return {
    port: listening,
    logs,
    uri: `mongodb://127.0.0.1:${listening}/`,
    pid: child.pid,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

// The router settings the tests of routing run under, each in turn: the router's fast paths
// (src/router/fast_paths.ts) must answer every request as the general path does.
export const ROUTER_FAST_PATHS = [
  { name: 'fast paths on', fastPaths: true, routerArgs: [] },
  { name: 'fast paths off', fastPaths: false, routerArgs: ['--setParameter', 'routerFastPaths=false'] },
] as const;

// A config server, `shards` shards and `routers` routers as real processes, with the shards added
// (named shard0, shard1, ...) through the first router. `enableTestCommands` starts every process
// with --enableTestCommands (fail points); `shardArgs` go to the shards only, `configArgs` to the
// config server only, `routerArgs` to every router.
export interface SpawnClusterOptions {
  shards: number;
  routers?: number;
  enableTestCommands?: boolean;
  shardArgs?: string[];
  configArgs?: string[];
  routerArgs?: readonly string[];
}

export async function spawnCluster(options: SpawnClusterOptions): Promise<SpawnedCluster> {
  const extraArgs = options.enableTestCommands === true ? ['--enableTestCommands'] : [];
  const shardArgs = [...extraArgs, ...(options.shardArgs ?? [])];
  const started: { nodes: SpawnedNode[]; routers: SpawnedRouter[] } = { nodes: [], routers: [] };
  const node = async (o: Parameters<typeof spawnNode>[0]): Promise<SpawnedNode> => {
    const n = await spawnNode(o);
    started.nodes.push(n);
    return n;
  };
  try {
    const config = await node({ role: 'config', dbpath: tempDir('docshard-cfg-'), extraArgs: [...extraArgs, ...(options.configArgs ?? [])] });
    const shards = await Promise.all(Array.from({ length: options.shards }, () => node({ role: 'shard', extraArgs: shardArgs })));
    const routers = started.routers;
    for (let i = 0; i < (options.routers ?? 1); i++) routers.push(await spawnRouter(config.port, [...extraArgs, ...(options.routerArgs ?? [])]));
    const client = new MongoClient(routers[0]!.uri);
    try {
      for (const [i, shard] of shards.entries()) {
        await client.db('admin').command({ addShard: `127.0.0.1:${shard.port}`, name: `shard${i}` });
      }
    } finally {
      await client.close();
    }
    // stop() reads the fields, not the nodes started here: a test may replace a killed node with
    // its restarted process (restartNode), and that one must be stopped.
    const cluster: SpawnedCluster = {
      config,
      shards,
      routers: [...routers],
      async stop() {
        await Promise.all(cluster.routers.map((r) => r.stop()));
        await Promise.all(cluster.shards.map((s) => s.stop()));
        await cluster.config.stop();
        for (const n of [cluster.config, ...cluster.shards]) removeDir(n.dbpath);
      },
    };
    return cluster;
  } catch (err) {
    // A cluster that did not come up leaves no process or directory behind.
    await Promise.allSettled(started.routers.map((r) => r.stop()));
    await Promise.allSettled(started.nodes.map((n) => n.stop()));
    for (const n of started.nodes) removeDir(n.dbpath);
    throw err;
  }
}
