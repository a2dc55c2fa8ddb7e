import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import {
  blockCrud, host, read, readCollectionEntry, readConfig, readShards, sendToConfig, shardsFrom, START, stopMigrations, unblockCrud,
  type DDLPhaseEffect, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { criticalSectionReason, splitNs, type DDLCoordinatorEnv, type ParticipantShard } from './sharding_ddl_util.js';

// MongoDB's RenameCollectionCoordinator, on the database's primary shard, for a collection sharded
// or not within its database, or an unsharded one into another database of the same primary:
//   kCheckPreconditions  the source exists, the target does not (or dropTarget); note the shards
//                        and both UUIDs (the only phase that may answer an error)
//   kFreezeMigrations    migrations of the source and of a sharded target stop
//   kBlockCrudAndRename  every shard blocks both namespaces, then renames its copy (every shard of a
//                        sharded source, the primary of an unsharded one) and drops a target of
//                        another UUID (_shardsvrRenameCollectionParticipant)
//   kRenameMetadata      the config server re-keys the source's entry under the target (same UUID,
//                        new epoch and timestamp) and drops a sharded target's, in one commit
//   kUnblockCrud         every shard unblocks both; held requests refresh and find the new name
const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kBlockCrudAndRename', 'kRenameMetadata', 'kUnblockCrud'] as const;

interface RenameFacts {
  shards: ParticipantShard[];
  primary: string;
  sourceUUID: unknown;
  sourceSharded: boolean;
  targetUUID: unknown;
  targetSharded: boolean;
}

// What the checks of kCheckPreconditions have learned so far.
interface Checked {
  shards: ParticipantShard[];
  primary: ParticipantShard;
  source: Doc | null;
  target: Doc | null;
}

function readLocal(primary: ParticipantShard, ns: string): DDLPhaseEffect {
  const { db, coll } = splitNs(ns);
  return read(host(primary), db, { listCollections: 1, filter: { name: coll } });
}

// The UUID of the primary's copy, as its listCollections answered.
function localUuid(listed: readonly Doc[], ns: string): unknown {
  const [info] = listed;
  if (info === undefined) return undefined;
  if (info.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `cannot rename view: ${ns}`);
  return (info.info as Doc | undefined)?.uuid;
}

// MongoDB 7.0 renames across databases only an unsharded collection whose database has the same
// primary shard as the target's (this one, whose locks on both databases hold a movePrimary of
// either back); docshard keeps a sharded target out too, as the config server's re-keying is per
// database.
function checkCrossDatabase({ source, target }: Checked): void {
  if (source !== null) throw new MongoError(ErrorCodes.CommandFailed, 'Source and destination collections must be on the same database because the source collection is sharded.');
  if (target !== null) throw new MongoError(ErrorCodes.CommandFailed, 'Cannot rename an unsharded collection over a sharded collection of another database.');
}

function checkTargetDatabase(toDb: string, database: Doc | undefined, self: string): void {
  if (database === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Database ${toDb} does not exist`);
  if (database.primary !== self) throw new MongoError(13137, 'Source and destination collections must be on same shard');
}

export const renameCollectionStep: PhaseStepFn = ({ phase, doc, stage, memo, self }, replies): PhaseStep => {
  const from = doc._id.namespace;
  const to = String(doc.request.to);
  const reasonFrom = criticalSectionReason('renameCollection', from);
  const toDb = splitNs(to).db;
  const crossDatabase = splitNs(from).db !== toDb;
  const facts = doc.facts as RenameFacts;
  const checked = memo as unknown as Checked;
  switch (phase) {
    case 'kCheckPreconditions':
      switch (stage) {
        case START:
          if (from === to) throw new MongoError(ErrorCodes.IllegalOperation, "Can't rename a collection to itself");
          return { effects: [readShards(), readCollectionEntry(from), readCollectionEntry(to)], next: 'entries' };
        case 'entries': {
          const shards = shardsFrom(replies[0]!);
          const primary = shards.find((s) => s._id === self);
          if (primary === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `this shard is not in config.shards`);
          const found: Checked = { shards, primary, source: replies[1]![0] ?? null, target: replies[2]![0] ?? null };
          if (!crossDatabase) return { effects: [readLocal(primary, from), readLocal(primary, to)], next: 'local', memo: { ...found } };
          checkCrossDatabase(found);
          return { effects: [readConfig('databases', { filter: { _id: toDb } })], next: 'database', memo: { ...found } };
        }
        case 'database':
          checkTargetDatabase(toDb, replies[0]![0], checked.primary._id);
          return { effects: [readLocal(checked.primary, from), readLocal(checked.primary, to)], next: 'local' };
        default: {
          const { shards, primary, source, target } = checked;
          const sourceUUID = source?.uuid ?? localUuid(replies[0]!, from);
          if (sourceUUID === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Source collection ${from} does not exist`);
          const targetUUID = target?.uuid ?? localUuid(replies[1]!, to);
          if (targetUUID !== undefined && doc.request.dropTarget !== true) throw new MongoError(ErrorCodes.NamespaceExists, 'target namespace exists');
          return {
            save: { facts: { shards, primary: primary._id, sourceUUID, sourceSharded: source !== null, targetUUID: targetUUID ?? null, targetSharded: target !== null } },
            effects: [],
          };
        }
      }
    case 'kFreezeMigrations':
      return { effects: [...(facts.sourceSharded ? [stopMigrations(from)] : []), ...(facts.targetSharded ? [stopMigrations(to)] : [])] };
    case 'kBlockCrudAndRename': {
      const { shards, primary, sourceUUID, sourceSharded } = facts;
      const { db, coll } = splitNs(from);
      // An unsharded source is the primary's alone: a copy of the same UUID elsewhere is what
      // a movePrimary's donor keeps until its clean-up drops it, and is not renamed.
      const rename: DDLPhaseEffect = {
        type: 'send',
        requests: shards.map((s) => ({ to: host(s), db, cmd: { _shardsvrRenameCollectionParticipant: coll, to, sourceUUID, renameSource: sourceSharded || s._id === primary } })),
      };
      return { effects: [blockCrud(shards, from, reasonFrom), blockCrud(shards, to, reasonFrom), rename] };
    }
    case 'kRenameMetadata':
      return {
        effects: [sendToConfig({
          _configsvrRenameCollectionMetadata: from, to, ...(facts.sourceSharded ? { sourceUUID: facts.sourceUUID } : {}),
          ...(facts.targetSharded ? { targetUUID: facts.targetUUID } : {}),
        })],
      };
    case 'kUnblockCrud':
      return { effects: [unblockCrud(facts.shards, from, reasonFrom), unblockCrud(facts.shards, to, reasonFrom)] };
    default:
      throw new Error(`RenameCollectionCoordinator has no phase ${phase}`);
  }
};

export function renameCollectionCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const from = doc._id.namespace;
    const to = String(doc.request.to);
    const fromDb = splitNs(from).db;
    const toDb = splitNs(to).db;
    return {
      desc: 'RenameCollectionCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      // Both collections in name order, so that two renames crosswise wait rather than deadlock;
      // into another database, both databases first (beyond MongoDB, which locks the source's only).
      locks: { db: fromDb.toLowerCase(), ...(fromDb !== toDb ? { databases: [toDb.toLowerCase()] } : {}), collections: [from, to].sort() },
      runPhase: (phase, d, save) => drivePhase(env, renameCollectionStep, phase, d, save, selfShard),
      result: (): Doc => ({}),
    };
  };
}
