import type { OngoingQueries } from '../shard/ongoing_queries.js';
import type { Balancer } from '../configsvr/balancer.js';
import type { Logger } from 'pino';
import type { Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { TtlMonitor } from '../ttl/ttl_monitor.js';
import type { CursorManager } from '../command_layer/cursor_manager.js';
import type { CappedInsertNotifier } from './capped_insert_notifier.js';
import type { FailPoints } from '../base/fail_points.js';
import type { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import type { SessionKiller } from '../sessions/session_killer.js';
import type { SessionCatalog } from '../sessions/session_catalog.js';
import type { LogicalClock } from '../sessions/logical_clock.js';
import type { Clock } from '../base/clock.js';
import type { ShardingState } from '../shard/sharding_state.js';
import type { ShardMetadata } from '../shard/shard_metadata.js';
import type { CriticalSection } from '../shard/critical_section.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import type { MigrationRuntime } from '../migration/migration_node.js';
import type { ShardingCatalogManager } from '../configsvr/sharding_catalog_manager.js';
import type { ReshardingCoordinatorService } from '../resharding/resharding_coordinator.js';
import type { ReshardingRecipientService } from '../resharding/resharding_recipient.js';
import type { ConnectionInfo } from '../command_layer/connection_info.js';
import type { ProcessTls } from '../wire/tls_mode.js';
import type { ShardingDDLCoordinatorService } from '../ddl/sharding_ddl_coordinator_service.js';
import type { CollectionCriticalSections } from '../shard/collection_critical_section.js';
import type { TransactionCoordinatorService } from '../sessions/transaction_coordinator_service.js';
import type { TransactionParticipants } from '../sessions/transaction_participant.js';
import type { ReplicationCoordinator } from '../replication/replication_coordinator.js';
import type { ReplicationWaits } from '../command_layer/replication_waits.js';

export interface NodeOptions {
  role: 'shard' | 'config';
  port: number;
  bindIp: string;
  dbpath: string;
  enableTestCommands: boolean;
  // --auth: a connection runs only the handshake and authentication until it has authenticated.
  auth?: boolean;
  // --keyFile: the file and the cluster's key in it (never printed); implies auth. The node logs in
  // to the others as __system with it, and they to it.
  keyFile?: { path: string; key: string };
  // --tlsMode and its files: the port's TLS and the node-to-node client's.
  tls?: ProcessTls;
  // --replSet: the replica set this node is a member of; absent, it is a standalone node.
  replSet?: string;
  // --oplogSize: local.oplog.rs's size on a --replSet member, in MB.
  oplogSizeMB?: number;
  // --maxConns (mongod's net.maxIncomingConnections): client connections open at once; more are closed.
  maxConns: number;
  // --setParameter values a node accepts at start-up (mongod's names).
  parameters: {
    orphanCleanupDelaySecs: number;
    balancerIdleRoundIntervalMillis: number;
    balancerMigrationsThrottlingMs: number;
    autoMergerIntervalSecs: number;
    minSnapshotHistoryWindowInSeconds: number;
    migrateClonePercentUnderLoad: number;
    rangeDeleterBatchSize: number;
    rangeDeleterBatchDelayMS: number;
    receiveChunkWaitForRangeDeleterTimeoutMS: number;
    ttlMonitorSleepSecs: number;
    maxAcceptableLogicalClockDriftSecs: number;
    logicalSessionRefreshMillis: number;
    transactionLifetimeLimitSeconds: number;
    reshardingCriticalSectionTimeoutMillis: number;
  };
}

export interface ServerCounters {
  connectionsCurrent: number;
  connectionsTotal: number;
  opcounters: Record<'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command', number>;
}

// Process-wide services every node has, a shard and a config server alike; created by the role's
// composition root (src/process) from the ports it is given.
export interface MongodServices {
  // Which role's services these are: each role's root builds its own (ShardServices, ConfigServerServices).
  role: 'shard' | 'config';
  options: NodeOptions;
  storage: StorageEngine;
  cursors: CursorManager;
  // What awaitData cursors wait on (an op observer of `storage`).
  cappedInserts: CappedInsertNotifier;
  logger: Logger;
  startedAt: Date;
  counters: ServerCounters;
  // Deletes expired documents of TTL indexes; serverStatus reports its statistics.
  ttl: TtlMonitor;
  recentLog: string[];
  failPoints: FailPoints;
  sessions: LogicalSessionCache;
  // The operations in progress under a session, and what killSessions kills.
  sessionKiller: SessionKiller;
  // Retryable writes: each session's txnNumber and what its statements did.
  sessionCatalog: SessionCatalog;
  // Multi-document transactions: each session's transaction on this node.
  transactions: TransactionParticipants;
  // The two-phase commits this shard coordinates.
  transactionCoordinators: TransactionCoordinatorService;
  // The process's cluster time.
  clock: LogicalClock;
  // The wall clock and timers every component and command of the node reads and waits on: the
  // process's own, or a simulator's virtual one. Not the cluster time (`clock`).
  wallClock: Clock;
  local: LocalCollections;
  // Node-to-node connections (to the config server, to other shards).
  client: Network;
  // The shard's identity, its filtering metadata, the queries running under it, and the
  // critical section migrations and DDLs take on its collections and databases.
  sharding: { state: ShardingState; metadata: ShardMetadata; queries: OngoingQueries; criticalSection: CriticalSection };
  // Every node's so far: the migration commands are in both roles' tables, and a config server
  // answers them as it always has.
  migrations: MigrationRuntime;
  // A --replSet member's replication coordinator; absent on a standalone node.
  replication?: ReplicationCoordinator;
  // Its waits for read and write concern around every command (src/replication/replication_waiters.ts).
  replicationWaits?: ReplicationWaits;
  // The role's command table; listCommands reads its names, the dispatcher runs it with the role's
  // services.
  commands: ReadonlyMap<string, CommandDefinition<never>>;
}

// A shard's: its DDL coordinators and the collection critical sections DDLs take on it.
export interface ShardServices extends MongodServices {
  role: 'shard';
  ddl: { coordinators: ShardingDDLCoordinatorService; criticalSections: CollectionCriticalSections };
  // The recipients of reshardings running here (src/resharding), a primary-only service.
  reshardingRecipients: ReshardingRecipientService;
  commands: CommandTable<ShardServices>;
}

// A config server's: the authoritative catalog's manager and the balancer.
export interface ConfigServerServices extends MongodServices {
  role: 'config';
  catalogManager: ShardingCatalogManager;
  balancer: Balancer;
  // reshardCollection's coordinators (src/resharding).
  resharding: ReshardingCoordinatorService;
  commands: CommandTable<ConfigServerServices>;
}

// For a command of both roles that reads a shard's part when it runs on one.
export function isShardServices(node: MongodServices): node is ShardServices {
  return node.role === 'shard';
}

export function isConfigServerServices(node: MongodServices): node is ConfigServerServices {
  return node.role === 'config';
}

export type CommandTable<S> = ReadonlyMap<string, CommandDefinition<S>>;

// What a command runs with: by default the services every node has; a command of one role only,
// registered only in that role's table, names that role's services, and a command the simulator
// runs names only what it reads.
export interface CommandContext<S = MongodServices> {
  node: S;
  conn: ConnectionInfo;
  db: string;
}

export interface CommandDefinition<S = MongodServices> {
  // The canonical name first, then accepted aliases (e.g. isMaster, ismaster).
  names: readonly string[];
  help?: string;
  adminOnly?: boolean;
  testOnly?: boolean;
  // The first field names a whole namespace (dataSize: "db.coll"), not a collection of `$db`.
  wholeNamespace?: boolean;
  // Takes a txnNumber outside a transaction as a retryable write, beside insert, update, delete
  // and findAndModify: the internal commands a DDL coordinator sends under its session (MongoDB's
  // retryable write commands list names them too).
  retryableWrite?: boolean;
  run: (ctx: CommandContext<S>, cmd: Doc) => Doc | Promise<Doc>;
}
