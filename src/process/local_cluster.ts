import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { WireClient } from '../wire/client.js';
import { spawnChildNode, type ChildExit, type ChildNode } from './child_node.js';
import { readClusterFile, writeClusterFile, type ClusterFile } from './cluster_file.js';
import { initiateLocalSet, memberAddresses, setConnectionString } from './local_replica_set.js';
import { ensureClusterKeyFile } from './cluster_key_file.js';
import { internalAuthentication, readKeyFile } from './key_file_reader.js';

export interface LocalClusterOptions {
  shards: number;
  port: number; // the router's; 0 picks a free one
  dir: string;
  logger: Logger;
  bin?: string; // the program to run for each role; tests pass a stand-in
  // Every process with --enableTestCommands (fail points), for client test suites.
  enableTestCommands?: boolean;
  // The router's --httpPort (its console and metrics); 0 picks a free one. The other processes
  // serve their metrics on ports of their own choosing, which their "Started" lines name.
  httpPort: number;
  // Authentication on (--auth): a key file in the directory, every process started with it.
  auth?: boolean;
  // Every shard and the config server a replica set of this many members (`up --replicas N`), or
  // single processes with 0; absent, as the directory's cluster was made, a new one with 1.
  replicas?: number;
}

export interface UnexpectedExit extends ChildExit {
  name: string;
}

type Role = 'config' | 'shard' | 'router';

const ADD_SHARD_TIMEOUT_MS = 60_000;
// Elections included: a loaded machine may take a few election timeouts to settle a set.
const INITIATE_TIMEOUT_MS = 120_000;
// One-member sets, as MongoDB's quick-start: majority writes and change streams need a set, and a
// set of one costs no more processes than single processes do.
const DEFAULT_REPLICAS = 1;
const CONFIG_SET_NAME = 'cfg';
// Stopping in this order means no router sends work to a stopped shard and no shard loses its
// config server while it still serves.
const STOP_ORDER: Role[] = ['router', 'shard', 'config'];

// A config server, N shards and a router as child processes of this one (the config server and
// each shard a replica set, or with `replicas: 0` a single process), with their data and
// logs under one directory. start() and stop() may overlap: a Ctrl-C during start-up stops the
// children started so far.
export class LocalCluster {
  readonly unexpectedExit: Promise<UnexpectedExit>;
  private readonly children: Array<{ role: Role; node: ChildNode }> = [];
  private readonly dir: string;
  private stopping = false;
  // --keyFile for every child, when authentication is on.
  private keyFile: string | undefined;
  private reportUnexpectedExit!: (exit: UnexpectedExit) => void;

  constructor(private readonly options: LocalClusterOptions) {
    this.dir = path.resolve(options.dir);
    this.unexpectedExit = new Promise((resolve) => { this.reportUnexpectedExit = resolve; });
  }

  async start(): Promise<{ uri: string; port: number; consoleUrl: string; keyFile?: string }> {
    mkdirSync(path.join(this.dir, 'logs'), { recursive: true });
    this.keyFile = ensureClusterKeyFile(this.dir, this.options.auth === true);
    const previous = readClusterFile(this.dir);
    const shardCount = Math.max(this.options.shards, previous?.shards.length ?? 0);
    if (shardCount > this.options.shards) {
      // Their chunks live there: leaving them out would hide data, so they all start.
      this.options.logger.warn({ c: 'CONTROL', shards: shardCount }, 'Starting every shard this cluster already has');
    }
    const replicas = replicasToStart(this.dir, this.options.replicas, previous);
    const names = Array.from({ length: shardCount }, (_, i) => previous?.shards[i]?.name ?? `shard${i}`);
    const { configHost, shardHosts } = replicas === 0
      ? await this.startProcesses(previous, names)
      : await this.startSets(previous, names, replicas);
    const router = await this.spawn('router', 'router', ['--port', String(this.options.port), '--configdb', configHost], this.options.httpPort);
    await this.addShards(router.port, names.map((name, i) => ({ name, host: shardHosts[i]! })));
    return { uri: `mongodb://127.0.0.1:${router.port}`, port: router.port, consoleUrl: `http://127.0.0.1:${router.httpPort}/`, ...(this.keyFile === undefined ? {} : { keyFile: this.keyFile }) };
  }

  private async startProcesses(previous: ClusterFile | undefined, names: string[]): Promise<{ configHost: string; shardHosts: string[] }> {
    const config = (await this.spawn('config', 'config', ['--port', String(previous?.configPort ?? 0), '--dbpath', path.join(this.dir, 'config')])).port;
    const shards = await Promise.all(names.map(async (name, i) => {
      const { port } = await this.spawn('shard', name, ['--port', String(previous?.shards[i]?.port ?? 0), '--dbpath', path.join(this.dir, name)]);
      return { name, port };
    }));
    writeClusterFile(this.dir, { configPort: config, shards });
    return { configHost: `127.0.0.1:${config}`, shardHosts: shards.map((s) => `127.0.0.1:${s.port}`) };
  }

