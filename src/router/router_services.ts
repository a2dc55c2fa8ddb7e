import type { Logger } from 'pino';
import type { FailPoints } from '../base/fail_points.js';
import type { Doc } from '../bson/values.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import type { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import type { LogicalClock } from '../sessions/logical_clock.js';
import type { Clock } from '../base/clock.js';
import type { SessionKiller } from '../sessions/session_killer.js';
import type { Network } from '../wire/network.js';
import type { CatalogCache } from './catalog_cache.js';
import type { ChunkSplitter } from './chunk_splitter.js';
import type { ClusterCursorManager } from './cluster_cursor_manager.js';
import type { OpCounters } from './command_entry.js';
import type { ShardRegistry } from './shard_registry.js';
import type { AuthenticationAttempts } from '../auth/authentication_attempts.js';
import type { ProcessTls } from '../wire/tls_mode.js';
import type { TransactionRouter } from './transaction_router.js';
import type { QueryAnalysisSampler } from './query_analysis/query_sampler.js';

export interface RouterOptions {
  port: number;
  bindIp: string;
  configHost: string;
  // --enableTestCommands: configureFailPoint and waitForFailPoint exist.
  enableTestCommands: boolean;
  // --auth: clients log in as users the config server holds, and run what their roles allow.
  auth: boolean;
  // --keyFile: the file and the cluster's key in it (never printed); implies auth.
  keyFile?: { path: string; key: string };
  // --tlsMode and its files: the port's TLS and the client's to the config server and shards.
  tls?: ProcessTls;
  // --maxConns (mongos's net.maxIncomingConnections): client connections open at once; more are closed.
  maxConns: number;
  // --setParameter: routerFastPaths (fast_paths.ts) in front of the general path, or not;
  // logicalSessionRefreshMillis, how often the session cache is written to config.system.sessions;
  // maxAcceptableLogicalClockDriftSecs, how far ahead of its wall clock a gossiped $clusterTime may be.
  // userCacheInvalidationIntervalSecs, how often the config server is asked whether its users changed.
  parameters: { routerFastPaths: boolean; logicalSessionRefreshMillis: number; maxAcceptableLogicalClockDriftSecs: number; userCacheInvalidationIntervalSecs: number };
}

// Everything a router command may use. A router keeps nothing durable: these are caches of the
// config server's catalog, open cluster cursors, and connections.
export interface RouterServices {
  options: RouterOptions;
  client: Network;
  shardRegistry: ShardRegistry;
  catalogCache: CatalogCache;
  chunkSplitter: ChunkSplitter;
  cursors: ClusterCursorManager;
  sessions: LogicalSessionCache;
  // The operations in progress under a session, and what killSessions kills (here and on every shard).
  sessionKiller: SessionKiller;
  // The router's cluster time: moved by its clients' and its shards' $clusterTime, sent with every
  // request to a node and on every reply.
  clock: LogicalClock;
  // The wall clock and timers the router's commands and caches read and wait on: the process's
  // own, or a simulator's virtual one. Not the cluster time (`clock`).
  wallClock: Clock;
  logger: Logger;
  startedAt: Date;
  recentLog: string[];
  connections: { current: number; total: number };
  // serverStatus's opcounters, counted as every command enters (command_entry.ts).
  opcounters: OpCounters;
  // Requests answered by the fast paths (insert_fast_path.ts, find_fast_path.ts), shown by serverStatus.
  fastPaths: { insert: number; update: number; find: number };
  // Namespaces a shard answered as views: find_fast_path.ts leaves their reads to the general path.
  knownViews: Set<string>;
  // The router's fail points (failCommand), set by configureFailPoint with --enableTestCommands.
  failPoints: FailPoints;
  // The sessions' transactions this router runs (transaction_router.ts).
  transactions: TransactionRouter;
  // The collections whose query analyzer is on, and the queries sampled from them not yet written
  // (query_analysis/).
  queryAnalysis: QueryAnalysisSampler;
  // The user cache generation the roles of logged-in connections must have been read under: a new
  // one when a user command goes through this router or the config server's changes (polled).
  userCache: { generation: string };
  // Its logins and their brake on failed ones (serverStatus's security.authentication).
  authentication: AuthenticationAttempts;
  commands: ReadonlyMap<string, RouterCommand>;
  // connPoolStats's `replicaSets`: each set's members as the network's monitors see them (none
  // where the network has no monitors, as under the simulator).
  replicaSets?: () => Doc;
}

export interface RouterContext {
  router: RouterServices;
  conn: ConnectionInfo;
  db: string;
}

export interface RouterCommand {
  names: readonly string[];
  adminOnly?: boolean;
  run(ctx: RouterContext, cmd: Doc): Doc | Promise<Doc>;
}
