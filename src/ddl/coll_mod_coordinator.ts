import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import {
  readCollectionEntry, readConfig, readShards, sendToConfig, sendToShards, shardsFrom, START, stopMigrations, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { splitNs, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

// MongoDB's CollModCoordinator, on the database's primary shard, for a collection sharded or not:
//   kCheckPreconditions  the primary applies the modification to its copy
//                        (_shardsvrCollModParticipant): a request it refuses is answered and
//                        nothing changed; note whether the collection is sharded
//   kFreezeMigrations    a sharded collection's migrations stop, so that no chunk reaches a shard
//                        between the moment its owners are read and the moment they are modified
//   kUpdateShards        every other shard owning chunks applies it, and migrations resume (unless
//                        they were stopped before)
// Applying a modification twice leaves the collection as once, so each phase runs again after a
// crash as it is.
const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kUpdateShards'] as const;

interface CollModFacts {
  sharded: boolean;
  // Stopped by someone else before (setAllowMigrations): left stopped.
  migrationsStopped: boolean;
  collectionUUID: unknown;
  // The primary's reply: what an index modification changed, the same on every shard.
  result: Doc;
}

export const collModStep: PhaseStepFn = ({ phase, doc, stage, memo, self }, replies): PhaseStep => {
  const ns = doc._id.namespace;
  const { db, coll } = splitNs(ns);
  const participant = { _shardsvrCollModParticipant: coll, collModRequest: doc.request.collModRequest as Doc };
  const facts = doc.facts as CollModFacts;
  switch (phase) {
    case 'kCheckPreconditions':
      switch (stage) {
        case START:
          return { effects: [readShards(), readCollectionEntry(ns)], next: 'apply' };
        case 'apply': {
          const primary = shardsFrom(replies[0]!).find((s) => s._id === self);
          if (primary === undefined) throw new MongoError(ErrorCodes.ShardNotFound, 'this shard is not in config.shards');
          return { effects: [sendToShards([primary], db, participant)], next: 'applied', memo: { entry: replies[1]![0] ?? null } };
        }
        default: {
          const entry = memo.entry as Doc | null;
          const { ok: _ok, ...result } = replies[0]![0]!;
          return {
            save: { facts: { sharded: entry !== null, migrationsStopped: entry?.permitMigrations === false, collectionUUID: entry?.uuid ?? null, result } },
            effects: [],
          };
        }
      }
    case 'kFreezeMigrations':
      return { effects: facts.sharded ? [stopMigrations(ns)] : [] };
    case 'kUpdateShards': {
      if (!facts.sharded) return { effects: [] };
      if (stage === START) return { effects: [readConfig('chunks', { filter: { uuid: facts.collectionUUID }, projection: { shard: 1 } }), readShards()], next: 'update' };
      const owners = new Set(replies[0]!.map((c) => String(c.shard)));
      owners.delete(self ?? '');
      const shards = shardsFrom(replies[1]!).filter((s) => owners.has(s._id));
      const resume = facts.migrationsStopped ? [] : [sendToConfig({ _configsvrSetAllowMigrations: ns, allowMigrations: true })];
      return { effects: [sendToShards(shards, db, participant), ...resume] };
    }
    default:
      throw new Error(`CollModCoordinator has no phase ${phase}`);
  }
};

export function collModCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    return {
      desc: 'CollModCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      runPhase: (phase, d, save) => drivePhase(env, collModStep, phase, d, save, selfShard),
      result: (d): Doc => (d.facts as CollModFacts).result,
    };
  };
}
