import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Clock } from '../../../src/base/clock.js';
import type { ConfigServerServices, NodeOptions, ShardServices } from '../../../src/mongod_commands/command.js';
import { startConfigServer } from '../../../src/process/config_server_process.js';
import type { MongodPorts } from '../../../src/process/mongod_ports.js';
import type { RunningNode } from '../../../src/process/mongod_server.js';
import { routerRoot, type RunningRouter } from '../../../src/process/router_process.js';
import { DEFAULT_PARAMETERS, parseRouterSetParameters } from '../../../src/process/set_parameter.js';
import { startShard } from '../../../src/process/shard_process.js';
import type { RouterOptions } from '../../../src/router/router_services.js';
import { LogicalClock } from '../../../src/sessions/logical_clock.js';
import { networkGossip } from '../../../src/sessions/logical_time_metadata.js';
import type { StorageEngine } from '../../../src/storage/storage_engine.js';
import type { Network } from '../../../src/wire/network.js';
import { Incarnation, type Scheduler } from '../scheduler.js';
import type { SimNetwork } from '../sim_network.js';
import { openSimStorage, simDiskRoot, STORAGE_OPTIONS } from '../sim_storage.js';

// Where the virtual wall clocks start: dates and timestamps of a realistic size, the same every run.
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);

export type Role = 'config' | 'shard' | 'router';

// One process of the simulated cluster across its lives: its name, address and disk stay, each
// start is a new incarnation that builds its services with the real composition root.
export interface SimProcess {
  readonly name: string;
  readonly role: Role;
  readonly host: string;
  readonly dir: string | undefined;
  lives: number;
  // How far this machine's wall clock is from the virtual time (a clock jump moves it).
  skewMs: number;
  life: Life | undefined;
}

interface Life {
  readonly owner: Incarnation;
  readonly storage: StorageEngine | undefined;
  running: RunningNode | RunningRouter | undefined;
}

export const CONFIG_HOST = 'config.sim:27019';

// Parameters that make a short run see what a long one would: balancer rounds, orphan cleanup and
// session refreshes within seconds of virtual time.
const NODE_PARAMETERS: NodeOptions['parameters'] = {
  ...DEFAULT_PARAMETERS,
  balancerIdleRoundIntervalMillis: 2_000,
  balancerMigrationsThrottlingMs: 200,
  orphanCleanupDelaySecs: 1,
  rangeDeleterBatchSize: 16,
  logicalSessionRefreshMillis: 5_000,
  transactionLifetimeLimitSeconds: 10,
  ttlMonitorSleepSecs: 5,
};
// DOCSHARD_SIM_LOG=warn (or another pino level) shows what the processes log, to stderr.
const LOG = pino({ level: process.env.DOCSHARD_SIM_LOG ?? 'silent' }, pino.destination(2));

// The processes of one simulated cluster, started and crashed under the scheduler. A start is a
// step: the composition root runs on the virtual clock, the simulated network and a real LMDB disk
// under the cluster's root directory; a crash is kill -9 (memory, messages, timers and disk work
// not yet started go; the files stay).
export class ClusterProcesses {
  readonly all: SimProcess[];
  readonly problems: string[] = [];
  private readonly root = simDiskRoot();

