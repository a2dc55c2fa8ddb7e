import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import {
  allShards, blockCrud, configCollection, criticalSectionReason, dropOnParticipants, onConfig, splitNs, stopMigrations, unblockCrud,
  type DDLCoordinatorEnv, type ParticipantShard,
} from './sharding_ddl_util.js';

// MongoDB's DropCollectionCoordinator, on the database's primary shard:
//   kFreezeCollection       note the collection's UUID (if sharded) and the shards; migrations stop
//   kEnterCriticalSection   every shard blocks reads and writes of the namespace (persisted there)
//   kDropCollection         the config server removes config.collections, its chunks and zones in
//                           one commit; every shard drops its copy, range deletion tasks, metadata
//   kReleaseCriticalSection every shard unblocks; held requests find the collection gone
// Every shard takes part, not only the owners of chunks: a collection may exist unsharded on any.
const PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'] as const;

interface DropCollectionFacts {
  shards: ParticipantShard[];
  collectionUUID: unknown;
}

export function dropCollectionCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    const reason = criticalSectionReason('dropCollection', ns);
    const facts = (d: CoordinatorDocument): DropCollectionFacts => ({ shards: d.shards as ParticipantShard[], collectionUUID: d.collectionUUID });
    return {
      desc: 'DropCollectionCoordinator',
      plan: { phases: PHASES },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kFreezeCollection': {
            const entry = await configCollection(env, ns);
            save({ shards: await allShards(env), collectionUUID: entry?.uuid ?? null });
            if (entry !== undefined) await stopMigrations(env, ns);
            return;
          }
          case 'kEnterCriticalSection':
            return blockCrud(env, facts(d).shards, ns, reason);
          case 'kDropCollection': {
            const { shards, collectionUUID } = facts(d);
            await onConfig(env, { _configsvrCommitDropCollection: ns, ...(collectionUUID === null ? {} : { collectionUUID }) });
            return dropOnParticipants(env, shards, ns);
          }
          case 'kReleaseCriticalSection':
            return unblockCrud(env, facts(d).shards, ns, reason);
        }
      },
      result: (): Doc => ({ ns }),
    };
  };
}
