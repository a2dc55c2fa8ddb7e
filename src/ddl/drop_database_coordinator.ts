import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { fetchAll } from '../wire/remote_cursor.js';
import {
  allShards, blockCrud, configHostOf, criticalSectionReason, dropOnParticipants, onConfig, onShards, stopMigrations, unblockCrud,
  type DDLCoordinatorEnv, type ParticipantShard,
} from './sharding_ddl_util.js';

// MongoDB's DropDatabaseCoordinator, on the database's primary shard, in one phase that runs again
// whole after a crash (each of its steps is idempotent; the sharded collection being dropped is
// noted in the state document first, as MongoDB notes its collInfo):
//   kDrop   each sharded collection of the database as the drop coordinator drops it (migrations
//           stopped, every shard blocked, metadata removed in one commit, dropped everywhere,
//           unblocked); then every shard drops what is left of the database; then the config
//           server removes the database's entry, and every shard forgets its version.
const PHASES = ['kDrop'] as const;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

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
        const shards = await allShards(env);
        // A collection whose drop a crash interrupted may be gone from the catalog already, its
        // critical sections still held: the one noted is finished first.
        if (d.dropping !== undefined && d.dropping !== null) await dropShardedCollection(env, shards, d.dropping as Doc);
        const sharded = await fetchAll(env.client, configHostOf(env), 'config', { find: 'collections', filter: { _id: { $regex: `^${escapeRegex(db)}\\.` } } });
        for (const entry of sharded) {
          save({ dropping: { _id: entry._id, uuid: entry.uuid } });
          await dropShardedCollection(env, shards, entry);
        }
        save({ dropping: null });
        await onShards(env, shards, db, { _shardsvrDropDatabaseParticipant: 1 });
        await onConfig(env, { _configsvrCommitDropDatabase: db });
        // A shard that misses it refreshes on its next versioned request of the database.
        await Promise.all(shards.map((s) => env.client.command(s.host, 'admin', { _flushDatabaseCacheUpdates: db }).catch(() => undefined)));
      },
      result: (): Doc => ({ dropped: db }),
    };
  };
}
