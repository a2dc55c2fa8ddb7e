import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { buildCommandTable, dispatchCommand } from '../commands/dispatcher.js';
import type { ConnectionInfo, NodeOptions, NodeServices } from '../commands/command.js';
import { CursorManager } from '../commands/cursor_manager.js';
import { CappedInsertNotifier } from '../commands/capped_insert_notifier.js';
import { FailPoints, hangIfFailPointEnabled } from '../base/fail_points.js';
import { systemClock } from '../base/clock.js';
import { handleMessage, withCompression } from '../commands/message_handler.js';
import { nodeCommands } from '../commands/registry.js';
import { compileFilter } from '../query/match/matcher.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import { SessionKiller } from '../sessions/session_killer.js';
import { SessionCatalog } from '../sessions/session_catalog.js';
import { LogicalClock } from '../sessions/logical_clock.js';
import { networkGossip } from '../sessions/logical_time_metadata.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { ShardingState } from '../shard/sharding_state.js';
import { ShardMetadata } from '../shard/shard_metadata.js';
import { RemoteConfigReader } from '../shard/remote_config_reader.js';
import { OngoingQueries } from '../shard/ongoing_queries.js';
import { WireClient } from '../wire/client.js';
import { configServerCommands } from '../commands/configsvr/configsvr_commands.js';
import { zoneCommands } from '../commands/configsvr/zone_commands.js';
import { ensureConfigCollections } from '../configsvr/config_collections.js';
import { removeShardCommands } from '../commands/configsvr/remove_shard_commands.js';
import { ShardingCatalogManager } from '../configsvr/sharding_catalog_manager.js';
import { chunkHistoryWindowSecs } from '../configsvr_decisions/commit_chunk_migration.js';
import { DDLLockManager } from '../ddl/ddl_lock_manager.js';
import { shardDDL } from './shard_ddl.js';
import { Balancer } from '../configsvr/balancer.js';
import { balancerCommands } from '../commands/configsvr/balancer_commands.js';
import { TcpServer } from '../wire/tcp_server.js';
import { Limits } from '../wire/op_codes.js';
import { PRE_AUTH_MESSAGE_SIZE_BYTES_MAX } from '../auth/connection_auth.js';
import { internalAuthentication } from './key_file.js';
import { ActiveMigrationsRegistry } from '../migration/active_migrations_registry.js';
import { CriticalSection } from '../shard/critical_section.js';
import { RangeDeleterService } from '../migration/range_deleter_service.js';
import { LOAD_SAMPLE_INTERVAL_MS, UserLoadMeter } from '../migration/user_load_meter.js';
import { recoverDonations } from '../migration/migration_source_manager.js';
import { acquireLockFile } from './lock_file.js';
import { instrumentNode } from './observability.js';
import { TtlMonitor } from '../ttl/ttl_monitor.js';
import { DEFAULT_TTL_LIMITS } from '../ttl/ttl_policy.js';
import { ttlDeletionScopes } from '../ttl/ttl_deletion_scope.js';
import { startNodeSessionJobs } from './logical_sessions.js';
import { TransactionParticipants } from '../sessions/transaction_participant.js';
import { TransactionCoordinatorService } from '../sessions/transaction_coordinator_service.js';
import { SessionKillerMatcher } from '../sessions/kill_sessions.js';

// MongoDB's name for the file in the dbpath that holds the pid of the process using it.
const LOCK_FILE_NAME = 'mongod.lock';
const CURSOR_IDLE_TIMEOUT_MS = 10 * 60 * 1000;
const CURSOR_REAP_INTERVAL_MS = 60 * 1000;
const TRANSACTION_REAP_INTERVAL_MS = 1000;
// The versions kept for snapshot reads, at most (src/storage/version_history.ts).
const SNAPSHOT_HISTORY_MAX_BYTES = 256 * 1024 * 1024;

export interface RunningNode {
  port: number;
  services: NodeServices;
  stop(): Promise<void>;
}