  // Each set's members (named NAME-0, NAME-1, ...) on their own loopback addresses, initiated and
  // with a primary before the router starts; the sets are named as the shards (and `cfg`), so that
  // addShard names each shard after its set, as it does today after its name.
  private async startSets(previous: ClusterFile | undefined, names: string[], replicas: number): Promise<{ configHost: string; shardHosts: string[] }> {
    const addresses = await memberAddresses(replicas);
    const startSet = (role: Role, name: string, dbName: string, ports: number[] | undefined): Promise<number[]> => Promise.all(addresses.map(async (address, i) => {
      const flags = ['--port', String(ports?.[i] ?? 0), '--bind_ip', address, '--replSet', name, '--dbpath', path.join(this.dir, `${dbName}-${i}`)];
      return (await this.spawn(role, `${dbName}-${i}`, flags)).port;
    }));
    const [configMembers, ...shardMembers] = await Promise.all([
      startSet('config', CONFIG_SET_NAME, 'config', previous?.configMembers),
      ...names.map((name, i) => startSet('shard', name, name, previous?.shards[i]?.members)),
    ]);
    writeClusterFile(this.dir, {
      configPort: configMembers![0]!, configMembers: configMembers!, replicas,
      shards: names.map((name, i) => ({ name, port: shardMembers[i]![0]!, members: shardMembers[i]! })),
    });
    const hosts = (ports: number[]): string[] => ports.map((port, i) => `${addresses[i]!}:${port}`);
    const client = this.internalClient();
    try {
      await Promise.all([CONFIG_SET_NAME, ...names].map((name, i) => initiateLocalSet(client, name, hosts(i === 0 ? configMembers! : shardMembers[i - 1]!), INITIATE_TIMEOUT_MS)));
    } finally {
      await client.close();
    }
    return { configHost: setConnectionString(CONFIG_SET_NAME, hosts(configMembers!)), shardHosts: shardMembers.map((ports, i) => setConnectionString(names[i]!, hosts(ports))) };
  }

  // With a key, `up` is one of the cluster's processes: it logs in as __system.
  private internalClient(): WireClient {
    return new WireClient({ authenticate: internalAuthentication(this.keyFile === undefined ? undefined : readKeyFile(this.keyFile).key) });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const role of STOP_ORDER) {
      const group = this.children.filter((c) => c.role === role);
      await Promise.all(group.map(async ({ node }) => {
        const exit = await node.stop();
        this.options.logger.info({ c: 'CONTROL', child: node.name, ...exit }, 'Stopped');
      }));
    }
  }

  private async spawn(role: Role, name: string, flags: string[], httpPort = 0): Promise<{ port: number; httpPort: number }> {
    if (this.stopping) throw new Error(`not starting ${name}: the cluster is stopping`);
    const testCommands = this.options.enableTestCommands === true ? ['--enableTestCommands'] : [];
    const keyFile = this.keyFile === undefined ? [] : ['--keyFile', this.keyFile];
    const args = [role, ...flags, '--httpPort', String(httpPort), ...testCommands, ...keyFile];
    const node = spawnChildNode({ name, args, logFile: path.join(this.dir, 'logs', `${name}.log`), bin: this.options.bin, http: true });
    this.children.push({ role, node });
    void node.exited.then((exit) => {
      if (!this.stopping) this.reportUnexpectedExit({ name, ...exit });
    });
    const ports = { port: await node.ready, httpPort: await node.httpReady };
    this.options.logger.info({ c: 'CONTROL', child: name, ...ports, metrics: `http://127.0.0.1:${ports.httpPort}/metrics` }, 'Started');
    return ports;
  }

  // addShard of a shard already added with the same host succeeds, so a restart repeats it.
  private async addShards(routerPort: number, shards: Array<{ name: string; host: string }>): Promise<void> {
    const client = this.internalClient();
    try {
      for (const { name, host } of shards) {
        const reply = await client.command(`127.0.0.1:${routerPort}`, 'admin', { addShard: host, name }, { timeoutMs: ADD_SHARD_TIMEOUT_MS });
        if (Number(reply.ok) !== 1) { // ok may be an int or a double
          throw new Error(`addShard ${name} failed: ${String(reply.errmsg)} (${String(reply.codeName ?? reply.code)})`);
        }
      }
    } finally {
      await client.close();
    }
  }
}

// A directory's cluster starts as it was made (one an older docshard made by default is of single
// processes): its data and its config.shards hosts are in that form.
function replicasToStart(dir: string, asked: number | undefined, previous: ClusterFile | undefined): number {
  const held = previous === undefined ? undefined : previous.replicas ?? 0;
  if (asked === undefined) return held ?? DEFAULT_REPLICAS;
  if (held !== undefined && held !== asked) {
    throw new Error(`${dir} holds a cluster of ${held === 0 ? 'single processes' : `${held}-member sets`}: start it with --replicas ${held} or without --replicas`);
  }
  return asked;
}