  constructor(private readonly scheduler: Scheduler, private readonly network: SimNetwork, shards: number, routers: number) {
    const disk = (name: string): string => {
      const dir = path.join(this.root, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };
    this.all = [
      { name: 'config', role: 'config', host: CONFIG_HOST, dir: disk('config'), lives: 0, skewMs: 0, life: undefined },
      ...Array.from({ length: shards }, (_, i): SimProcess => ({ name: `shard${i}`, role: 'shard', host: `shard${i}.sim:27018`, dir: disk(`shard${i}`), lives: 0, skewMs: 0, life: undefined })),
      ...Array.from({ length: routers }, (_, i): SimProcess => ({ name: `router${i}`, role: 'router', host: `router${i}.sim:${27017 - i}`, dir: undefined, lives: 0, skewMs: 0, life: undefined })),
    ];
  }

  get shards(): SimProcess[] {
    return this.all.filter((p) => p.role === 'shard');
  }

  get routers(): SimProcess[] {
    return this.all.filter((p) => p.role === 'router');
  }

  byName(name: string): SimProcess {
    return this.all.find((p) => p.name === name)!;
  }

  up(p: SimProcess): boolean {
    return p.life?.owner.alive === true;
  }

  // The services of a node that has finished starting, to look at between steps.
  shardServices(p: SimProcess): ShardServices | undefined {
    return p.role === 'shard' && this.up(p) ? (p.life?.running as RunningNode<ShardServices> | undefined)?.services : undefined;
  }

  configServices(): ConfigServerServices | undefined {
    const p = this.all[0]!;
    return this.up(p) ? (p.life?.running as RunningNode<ConfigServerServices> | undefined)?.services : undefined;
  }

  // Starts `p` in a step of its own; `onStarted` is given its services once its root is done.
  start(p: SimProcess, onStarted: (p: SimProcess) => void = () => undefined): void {
    this.scheduler.post(undefined, `${p.name} starts`, async () => {
      await p.life?.storage?.close();
      this.boot(p, onStarted);
    });
  }

  // kill -9, between two steps.
  crash(p: SimProcess): void {
    const owner = p.life?.owner;
    if (owner === undefined || !owner.alive) return;
    this.scheduler.kill(owner);
    this.network.crashed(owner);
    this.scheduler.trace.push(`  ${owner.name} crashes`);
  }

  async close(): Promise<void> {
    for (const p of this.all) {
      if (p.life?.owner.alive) {
        this.scheduler.kill(p.life.owner);
        this.network.crashed(p.life.owner);
      }
      await p.life?.storage?.close();
    }
    rmSync(this.root, { recursive: true, force: true });
  }

  // A client of the cluster (the workloads' driver): never crashes, gossips no cluster time.
  client(name: string): Network {
    return this.network.clientOf(new Incarnation(name));
  }

  private boot(p: SimProcess, onStarted: (p: SimProcess) => void): void {
    const owner = new Incarnation(`${p.name}#${p.lives++}`);
    const base = this.scheduler.clockOf(owner, SIM_EPOCH_MS);
    const wallClock: Clock = { ...base, now: () => base.now() + p.skewMs };
    const parameters = NODE_PARAMETERS;
    const clock = new LogicalClock(() => wallClock.now(), parameters.maxAcceptableLogicalClockDriftSecs);
    const network = this.network.clientOf(owner, networkGossip(clock));
    const listener = this.network.listener(p.host, owner);
    const [bindIp, port] = [p.host.slice(0, p.host.lastIndexOf(':')), Number(p.host.slice(p.host.lastIndexOf(':') + 1))];
    let started: Promise<RunningNode | RunningRouter>;
    let storage: StorageEngine | undefined;
    if (p.role === 'router') {
      const options: RouterOptions = {
        port, bindIp, configHost: CONFIG_HOST, enableTestCommands: true, auth: false, maxConns: 1_000_000,
        parameters: { ...parseRouterSetParameters([]), logicalSessionRefreshMillis: parameters.logicalSessionRefreshMillis },
      };
      started = routerRoot(options, { network, listener, clock, wallClock, control: { logger: LOG, recentLog: [] } });
    } else {
      storage = openSimStorage(p.dir!, this.scheduler, owner, {
        ...STORAGE_OPTIONS, clock, history: { windowMs: parameters.minSnapshotHistoryWindowInSeconds * 1000, maxBytes: 64 * 1024 * 1024 },
      });
      const options: NodeOptions = { role: p.role, port, bindIp, dbpath: p.dir!, enableTestCommands: true, maxConns: 1_000_000, parameters };
      const ports: MongodPorts = { storage, network, listener, clock, wallClock, control: { logger: LOG, recentLog: [], lock: { release: () => undefined } } };
      started = p.role === 'shard' ? startShard(options, ports) : startConfigServer(options, ports);
    }
    const life: Life = { owner, storage, running: undefined };
    p.life = life;
    started.then((running) => {
      if (!owner.alive) return;
      life.running = running;
      onStarted(p);
    }, (err: unknown) => {
      if (owner.alive) this.problems.push(`${owner.name} failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    });
  }
}
