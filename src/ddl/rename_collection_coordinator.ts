import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import {
  allShards, blockCrud, configCollection, configHostOf, criticalSectionReason, onConfig, onParticipant, splitNs, stopMigrations, unblockCrud,
  type DDLCoordinatorEnv, type ParticipantShard,
} from './sharding_ddl_util.js';

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

async function localUuid(env: DDLCoordinatorEnv, host: string, ns: string): Promise<unknown> {
  const { db, coll } = splitNs(ns);
  const [info] = await fetchAll(env.client, host, db, { listCollections: 1, filter: { name: coll } });
  if (info === undefined) return undefined;
  if (info.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `cannot rename view: ${ns}`);
  return (info.info as Doc | undefined)?.uuid;
}

// MongoDB 7.0 renames across databases only an unsharded collection whose database has the same
// primary shard as the target's (this one, whose locks on both databases hold a movePrimary of
// either back); docshard keeps a sharded target out too, as the config server's re-keying is per
// database.
async function checkCrossDatabase(env: DDLCoordinatorEnv, self: string, toDb: string, source: Doc | undefined, target: Doc | undefined): Promise<void> {
  if (source !== undefined) throw new MongoError(ErrorCodes.CommandFailed, 'Source and destination collections must be on the same database because the source collection is sharded.');
  if (target !== undefined) throw new MongoError(ErrorCodes.CommandFailed, 'Cannot rename an unsharded collection over a sharded collection of another database.');
  const [database] = await fetchAll(env.client, configHostOf(env), 'config', { find: 'databases', filter: { _id: toDb } });
  if (database === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Database ${toDb} does not exist`);
  if (database.primary !== self) throw new MongoError(13137, 'Source and destination collections must be on same shard');
}

export function renameCollectionCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const from = doc._id.namespace;
    const to = String(doc.request.to);
    const dropTarget = doc.request.dropTarget === true;
    const facts = (d: CoordinatorDocument): RenameFacts => d.facts as RenameFacts;
    const reasonFrom = criticalSectionReason('renameCollection', from);
    const fromDb = splitNs(from).db;
    const toDb = splitNs(to).db;
    const crossDatabase = fromDb !== toDb;
    return {
      desc: 'RenameCollectionCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      // Both collections in name order, so that two renames crosswise wait rather than deadlock;
      // into another database, both databases first (beyond MongoDB, which locks the source's only).
      locks: { db: fromDb.toLowerCase(), ...(crossDatabase ? { databases: [toDb.toLowerCase()] } : {}), collections: [from, to].sort() },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kCheckPreconditions': {
            if (from === to) throw new MongoError(ErrorCodes.IllegalOperation, "Can't rename a collection to itself");
            const shards = await allShards(env);
            const primary = shards.find((s) => s._id === selfShard());
            if (primary === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `this shard is not in config.shards`);
            const [source, target] = await Promise.all([configCollection(env, from), configCollection(env, to)]);
            if (crossDatabase) await checkCrossDatabase(env, primary._id, toDb, source, target);
            const sourceUUID = source?.uuid ?? await localUuid(env, primary.host, from);
            if (sourceUUID === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `Source collection ${from} does not exist`);
            const targetUUID = target?.uuid ?? await localUuid(env, primary.host, to);
            if (targetUUID !== undefined && !dropTarget) throw new MongoError(ErrorCodes.NamespaceExists, 'target namespace exists');
            save({ facts: { shards, primary: primary._id, sourceUUID, sourceSharded: source !== undefined, targetUUID: targetUUID ?? null, targetSharded: target !== undefined } });
            return;
          }
          case 'kFreezeMigrations': {
            const f = facts(d);
            if (f.sourceSharded) await stopMigrations(env, from);
            if (f.targetSharded) await stopMigrations(env, to);
            return;
          }
          case 'kBlockCrudAndRename': {
            const { shards, primary, sourceUUID, sourceSharded } = facts(d);
            await blockCrud(env, shards, from, reasonFrom);
            await blockCrud(env, shards, to, reasonFrom);
            const { db, coll } = splitNs(from);
            // An unsharded source is the primary's alone: a copy of the same UUID elsewhere is what
            // a movePrimary's donor keeps until its clean-up drops it, and is not renamed.
            await Promise.all(shards.map((s) => onParticipant(env, s.host, db, {
              _shardsvrRenameCollectionParticipant: coll, to, sourceUUID, renameSource: sourceSharded || s._id === primary,
            })));
            return;
          }
          case 'kRenameMetadata': {
            const f = facts(d);
            await onConfig(env, {
              _configsvrRenameCollectionMetadata: from, to, ...(f.sourceSharded ? { sourceUUID: f.sourceUUID } : {}),
              ...(f.targetSharded ? { targetUUID: f.targetUUID } : {}),
            });
            return;
          }
          case 'kUnblockCrud': {
            const { shards } = facts(d);
            await unblockCrud(env, shards, from, reasonFrom);
            await unblockCrud(env, shards, to, reasonFrom);
            return;
          }
        }
      },
      result: (): Doc => ({}),
    };
  };
}
