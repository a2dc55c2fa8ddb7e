import type { Logger } from 'pino';
import { systemClock, type Clock } from '../base/clock.js';
import type { NodeOptions } from '../mongod_commands/command.js';
import { startConfigServer } from './config_server_process.js';
import { openMongodPorts } from './mongod_ports.js';
import type { RunningNode } from './mongod_server.js';
import { startShard } from './shard_process.js';

export type { RunningNode } from './mongod_server.js';

// A shard or a config server: its ports opened at the edge, then its role's composition root
// (shard_process.ts, config_server_process.ts) builds its services from them. `wallClock` is the
// time and timers everything in it reads and waits on (a simulator gives its virtual one).
export async function startNode(options: NodeOptions, logger: Logger, recentLog: string[], wallClock: Clock = systemClock): Promise<RunningNode> {
  const ports = await openMongodPorts(options, logger, recentLog, wallClock);
  return options.role === 'shard' ? startShard(options, ports) : startConfigServer(options, ports);
}
