import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import {
  blockCrud, dropOnParticipants, readCollectionEntry, readShards, sendToConfig, shardsFrom, START, stopMigrations, unblockCrud,
  type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { criticalSectionReason, splitNs, type DDLCoordinatorEnv, type ParticipantShard } from './sharding_ddl_util.js';

// MongoDB's DropCollectionCoordinator, on the database's primary shard:
//   kFreezeCollection       note the collection's UUID (if sharded) and the shards; migrations stop
//   kEnterCriticalSection   every shard blocks reads and writes of the namespace (persisted there)
//   kDropCollection         the config server removes config.collections, its chunks and zones in
//                           one commit; every shard drops its copy, range deletion tasks, metadata
//   kReleaseCriticalSection every shard unblocks; held requests find the collection gone
// Every shard takes part, not only the owners of chunks: a collection may exist unsharded on any.
const PHASES = ['kFreezeCollection', 'kEnterCriticalSection', 'kDropCollection', 'kReleaseCriticalSection'] as const;

export const dropCollectionStep: PhaseStepFn = ({ phase, doc, stage }, replies): PhaseStep => {
  const ns = doc._id.namespace;
  const reason = criticalSectionReason('dropCollection', ns);
  const shards = doc.shards as ParticipantShard[];
  switch (phase) {
    case 'kFreezeCollection': {
      if (stage === START) return { effects: [readCollectionEntry(ns), readShards()], next: 'read' };
      const [entry] = replies[0]!;
      return { save: { shards: shardsFrom(replies[1]!), collectionUUID: entry?.uuid ?? null }, effects: entry === undefined ? [] : [stopMigrations(ns)] };
    }
    case 'kEnterCriticalSection':
      return { effects: [blockCrud(shards, ns, reason)] };
    case 'kDropCollection': {
      const { collectionUUID } = doc;
      return {
        effects: [sendToConfig({ _configsvrCommitDropCollection: ns, ...(collectionUUID === null ? {} : { collectionUUID }) }), dropOnParticipants(shards, ns)],
      };
    }
    case 'kReleaseCriticalSection':
      return { effects: [unblockCrud(shards, ns, reason)] };
    default:
      throw new Error(`DropCollectionCoordinator has no phase ${phase}`);
  }
};

export function dropCollectionCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    return {
      desc: 'DropCollectionCoordinator',
      plan: { phases: PHASES },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      runPhase: (phase, d, save) => drivePhase(env, dropCollectionStep, phase, d, save, () => undefined),
      result: (): Doc => ({ ns }),
    };
  };
}
