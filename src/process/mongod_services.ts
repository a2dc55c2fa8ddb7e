import type { MongodServices, NodeOptions } from '../mongod_commands/command.js';
import { CursorManager } from '../command_layer/cursor_manager.js';
import { CappedInsertNotifier } from '../mongod_commands/capped_insert_notifier.js';
import { FailPoints, hangIfFailPointEnabled } from '../base/fail_points.js';
import { LogicalSessionCache } from '../sessions/logical_session_cache.js';
import { SessionKiller } from '../sessions/session_killer.js';
import { SessionCatalog } from '../sessions/session_catalog.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { ShardingState } from '../shard/sharding_state.js';
import { ShardMetadata } from '../shard/shard_metadata.js';
import { documentKeyOf } from '../catalog/document_key.js';
import { ShardingOpObserver } from '../shard/sharding_op_observer.js';
import { RemoteConfigReader } from '../shard/remote_config_reader.js';
import { OngoingQueries } from '../shard/ongoing_queries.js';
import { ActiveMigrationsRegistry } from '../migration/active_migrations_registry.js';
import { CriticalSection } from '../shard/critical_section.js';
import { RangeDeleterService } from '../migration/range_deleter_service.js';
import { UserLoadMeter } from '../migration/user_load_meter.js';
import { TtlMonitor } from '../ttl/ttl_monitor.js';
import { DEFAULT_TTL_LIMITS } from '../ttl/ttl_policy.js';
import { ttlDeletionScopes } from '../ttl/ttl_deletion_scope.js';
import { TransactionParticipants } from '../sessions/transaction_participant.js';
import { TransactionCoordinatorService } from '../sessions/transaction_coordinator_service.js';
import { SessionKillerMatcher } from '../sessions/kill_sessions.js';
import type { MongodPorts } from './mongod_ports.js';
import { ReplicationCoordinator } from '../replication/replication_coordinator.js';
import { localReplStore } from '../replication/repl_store.js';
import { ReplicationWaiters } from '../replication/replication_waiters.js';
import { isSelfHost } from './self_host.js';
import type { PrimaryOnlyServiceRegistry } from './primary_only_services.js';

// The services every node has, before its role adds its own and its command table.
export type NodeCore = Omit<MongodServices, 'role' | 'commands'>;

// Built from the node's ports, the same for a shard and a config server; the role's root adds its
// parts to this object, which the components built here keep a reference to. A member's state
// changes start and stop the primary-only services of `primaryOnly`.
export function nodeCore(options: NodeOptions, ports: MongodPorts, primaryOnly: PrimaryOnlyServiceRegistry): NodeCore {
  const { storage, network: client, clock, wallClock, control: { logger, recentLog } } = ports;
  const local = new LocalCollections(storage);
  const shardingState = new ShardingState(local);
  const queries = new OngoingQueries();
  const cappedInserts = new CappedInsertNotifier(wallClock);
  storage.observers.push(cappedInserts);
  const counters = { connectionsCurrent: 0, connectionsTotal: 0, opcounters: { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 } };
  const metadata = new ShardMetadata(() => shardingState.shardName, () => {
    const host = shardingState.configHost;
    return host ? new RemoteConfigReader(client, host, () => hangIfFailPointEnabled(core, 'hangBeforeFilteringMetadataRefresh', wallClock)) : undefined;
  });
  storage.observers.push(new ShardingOpObserver(shardingState, metadata, () => core.replication?.isWritablePrimary() ?? true));
  const criticalSection = new CriticalSection(wallClock);
  const ttl = new TtlMonitor(storage, ttlDeletionScopes({ role: options.role, shardName: () => shardingState.shardName, criticalSection, metadata, logger }), logger, {
    sleepMs: options.parameters.ttlMonitorSleepSecs * 1000,
    limits: DEFAULT_TTL_LIMITS,
    clock: wallClock,
    // MongoDB's TTL monitor deletes on a primary only; a secondary's documents go with its entries.
    mayWrite: () => core.replication?.isWritablePrimary() ?? true,
  });
  const sessionCatalog = new SessionCatalog(storage, clock);
  const core: NodeCore = {
    options,
    storage,
    cursors: new CursorManager(wallClock),
    cappedInserts,
    logger,
    startedAt: new Date(wallClock.now()),
    counters,
    ttl,
    recentLog,
    failPoints: new FailPoints(),
    sessions: new LogicalSessionCache(),
    sessionKiller: new SessionKiller({
      cursors: (matcher) => {
        core.transactions.abortMatching(matcher);
        return core.cursors.killCursorsWithMatchingSessions(matcher);
      },
    }),
    sessionCatalog,
    transactions: new TransactionParticipants(storage, sessionCatalog, clock, wallClock, (lsid) => core.cursors.killCursorsWithMatchingSessions(new SessionKillerMatcher([{ lsid }])), options.parameters.transactionLifetimeLimitSeconds * 1000),
    transactionCoordinators: new TransactionCoordinatorService({ storage, local, client, logger, clock: wallClock, get failPoints() { return core.failPoints; }, get replicationWaits() { return core.replicationWaits; }, configHost: () => shardingState.configHost }),
    clock,
    wallClock,
    local,
    client,
    sharding: { state: shardingState, queries, metadata, criticalSection },
    migrations: {
      registry: new ActiveMigrationsRegistry(),
      rangeDeleter: new RangeDeleterService(storage, local, logger, {
        batchSize: Math.max(1, options.parameters.rangeDeleterBatchSize),
        batchDelayMs: options.parameters.rangeDeleterBatchDelayMS,
        orphanCleanupDelayMs: options.parameters.orphanCleanupDelaySecs * 1000,
      }, wallClock, queries),
      source: undefined,
      destination: undefined,
      loadMeter: new UserLoadMeter(counters.opcounters),
      clock: wallClock,
    },
  };
  if (options.replSet !== undefined) {
    core.replication = new ReplicationCoordinator({
      setName: options.replSet,
      store: localReplStore(local),
      network: client,
      clock: wallClock,
      clusterTime: clock,
      isSelf: (host) => isSelfHost(host, core.options),
      logger,
      storage,
      ...(options.oplogSizeMB === undefined ? {} : { oplogSizeMB: options.oplogSizeMB }),
      documentKey: (ns, doc) => documentKeyOf(metadata.ownership(ns)?.pattern, doc),
      // The applier wrote the session records a retry on this new primary must find.
      onWritablePrimary: () => sessionCatalog.forgetAll(),
      onStateChanged: (writablePrimary, term) => primaryOnly.memberStateChanged(writablePrimary, term),
      onDataRolledBack: () => sessionCatalog.forgetAll(),
      dbpath: options.dbpath,
      local,
      failPoints: core.failPoints,
    });
    core.replicationWaits = new ReplicationWaiters(core.replication, wallClock);
  }
  return core;
}
