import type { ConfigServerServices, ShardServices } from '../mongod_commands/command.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import type { Doc } from '../bson/values.js';
import { handleMessage, withCompression } from '../command_layer/message_handler.js';
import { Limits } from '../wire/op_codes.js';
import { PRE_AUTH_MESSAGE_SIZE_BYTES_MAX } from '../auth/connection_auth.js';
import { LOAD_SAMPLE_INTERVAL_MS } from '../migration/user_load_meter.js';
import { instrumentNode } from './observability.js';
import { startNodeSessionJobs } from './logical_sessions.js';
import type { MongodPorts } from './mongod_ports.js';
import type { PrimaryOnlyServiceRegistry } from './primary_only_services.js';
import { transactionCoordinatorService } from './node_primary_services.js';

const CURSOR_IDLE_TIMEOUT_MS = 10 * 60 * 1000;
const CURSOR_REAP_INTERVAL_MS = 60 * 1000;
const TRANSACTION_REAP_INTERVAL_MS = 1000;

export interface RunningNode<S extends ShardServices | ConfigServerServices = ShardServices | ConfigServerServices> {
  port: number;
  services: S;
  stop(): Promise<void>;
}

// What a role does around the opening of its port; how it runs a command with its services; and
// its primary-only services (registered by the role, which the node starts and stops).
export interface RoleLifecycle {
  dispatch(conn: ConnectionInfo, cmd: Doc): Doc | Promise<Doc>;
  // After the node's prepared transactions are back, and its primary-only services registered.
  beforeListen(): void;
  afterListen(): void;
  primaryOnly: PrimaryOnlyServiceRegistry;
}

// The part of start-up and shutdown both node roles share: the listening socket, the recovery of
// transactions before it opens, the timers of every node, and the ports closed at the end.
export async function serveMongod<S extends ShardServices | ConfigServerServices>(services: S, ports: MongodPorts, role: RoleLifecycle): Promise<RunningNode<S>> {
  const { options, logger } = services;
  // With --auth, a client that has not authenticated sends small, uncompressed messages only, as
  // to mongod: its hello and SASL steps never need more, and nothing it sends is inflated.
  const authenticated = (conn: ConnectionInfo): boolean => options.auth !== true || conn.auth?.user !== undefined;
  const server = ports.listener({
    onMessage: withCompression(instrumentNode(services, (conn, message) => handleMessage(role.dispatch, conn, message)), authenticated),
    maxMessageBytes: (conn) => (authenticated(conn) ? Limits.maxMessageSizeBytes : PRE_AUTH_MESSAGE_SIZE_BYTES_MAX),
    onConnect: (conn) => {
      services.counters.connectionsCurrent += 1;
      services.counters.connectionsTotal += 1;
      logger.debug({ c: 'NETWORK', connectionId: conn.id, remote: conn.remote }, 'Connection accepted');
    },
    onClose: (conn, reason) => {
      services.counters.connectionsCurrent -= 1;
      logger.debug({ c: 'NETWORK', connectionId: conn.id, reason }, 'Connection ended');
    },
    onRefuse: (remote, open) => logger.info({ c: 'NETWORK', id: 22942, remote, connectionCount: open + 1 }, 'connection refused because too many open connections'),
  }, options.maxConns, options.tls?.server);
  // Before the port opens, outside a replica set, the primary-only services start (prepared
  // transactions hold their collections again, the two-phase commits this node coordinated go on,
  // so that a router's retry joins them); a member starts them when it becomes primary.
  const { primaryOnly } = role;
  primaryOnly.register(transactionCoordinatorService(services));
  role.beforeListen();
  if (services.replication === undefined) primaryOnly.startStandalone();
  const port = await server.listen(options.port, options.bindIp);
  services.options = { ...options, port };
  role.afterListen();
  const { wallClock } = services;
  const reaper = wallClock.setRepeatingTimer(CURSOR_REAP_INTERVAL_MS, () => services.cursors.killIdle(CURSOR_IDLE_TIMEOUT_MS, wallClock.now()), { unref: true });
  const transactionReaper = wallClock.setRepeatingTimer(TRANSACTION_REAP_INTERVAL_MS, () => services.transactions.abortExpired(wallClock.now()), { unref: true });
  const loadSampler = wallClock.setRepeatingTimer(LOAD_SAMPLE_INTERVAL_MS, () => services.migrations.loadMeter.sample(performance.now()), { unref: true });
  services.ttl.start();
  const sessionJobs = startNodeSessionJobs(services);
  // Once the port is known (a member finds itself in its config by it), and after the start-up
  // writes above, which a member that is not yet primary could not make with its oplog on.
  services.replication?.start();
  logger.info({ c: 'NETWORK', port, bindIp: options.bindIp, role: options.role, dbpath: options.dbpath }, 'Waiting for connections');
  return {
    port,
    services,
    async stop() {
      services.replicationWaits?.stop();
      services.replication?.stop();
      reaper.cancel();
      transactionReaper.cancel();
      loadSampler.cancel();
      await sessionJobs.stop();
      await primaryOnly.shutdown();
      await services.ttl.stop();
      await server.close();
      await ports.network.close();
      await ports.storage.close();
      ports.control.lock.release();
    },
  };
}
