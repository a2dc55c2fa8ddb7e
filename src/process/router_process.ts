import os from 'node:os';
import { ObjectId } from 'bson';
import type { Logger } from 'pino';
import { SERVER_VERSION } from '../command_layer/server_description.js';
import { handleMessage, withCompression, type Dispatch, type MessageHandler } from '../command_layer/message_handler.js';
import { CatalogCache } from '../router/catalog_cache.js';
import { createChunkSplitter } from '../router/chunk_splitter.js';
import { ClusterCursorManager } from '../router/cluster_cursor_manager.js';
import { withFastPaths } from '../router/fast_paths.js';
import { buildRouterCommandTable, dispatchRouterCommand } from '../router/router_dispatcher.js';
import { routerCommands } from '../router/router_commands.js';
import { routerTestCommands } from '../router/commands/cluster_fail_points.js';
import { FailPoints } from '../base/fail_points.js';
import { systemClock, type Clock, type Timer } from '../base/clock.js';
import type { RouterOptions, RouterServices } from '../router/router_services.js';
import { ShardRegistry } from '../router/shard_registry.js';
import { QueryAnalysisSampler } from '../router/query_analysis/query_sampler.js';
import { startQueryAnalysisJobs } from '../router/query_analysis/query_analysis_jobs.js';
import { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import { SessionKiller } from '../sessions/session_killer.js';
import { killSessionsRemote } from '../router/kill_sessions_remote.js';
import { startRouterSessionJobs } from './logical_sessions.js';
import { LogicalClock } from '../sessions/logical_clock.js';
import { networkGossip } from '../sessions/logical_time_metadata.js';
import type { Doc } from '../bson/values.js';
import { WireClient } from '../wire/client.js';
import { openSetAwareNetwork } from '../client/set_aware_network.js';
import { replicaSetsStats } from '../client/conn_pool_stats.js';
import type { Network, OpenListener } from '../wire/network.js';
import { openTcpListener } from './mongod_ports.js';
import { instrumentRouter } from './observability.js';
import { newUserCacheGeneration } from '../router/commands/cluster_auth.js';

// The router's requests to a set that MongoDB's router sends with the idempotent retry policy: its
// internal sharding commands, each of which joins the coordinator or migration already under way
// for its namespace (so a step-down answered in the middle is sent again to the new primary), and
// reads outside a transaction, its catalog reads among them.
const IDEMPOTENT_READS: ReadonlySet<string> = new Set(['find', 'count', 'distinct', 'listCollections', 'listIndexes', 'listDatabases']);

function isIdempotentOnRouter(cmd: Doc): boolean {
  const name = Object.keys(cmd)[0] ?? '';
  if (name.startsWith('_shardsvr') || name.startsWith('_configsvr')) return true;
  return IDEMPOTENT_READS.has(name) && cmd.autocommit === undefined;
}
import { AuthenticationAttempts } from '../auth/authentication_attempts.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import { Limits } from '../wire/op_codes.js';
import { PRE_AUTH_MESSAGE_SIZE_BYTES_MAX } from '../auth/connection_auth.js';
import { internalAuthentication } from './key_file_reader.js';
import { TransactionRouter } from '../router/transaction_router.js';
import { setProcessOperationClock } from '../base/operation_clock.js';

const CURSOR_IDLE_TIMEOUT_MS = 10 * 60 * 1000;
// How often the router reports itself in config.mongos: MongoDB's ShardingUptimeReporter interval.
const PING_INTERVAL_MS = 10 * 1000;

export interface RunningRouter {
  port: number;
  services: RouterServices;
  stop(): Promise<void>;
}

// What a router's composition root is given: connections to the config server and the shards,
// the process's cluster time, which they gossip, the time and timers everything in it reads and
// waits on (a simulator gives its virtual one), and process control. A router has no storage.
export interface RouterPorts {
  network: Network;
  listener: OpenListener;
  clock: LogicalClock;
  wallClock: Clock;
  control: { logger: Logger; recentLog: string[] };
  // The network's view of the replica sets it reaches (connPoolStats's `replicaSets`).
  replicaSets?: () => Doc;
}

// A router: its ports opened at the edge, then its composition root builds its services from them.
export async function startRouter(options: RouterOptions, logger: Logger, recentLog: string[], wallClock: Clock = systemClock): Promise<RunningRouter> {
  const clock = new LogicalClock(() => wallClock.now(), options.parameters.maxAcceptableLogicalClockDriftSecs);
  const network = openSetAwareNetwork((maxConnectionsPerHost) => new WireClient({ gossip: networkGossip(clock), authenticate: internalAuthentication(options.keyFile?.key), tls: options.tls?.client, maxConnectionsPerHost }), wallClock, isIdempotentOnRouter);
  return routerRoot(options, { network, listener: openTcpListener, clock, wallClock, control: { logger, recentLog }, replicaSets: () => replicaSetsStats(network.monitors) });
}

// The composition root of a router: no durable state, only caches, cursors and connections.
// It registers in config.mongos and pings there, as mongos does.
export async function routerRoot(options: RouterOptions, ports: RouterPorts): Promise<RunningRouter> {
  const { network: client, listener, clock, wallClock, control: { logger, recentLog } } = ports;
  setProcessOperationClock(wallClock);
  const shardRegistry = new ShardRegistry(client, options.configHost);
  const catalogCache = new CatalogCache(client, options.configHost);
  const router: RouterServices = {
    options,
    client,
    shardRegistry,
    catalogCache,
    chunkSplitter: createChunkSplitter(client, options.configHost, shardRegistry, catalogCache, logger, wallClock),
    cursors: new ClusterCursorManager(wallClock),
    sessions: new LogicalSessionCache(),
    sessionKiller: new SessionKiller({
      cursors: (matcher) => router.cursors.killCursorsWithMatchingSessions(matcher),
      remote: killSessionsRemote({ client, shardRegistry }, logger),
    }),
    clock,
    wallClock,
    logger,
    startedAt: new Date(wallClock.now()),
    recentLog,
    connections: { current: 0, total: 0 },
    opcounters: { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 },
    fastPaths: { insert: 0, update: 0, find: 0 },
    knownViews: new Set(),
    failPoints: new FailPoints(),
    transactions: new TransactionRouter(),
    queryAnalysis: new QueryAnalysisSampler(),
    userCache: { generation: newUserCacheGeneration() },
    authentication: new AuthenticationAttempts(() => wallClock.now()),
    ...(ports.replicaSets === undefined ? {} : { replicaSets: ports.replicaSets }),
    commands: buildRouterCommandTable(options.enableTestCommands ? [...routerCommands, ...routerTestCommands] : routerCommands),
  };
  const dispatch: Dispatch = (conn, cmd) => dispatchRouterCommand(router, conn, cmd);
  const handle: MessageHandler = (conn, message) => handleMessage(dispatch, conn, message);
  // With --auth, as on a node: before login, small uncompressed messages only.
  const authenticated = (conn: ConnectionInfo): boolean => !options.auth || conn.auth?.user !== undefined;
  const server = listener({
    onMessage: withCompression(instrumentRouter(router, options.parameters.routerFastPaths ? withFastPaths(router, handle) : handle), authenticated),
    maxMessageBytes: (conn) => (authenticated(conn) ? Limits.maxMessageSizeBytes : PRE_AUTH_MESSAGE_SIZE_BYTES_MAX),
    onConnect: () => { router.connections.current += 1; router.connections.total += 1; },
    onClose: () => { router.connections.current -= 1; },
    onRefuse: (remote, open) => logger.info({ c: 'NETWORK', id: 22942, remote, connectionCount: open + 1 }, 'connection refused because too many open connections'),
  }, options.maxConns, options.tls?.server);
  const port = await server.listen(options.port, options.bindIp);
  router.options = { ...options, port };
  // Named as mongos names itself there: the machine's host name and the port, as serverStatus reports.
  const mongosId = `${os.hostname()}:${port}`;
  const ping = async (): Promise<void> => {
    const now = new Date(wallClock.now());
    await client.command(options.configHost, 'config', {
      update: 'mongos',
      updates: [{ q: { _id: mongosId }, u: { $set: { ping: now, up: Math.floor((now.getTime() - router.startedAt.getTime()) / 1000), waiting: true, mongoVersion: SERVER_VERSION, advisoryHostFQDNs: [] } }, upsert: true }],
    }).catch((err: unknown) => logger.warn({ c: 'SHARDING', err }, 'Could not ping the config server'));
    await router.cursors.killIdle(CURSOR_IDLE_TIMEOUT_MS, now.getTime());
  };
  await ping();
  const timer = wallClock.setRepeatingTimer(PING_INTERVAL_MS, () => void ping(), { unref: true });
  const sessionJobs = startRouterSessionJobs(router);
  const queryAnalysisJobs = startQueryAnalysisJobs(router);
  const userCachePoll = options.auth ? pollUserCacheGeneration(router) : undefined;
  logger.info({ c: 'NETWORK', port, bindIp: options.bindIp, role: 'router', configdb: options.configHost }, 'Waiting for connections');
  return {
    port,
    services: router,
    async stop() {
      timer.cancel();
      userCachePoll?.cancel();
      queryAnalysisJobs.stop();
      await sessionJobs.stop();
      await server.close();
      await client.close();
    },
  };
}

// As mongos's user cache: every userCacheInvalidationIntervalSecs the config server is asked for its
// user cache generation, and a change makes every logged-in connection read its roles again.
function pollUserCacheGeneration(router: RouterServices): Timer {
  let seen: string | undefined;
  const poll = (): void => {
    router.client.command(router.options.configHost, 'admin', { _getUserCacheGeneration: 1 }).then((reply) => {
      const generation = reply.ok === 1 && reply.cacheGeneration instanceof ObjectId ? reply.cacheGeneration.toHexString() : undefined;
      if (generation === undefined || generation === seen) return;
      if (seen !== undefined) router.userCache.generation = newUserCacheGeneration();
      seen = generation;
    }, (err: unknown) => router.logger.warn({ c: 'ACCESS', err }, 'Could not read the user cache generation of the config server'));
  };
  // Once at start, so that the first change after it is one.
  poll();
  return router.wallClock.setRepeatingTimer(router.options.parameters.userCacheInvalidationIntervalSecs * 1000, poll, { unref: true });
}