// The composition root of a node: where its LMDB environment, socket and services are created and
// its components with timers of their own are started.
export async function startNode(options: NodeOptions, logger: Logger, recentLog: string[]): Promise<RunningNode> {
  mkdirSync(options.dbpath, { recursive: true });
  // Before LMDB opens: two processes on one environment would each trust their own catalog and
  // caches. Throws LockFileHeldError when a live process holds it.
  const lock = await acquireLockFile(path.join(options.dbpath, LOCK_FILE_NAME), logger);
  const clock = new LogicalClock(Date.now, options.parameters.maxAcceptableLogicalClockDriftSecs);
  const storage = StorageEngine.open(options.dbpath, {
    compilePartialFilter: (filter) => {
      const matcher = compileFilter(filter);
      return (doc) => matcher.matches(doc);
    },
    clock,
    history: { windowMs: options.parameters.minSnapshotHistoryWindowInSeconds * 1000, maxBytes: SNAPSHOT_HISTORY_MAX_BYTES },
  });
  const local = new LocalCollections(storage);
  const shardingState = new ShardingState(local);
  const client = new WireClient({ gossip: networkGossip(clock), authenticate: internalAuthentication(options.keyFile?.key), tls: options.tls?.client });
  const queries = new OngoingQueries();
  const cappedInserts = new CappedInsertNotifier();
  storage.observers.push(cappedInserts);
  const counters = { connectionsCurrent: 0, connectionsTotal: 0, opcounters: { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 } };
  const metadata = new ShardMetadata(() => shardingState.shardName, () => {
    const host = shardingState.configHost;
    return host ? new RemoteConfigReader(client, host, () => hangIfFailPointEnabled(services, 'hangBeforeFilteringMetadataRefresh')) : undefined;
  });
  const criticalSection = new CriticalSection();
  const ttl = new TtlMonitor(storage, ttlDeletionScopes({ role: options.role, shardName: () => shardingState.shardName, criticalSection, metadata, logger }), logger, {
    sleepMs: options.parameters.ttlMonitorSleepSecs * 1000,
    limits: DEFAULT_TTL_LIMITS,
    now: Date.now,
  });
  const sessionCatalog = new SessionCatalog(storage, clock);
  const services: NodeServices = {
    options,
    storage,
    cursors: new CursorManager(),
    cappedInserts,
    logger,
    startedAt: new Date(),
    counters,
    ttl,
    recentLog,
    failPoints: new FailPoints(),
    sessions: new LogicalSessionCache(),
    sessionKiller: new SessionKiller({
      cursors: (matcher) => {
        services.transactions.abortMatching(matcher);
        return services.cursors.killCursorsWithMatchingSessions(matcher);
      },
    }),
    sessionCatalog,
    transactions: new TransactionParticipants(storage, sessionCatalog, clock, (lsid) => services.cursors.killCursorsWithMatchingSessions(new SessionKillerMatcher([{ lsid }])), options.parameters.transactionLifetimeLimitSeconds * 1000),
    transactionCoordinators: new TransactionCoordinatorService({ storage, local, client, logger, clock: systemClock, get failPoints() { return services.failPoints; }, configHost: () => shardingState.configHost }),
    clock,
    local,
    client,
    sharding: { state: shardingState, queries, metadata },
    migrations: {
      registry: new ActiveMigrationsRegistry(),
      criticalSection,
      rangeDeleter: new RangeDeleterService(storage, local, logger, {
        batchSize: Math.max(1, options.parameters.rangeDeleterBatchSize),
        batchDelayMs: options.parameters.rangeDeleterBatchDelayMS,
        orphanCleanupDelayMs: options.parameters.orphanCleanupDelaySecs * 1000,
      }, systemClock, queries),
      source: undefined,
      destination: undefined,
      loadMeter: new UserLoadMeter(counters.opcounters),
      clock: systemClock,
    },
    commands: buildCommandTable(options.role === 'config' ? [...nodeCommands, ...configServerCommands, ...balancerCommands, ...zoneCommands, ...removeShardCommands] : nodeCommands),
  };
  // With --auth, a client that has not authenticated sends small, uncompressed messages only, as
  // to mongod: its hello and SASL steps never need more, and nothing it sends is inflated.
  const authenticated = (conn: ConnectionInfo): boolean => options.auth !== true || conn.auth?.user !== undefined;
  const server = new TcpServer({
    onMessage: withCompression(instrumentNode(services, (conn, message) => handleMessage((c, cmd) => dispatchCommand(services, c, cmd), conn, message)), authenticated),
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
  // Before the port opens: prepared transactions hold their collections again, and the two-phase
  // commits this shard coordinated go on, so that a router's retry joins them.
  const prepared = services.transactions.recoverPrepared();
  const coordinating = services.transactionCoordinators.recover();
  if (prepared + coordinating > 0) logger.info({ c: 'TXN', prepared, coordinating }, 'Recovered prepared transactions and transaction coordinators');
  if (options.role === 'shard') {
    services.migrations.rangeDeleter.start();
    // Before the port opens: the blocked collections and databases stay blocked and the
    // coordinators a crash interrupted hold their locks before a new DDL can ask for them.
    services.ddl = shardDDL(services);
    // Registered before the port opens, so no new migration overlaps a recovering one.
    for (const recovery of recoverDonations(services)) recovery.catch((err: unknown) => logger.error({ c: 'MIGRATION', err }, 'Migration recovery failed'));
  }
  const port = await server.listen(options.port, options.bindIp);
  services.options = { ...options, port };
  if (options.role === 'config') {
    const clusterId = ensureConfigCollections(storage, local);
    services.catalogManager = new ShardingCatalogManager(local, client, `${options.bindIp}:${port}`, clusterId, logger, new DDLLockManager(systemClock, services.failPoints), clock, chunkHistoryWindowSecs(options.parameters));
    const p = options.parameters;
    services.balancer = new Balancer(services.catalogManager, local, client, `${options.bindIp}:${port}`, {
      idleRoundIntervalMs: p.balancerIdleRoundIntervalMillis,
      migrationsThrottlingMs: p.balancerMigrationsThrottlingMs,
      autoMergerIntervalMs: p.autoMergerIntervalSecs * 1000,
      minChunkAgeForMergeMs: p.minSnapshotHistoryWindowInSeconds * 1000,
    }, logger, systemClock);
    services.balancer.start();
  }
  const reaper = setInterval(() => services.cursors.killIdle(CURSOR_IDLE_TIMEOUT_MS, Date.now()), CURSOR_REAP_INTERVAL_MS);
  reaper.unref();
  const transactionReaper = setInterval(() => services.transactions.abortExpired(Date.now()), TRANSACTION_REAP_INTERVAL_MS);
  transactionReaper.unref();
  const loadSampler = setInterval(() => services.migrations.loadMeter.sample(performance.now()), LOAD_SAMPLE_INTERVAL_MS);
  loadSampler.unref();
  ttl.start();
  const sessionJobs = startNodeSessionJobs(services);
  logger.info({ c: 'NETWORK', port, bindIp: options.bindIp, role: options.role, dbpath: options.dbpath }, 'Waiting for connections');
  return {
    port,
    services,
    async stop() {
      clearInterval(reaper);
      clearInterval(loadSampler);
      await sessionJobs.stop();
      await services.balancer?.stop();
      services.ddl?.coordinators.stop();
      services.transactionCoordinators.stop();
      services.migrations.rangeDeleter.stop();
      await ttl.stop();
      await server.close();
      await client.close();
      await storage.close();
      lock.release();
    },
  };
}
