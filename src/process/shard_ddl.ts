import type { ShardServices } from '../mongod_commands/command.js';
import type { NodeCore } from './mongod_services.js';
import { collModCoordinator } from '../ddl/coll_mod_coordinator.js';
import { createCollectionCoordinator } from '../ddl/create_collection_coordinator.js';
import { DDLLockManager } from '../ddl/ddl_lock_manager.js';
import { dropCollectionCoordinator } from '../ddl/drop_collection_coordinator.js';
import { dropDatabaseCoordinator } from '../ddl/drop_database_coordinator.js';
import { movePrimaryCoordinator } from '../ddl/move_primary_coordinator.js';
import { refineCollectionShardKeyCoordinator } from '../ddl/refine_collection_shard_key_coordinator.js';
import { reshardCollectionCoordinator } from '../ddl/reshard_collection_coordinator.js';
import { renameCollectionCoordinator } from '../ddl/rename_collection_coordinator.js';
import { ShardingDDLCoordinatorService } from '../ddl/sharding_ddl_coordinator_service.js';
import { performNoopRetryableWriteOnAllShardsAndConfigsvr, type DDLCoordinatorEnv } from '../ddl/sharding_ddl_util.js';
import { CollectionCriticalSections } from '../shard/collection_critical_section.js';
import { databaseCriticalSections } from '../shard/database_critical_section.js';

// A shard's DDL parts, and the restoring of the collection and database critical sections it held,
// which the shard runs before its port opens; the coordinators it was running start again from
// their state documents as a primary-only service.
export function shardDDL(node: NodeCore): { ddl: ShardServices['ddl']; restoreCriticalSections(): void } {
  const criticalSections = new CollectionCriticalSections(node.sharding.criticalSection, node.local);
  const databaseSections = databaseCriticalSections(node);
  const env: DDLCoordinatorEnv = {
    client: node.client,
    configHost: () => node.sharding.state.configHost,
    clock: node.wallClock,
    primary: {
      blockDatabaseWrites(db, reason) {
        databaseSections.enter(db, reason);
      },
      blockDatabase(db, reason) {
        databaseSections.enterBlockingReads(db, reason);
      },
      async unblockDatabase(db, reason) {
        await databaseSections.exitAfterRefresh(db, reason, node.sharding.metadata);
      },
    },
  };
  const coordinators = new ShardingDDLCoordinatorService(node.local, new DDLLockManager(node.wallClock, node.failPoints), node.failPoints, node.wallClock, node.logger, {
    collMod: collModCoordinator(env, () => node.sharding.state.shardName),
    createCollection: createCollectionCoordinator(env, () => node.sharding.state.shardName),
    dropCollection: dropCollectionCoordinator(env),
    dropDatabase: dropDatabaseCoordinator(env),
    movePrimary: movePrimaryCoordinator(env, () => node.sharding.state.shardName),
    renameCollection: renameCollectionCoordinator(env, () => node.sharding.state.shardName),
    refineCollectionShardKey: refineCollectionShardKeyCoordinator(env),
    reshardCollection: reshardCollectionCoordinator(env),
  }, async (db, version) => {
    const { metadata } = node.sharding;
    // Only the database's entry is read again: forgetting the database would also forget its
    // collections' filtering metadata, which nothing here changed.
    await metadata.refreshDatabase(db);
    await metadata.checkRequest(db, undefined, { databaseVersion: version });
  }, () => performNoopRetryableWriteOnAllShardsAndConfigsvr(env));
  return {
    ddl: { coordinators, criticalSections },
    restoreCriticalSections() {
      const restored = criticalSections.restore();
      if (restored.length > 0) node.logger.info({ c: 'SHARDING', namespaces: restored }, 'Restored DDL critical sections');
      const restoredDatabases = databaseSections.restore();
      if (restoredDatabases.length > 0) node.logger.info({ c: 'SHARDING', databases: restoredDatabases }, 'Restored database critical sections');
    },
  };
}
