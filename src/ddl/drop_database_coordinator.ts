import { valuesEqual } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { fetchAll } from '../wire/remote_cursor.js';
import {
  allShards, blockCrud, configHostOf, criticalSectionReason, dropOnParticipants, onConfig, onShards, shardedCollectionsOf, stopMigrations, unblockCrud,
  type DDLCoordinatorEnv, type ParticipantShard,
} from './sharding_ddl_util.js';

// MongoDB's DropDatabaseCoordinator, on the database's primary shard, in one phase that runs again
// whole after a crash (each of its steps is idempotent; the sharded collection being dropped is
// noted in the state document first, as MongoDB notes its collInfo):
//   kDrop   the primary blocks the database's versioned requests (its database critical section,
//           persisted); each sharded collection of the database as the drop coordinator drops it
//           (migrations stopped, every shard blocked, metadata removed in one commit, dropped
//           everywhere, unblocked); then every shard drops what is left of the database; then the
//           config server removes the database's entry, every shard forgets its version, and the
//           primary, having reloaded it, unblocks: the requests it held answer StaleDbVersion.
// Without the critical section a routed insert at the database's old version, accepted by the
// primary after its drop and before it forgot the version, created its collection again on a
// shard that was no longer the primary once the database was created anew (MisplacedCollection).
const PHASES = ['kDrop'] as const;

// The reason the primary holds its database critical section with.
export const DROP_DATABASE_CRITICAL_SECTION_REASON = 'dropDatabase';

async function dropShardedCollection(env: DDLCoordinatorEnv, shards: readonly ParticipantShard[], entry: Doc): Promise<void> {
  const ns = String(entry._id);
  const reason = criticalSectionReason('dropDatabase', ns);
  await stopMigrations(env, ns);
  await blockCrud(env, shards, ns, reason);
  await onConfig(env, { _configsvrCommitDropCollection: ns, collectionUUID: entry.uuid });
  await dropOnParticipants(env, shards, ns);
  await unblockCrud(env, shards, ns, reason);
}

export function dropDatabaseCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const db = doc._id.namespace;
    return {
      desc: 'DropDatabaseCoordinator',
      plan: { phases: PHASES },
      locks: { db: db.toLowerCase() },
      async runPhase(_phase, d, save) {
        env.primary.blockDatabase(db, DROP_DATABASE_CRITICAL_SECTION_REASON);
        const shards = await allShards(env);
        // Run again after its commit, the phase must not drop a database created anew since (by
        // the config server, whose createDatabase this shard's locks do not hold back): the entry
        // it started on, by its UUID, is gone.
        const [entry] = await fetchAll(env.client, configHostOf(env), 'config', { find: 'databases', filter: { _id: db } });
        const startedOn = (entry?.version as Doc | undefined)?.uuid ?? null;
        if (d.databaseUUID === undefined) save({ databaseUUID: startedOn });
        const committed = d.databaseUUID !== undefined && d.databaseUUID !== null && (startedOn === null || !valuesEqual(startedOn, d.databaseUUID));
        if (!committed) {
          // A collection whose drop a crash interrupted may be gone from the catalog already, its
          // critical sections still held: the one noted is finished first.
          if (d.dropping !== undefined && d.dropping !== null) await dropShardedCollection(env, shards, d.dropping as Doc);
          const sharded = await shardedCollectionsOf(env, db);
          for (const coll of sharded) {
            save({ dropping: { _id: coll._id, uuid: coll.uuid } });
            await dropShardedCollection(env, shards, coll);
          }
          save({ dropping: null });
          await onShards(env, shards, db, { _shardsvrDropDatabaseParticipant: 1 });
          await onConfig(env, { _configsvrCommitDropDatabase: db });
        }
        // A shard that misses it refreshes on its next versioned request of the database.
        await Promise.all(shards.map((s) => env.client.command(s.host, 'admin', { _flushDatabaseCacheUpdates: db }).catch(() => undefined)));
        await env.primary.unblockDatabase(db, DROP_DATABASE_CRITICAL_SECTION_REASON);
      },
      result: (): Doc => ({ dropped: db }),
    };
  };
}
