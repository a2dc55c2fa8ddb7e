import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { WireClient } from '../wire/client.js';
import { spawnChildNode, type ChildExit, type ChildNode } from './child_node.js';
import { readClusterFile, writeClusterFile } from './cluster_file.js';
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
}

export interface UnexpectedExit extends ChildExit {
  name: string;
}

type Role = 'config' | 'shard' | 'router';

const ADD_SHARD_TIMEOUT_MS = 60_000;
// Stopping in this order means no router sends work to a stopped shard and no shard loses its
// config server while it still serves.
const STOP_ORDER: Role[] = ['router', 'shard', 'config'];

// One config server, N shards and a router as child processes of this one, with their data and
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
    const config = (await this.spawn('config', 'config', ['--port', String(previous?.configPort ?? 0), '--dbpath', path.join(this.dir, 'config')])).port;
    const shards = await Promise.all(Array.from({ length: shardCount }, async (_, i) => {
      const name = previous?.shards[i]?.name ?? `shard${i}`;
      const { port } = await this.spawn('shard', name, ['--port', String(previous?.shards[i]?.port ?? 0), '--dbpath', path.join(this.dir, name)]);
      return { name, port };
    }));
    writeClusterFile(this.dir, { configPort: config, shards });
    const router = await this.spawn('router', 'router', ['--port', String(this.options.port), '--configdb', `127.0.0.1:${config}`], this.options.httpPort);
    await this.addShards(router.port, shards);
    return { uri: `mongodb://127.0.0.1:${router.port}`, port: router.port, consoleUrl: `http://127.0.0.1:${router.httpPort}/`, ...(this.keyFile === undefined ? {} : { keyFile: this.keyFile }) };
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
  private async addShards(routerPort: number, shards: Array<{ name: string; port: number }>): Promise<void> {
    // With a key, `up` is one of the cluster's processes: it logs in as __system.
    const client = new WireClient({ authenticate: internalAuthentication(this.keyFile === undefined ? undefined : readKeyFile(this.keyFile).key) });
    try {
      for (const { name, port } of shards) {
        const reply = await client.command(`127.0.0.1:${routerPort}`, 'admin', { addShard: `127.0.0.1:${port}`, name }, { timeoutMs: ADD_SHARD_TIMEOUT_MS });
        if (Number(reply.ok) !== 1) { // ok may be an int or a double
          throw new Error(`addShard ${name} failed: ${String(reply.errmsg)} (${String(reply.codeName ?? reply.code)})`);
        }
      }
    } finally {
      await client.close();
    }
  }
}
