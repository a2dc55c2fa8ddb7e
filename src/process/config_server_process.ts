import { setProcessOperationClock } from '../base/operation_clock.js';
import type { ConfigServerServices, NodeOptions } from '../mongod_commands/command.js';
import { buildCommandTable, dispatchCommand } from '../mongod_commands/dispatcher.js';
import { configServerCommandSet } from '../mongod_commands/registry.js';
import { ShardingCatalogManager } from '../configsvr/sharding_catalog_manager.js';
import { Balancer } from '../configsvr/balancer.js';
import { chunkHistoryWindowSecs } from '../catalog_decisions/commit_chunk_migration.js';
import { DDLLockManager } from '../ddl/ddl_lock_manager.js';
import type { MongodPorts } from './mongod_ports.js';
import { nodeCore } from './mongod_services.js';
import { configServerIdentity } from './config_server_set.js';
import { serveMongod, type RunningNode } from './mongod_server.js';
import { PrimaryOnlyServiceRegistry } from './primary_only_services.js';
import { balancerService, reshardingCoordinatorService, shardHostsService } from './node_primary_services.js';
import { ShardHostsUpdater } from '../configsvr/shard_hosts_updater.js';
import { ReshardingCoordinatorService } from '../resharding/resharding_coordinator.js';
import type { DatabaseType } from '../catalog/type_chunk.js';
import type { Doc } from '../bson/values.js';

// The composition root of a config server: every node's services, the config.* collections, the
// catalog manager and the balancer, and a config server's command table, built from the ports it
// is given. The balancer and the keeper of the shard sets' hosts in config.shards are primary-only
// services, registered once the port is open (its own address is known then).
export function startConfigServer(options: NodeOptions, ports: MongodPorts): Promise<RunningNode<ConfigServerServices>> {
  setProcessOperationClock(ports.wallClock);
  const primaryOnly = new PrimaryOnlyServiceRegistry(ports.control.logger);
  const core = nodeCore(options, ports, primaryOnly);
  const { local, client, clock, wallClock } = core;
  // Its own address as the shards and the changelog name it, known once the port is bound.
  const selfHost = (): string => `${services.options.bindIp}:${services.options.port}`;
  const catalogManager = new ShardingCatalogManager(local, client, selfHost, configServerIdentity(core, selfHost), core.logger, new DDLLockManager(wallClock, core.failPoints), clock, wallClock, chunkHistoryWindowSecs(options.parameters));
  const p = options.parameters;
  const balancer = new Balancer(catalogManager, local, client, selfHost, {
    idleRoundIntervalMs: p.balancerIdleRoundIntervalMillis,
    migrationsThrottlingMs: p.balancerMigrationsThrottlingMs,
    autoMergerIntervalMs: p.autoMergerIntervalSecs * 1000,
    minChunkAgeForMergeMs: p.minSnapshotHistoryWindowInSeconds * 1000,
  }, core.logger, wallClock);
  const { monitors } = ports;
  const shardHosts = monitors && new ShardHostsUpdater(local, (host, onConfirmed) => monitors.monitorFor(host).onConfirmedSet(onConfirmed), wallClock, core.logger);
  const resharding = new ReshardingCoordinatorService({
    local, client, logger: core.logger, clock: wallClock, failPoints: core.failPoints, criticalSectionTimeoutMs: options.parameters.reshardingCriticalSectionTimeoutMillis,
    catalog: {
      collection: (ns) => catalogManager.collection(ns),
      chunks: (uuid) => catalogManager.chunks(uuid),
      shards: () => catalogManager.shards(),
      primaryShard: (db) => (local.findOne('config.databases', { _id: db }) as unknown as DatabaseType | undefined)?.primary,
      zones: (ns) => local.find('config.tags', { ns }).map((t) => ({ tag: String(t.tag), min: t.min as Doc, max: t.max as Doc })),
      shardDataSizes: () => catalogManager.shardDataSizes(),
      now: () => catalogManager.now(),
      setAllowMigrations: (ns, allow) => catalogManager.migrations.setAllowMigrations(ns, allow),
      commitReshardCollection: (commit) => catalogManager.commitReshardCollection(commit),
    },
  });
  const services: ConfigServerServices = Object.assign(core, { role: 'config' as const, catalogManager, balancer, resharding, commands: buildCommandTable(configServerCommandSet) });
  return serveMongod(services, ports, {
    dispatch: (conn, cmd) => dispatchCommand(services, conn, cmd),
    beforeListen() {},
    afterListen() {
      primaryOnly.register(balancerService(balancer));
      primaryOnly.register(reshardingCoordinatorService(resharding));
      if (shardHosts !== undefined) primaryOnly.register(shardHostsService(shardHosts));
    },
    primaryOnly,
  });
}
