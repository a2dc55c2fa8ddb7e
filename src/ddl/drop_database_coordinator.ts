import { valuesEqual } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import {
  blockCrud, dropOnParticipants, host, readConfig, readShardedCollectionsOf, readShards, sendToConfig, sendToShards, shardsFrom, START, stopMigrations,
  unblockCrud, type DDLPhaseEffect, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { criticalSectionReason, type DDLCoordinatorEnv, type ParticipantShard } from './sharding_ddl_util.js';

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

function dropShardedCollection(shards: readonly ParticipantShard[], entry: Doc): DDLPhaseEffect[] {
  const ns = String(entry._id);
  const reason = criticalSectionReason('dropDatabase', ns);
  return [
    stopMigrations(ns), blockCrud(shards, ns, reason), sendToConfig({ _configsvrCommitDropCollection: ns, collectionUUID: entry.uuid }),
    dropOnParticipants(shards, ns), unblockCrud(shards, ns, reason),
  ];
}

// A shard that misses the flush refreshes on its next versioned request of the database; the
// primary, having reloaded the version, lets the requests it held go.
function forgetAndUnblock(db: string, shards: readonly ParticipantShard[]): DDLPhaseEffect[] {
  return [
    { type: 'hint', requests: shards.map((s) => ({ to: host(s), db: 'admin', cmd: { _flushDatabaseCacheUpdates: db } })) },
    { type: 'unblockDatabase', db, reason: DROP_DATABASE_CRITICAL_SECTION_REASON },
  ];
}

// The sharded collection at `index` of those listed, each noted as `dropping` before its drop
// starts; after the last, the database itself.
function dropFrom(db: string, shards: ParticipantShard[], collections: readonly Doc[], index: number): PhaseStep {
  const coll = collections[index];
  if (coll === undefined) {
    return {
      save: { dropping: null },
      effects: [sendToShards(shards, db, { _shardsvrDropDatabaseParticipant: 1 }), sendToConfig({ _configsvrCommitDropDatabase: db }), ...forgetAndUnblock(db, shards)],
    };
  }
  return { save: { dropping: { _id: coll._id, uuid: coll.uuid } }, effects: dropShardedCollection(shards, coll), next: 'collection', memo: { index: index + 1 } };
}

export const dropDatabaseStep: PhaseStepFn = ({ doc, stage, memo }, replies): PhaseStep => {
  const db = doc._id.namespace;
  switch (stage) {
    case START:
      return { effects: [{ type: 'blockDatabase', db, reason: DROP_DATABASE_CRITICAL_SECTION_REASON }, readShards(), readConfig('databases', { filter: { _id: db } })], next: 'database' };
    case 'database': {
      const shards = shardsFrom(replies[1]!);
      const [entry] = replies[2]!;
      // Run again after its commit, the phase must not drop a database created anew since (by the
      // config server, whose createDatabase this shard's locks do not hold back): the entry it
      // started on, by its UUID, is gone.
      const startedOn = (entry?.version as Doc | undefined)?.uuid ?? null;
      const save = doc.databaseUUID === undefined ? { databaseUUID: startedOn } : undefined;
      const noted = doc.databaseUUID;
      const committed = noted !== undefined && noted !== null && (startedOn === null || !valuesEqual(startedOn, noted));
      if (committed) return { effects: forgetAndUnblock(db, shards) };
      // A collection whose drop a crash interrupted may be gone from the catalog already, its
      // critical sections still held: the one noted is finished first.
      const dropping = doc.dropping as Doc | null | undefined;
      const finish = dropping === undefined || dropping === null ? [] : dropShardedCollection(shards, dropping);
      return { ...(save === undefined ? {} : { save }), effects: [...finish, readShardedCollectionsOf(db)], next: 'collections', memo: { shards } };
    }
    case 'collections': {
      const collections = replies.at(-1)!;
      const first = dropFrom(db, memo.shards as ParticipantShard[], collections, 0);
      return { ...first, memo: { ...first.memo, collections } };
    }
    default:
      return dropFrom(db, memo.shards as ParticipantShard[], memo.collections as Doc[], memo.index as number);
  }
};

export function dropDatabaseCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const db = doc._id.namespace;
    return {
      desc: 'DropDatabaseCoordinator',
      plan: { phases: PHASES },
      locks: { db: db.toLowerCase() },
      runPhase: (phase, d, save) => drivePhase(env, dropDatabaseStep, phase, d, save, () => undefined),
      result: (): Doc => ({ dropped: db }),
    };
  };
}
