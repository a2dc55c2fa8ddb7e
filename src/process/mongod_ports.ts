import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../base/clock.js';
import type { NodeOptions } from '../mongod_commands/command.js';
import { compileFilter } from '../query/match/matcher.js';
import { LogicalClock } from '../sessions/logical_clock.js';
import { networkGossip } from '../sessions/logical_time_metadata.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { WireClient } from '../wire/client.js';
import { openSetAwareNetwork } from '../client/set_aware_network.js';
import type { ReplicaSetMonitors } from '../client/replica_set_monitors.js';
import type { Network, OpenListener } from '../wire/network.js';
import { TcpServer } from '../wire/tcp_server.js';
import { internalAuthentication } from './key_file_reader.js';
import { acquireLockFile, type LockFile } from './lock_file.js';

// MongoDB's name for the file in the dbpath that holds the pid of the process using it.
const LOCK_FILE_NAME = 'mongod.lock';
// The versions kept for snapshot reads, at most (src/storage/version_history.ts).
const SNAPSHOT_HISTORY_MAX_BYTES = 256 * 1024 * 1024;

// What a shard's or a config server's composition root is given of the outside world.
export interface MongodPorts {
  // The storage engine over the dbpath this process holds.
  storage: StorageEngine;
  // Connections to the other members of the cluster.
  network: Network;
  // The network's monitors of the replica sets it reaches (a shard set's membership, as its primary
  // reports it); absent where the network reaches no set (the simulator's).
  monitors?: ReplicaSetMonitors;
  // Where clients and the other members reach this process.
  listener: OpenListener;
  // The process's cluster time: the storage engine stamps commits with it, the network gossips it.
  clock: LogicalClock;
  // The time and timers everything in the process reads and waits on (a simulator gives its
  // virtual one); the cluster time's physical part is read from it too.
  wallClock: Clock;
  control: ProcessControl;
}

export interface ProcessControl {
  logger: Logger;
  // The recent log lines getLog answers.
  recentLog: string[];
  // The dbpath's lock, released last at shutdown.
  lock: LockFile;
}

// Opens a node's ports: its dbpath locked before LMDB opens (two processes on one environment would
// each trust their own catalog and caches; throws LockFileHeldError when a live process holds it),
// then the storage engine and the node-to-node client.
export async function openMongodPorts(options: NodeOptions, logger: Logger, recentLog: string[], wallClock: Clock): Promise<MongodPorts> {
  mkdirSync(options.dbpath, { recursive: true });
  const lock = await acquireLockFile(path.join(options.dbpath, LOCK_FILE_NAME), logger);
  const clock = new LogicalClock(() => wallClock.now(), options.parameters.maxAcceptableLogicalClockDriftSecs);
  const storage = StorageEngine.open(options.dbpath, {
    compilePartialFilter: (filter) => {
      const matcher = compileFilter(filter);
      return (doc) => matcher.matches(doc);
    },
    clock,
    history: { windowMs: options.parameters.minSnapshotHistoryWindowInSeconds * 1000, maxBytes: SNAPSHOT_HISTORY_MAX_BYTES },
  });
  const network = openSetAwareNetwork((maxConnectionsPerHost) => new WireClient({ gossip: networkGossip(clock), authenticate: internalAuthentication(options.keyFile?.key), tls: options.tls?.client, maxConnectionsPerHost, ...ownLoopbackAddress(options.bindIp) }), wallClock);
  return { storage, network, monitors: network.monitors, listener: openTcpListener, clock, wallClock, control: { logger, recentLog, lock } };
}

// The real listening side: a TCP server.
export const openTcpListener: OpenListener = (handlers, maxConnections, tls) => new TcpServer(handlers, maxConnections, tls);

// A node bound to one loopback address of its own (127.0.0.N, not 127.0.0.1) connects from it too,
// so that a test can cut the links between members on one machine by address.
function ownLoopbackAddress(bindIp: string): { loopbackSource?: string } {
  const ip = bindIp.trim();
  return /^127\.\d+\.\d+\.\d+$/.test(ip) && ip !== '127.0.0.1' ? { loopbackSource: ip } : {};
}
