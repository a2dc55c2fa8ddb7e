import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { checkRefineShardKey, isAlreadyRefined } from '../catalog_decisions/refine_shard_key.js';
import { fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { allShards, configCollection, configHostOf, onConfig, splitNs, stopMigrations, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

// MongoDB 7.0's RefineCollectionShardKeyCoordinator, on the database's primary shard, without a
// critical section (routers and shards learn the new key through the versioning protocol):
//   kCheckPreconditions  the collection is sharded, the new key extends its key, and every shard
//                        owning chunks has an index that starts with it (the only phase that may
//                        answer an error; a key already refined answers ok and changes nothing)
//   kFreezeMigrations    migrations stop, so that no chunk moves between the check and the commit
//   kCommit              the config server sets the key with a new epoch and timestamp (same UUID),
//                        pads chunk and zone bounds and resumes migrations, in one commit; the
//                        shards are told to refresh, best effort
const PHASES = ['kCheckPreconditions', 'kFreezeMigrations', 'kCommit'] as const;

interface RefineFacts {
  alreadyRefined: boolean;
  collectionUUID: unknown;
}

export function refineCollectionShardKeyCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    const { db, coll } = splitNs(ns);
    const newKey = doc.request.newShardKey as Doc;
    const facts = (d: CoordinatorDocument): RefineFacts => d.facts as RefineFacts;
    return {
      desc: 'RefineCollectionShardKeyCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      locks: { db: db.toLowerCase(), collections: [ns] },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kCheckPreconditions': {
            const entry = await configCollection(env, ns);
            if (entry === undefined) throw new MongoError(ErrorCodes.NamespaceNotSharded, `Can't execute refineCollectionShardKey on unsharded collection ${ns}`);
            const alreadyRefined = isAlreadyRefined(entry.key as Doc, newKey);
            if (!alreadyRefined) {
              const chunks = await fetchAll(env.client, configHostOf(env), 'config', { find: 'chunks', filter: { uuid: entry.uuid }, projection: { shard: 1 } });
              const owners = new Set(chunks.map((c) => String(c.shard)));
              for (const shard of (await allShards(env)).filter((s) => owners.has(s._id))) {
                const indexes = await fetchAll(env.client, shard.host, db, { listIndexes: coll });
                checkRefineShardKey({ ns, currentKey: entry.key as Doc, newKey, unique: entry.unique === true, indexes });
              }
            }
            save({ facts: { alreadyRefined, collectionUUID: entry.uuid } });
            return;
          }
          case 'kFreezeMigrations':
            if (!facts(d).alreadyRefined) await stopMigrations(env, ns);
            return;
          case 'kCommit': {
            if (facts(d).alreadyRefined) return;
            await onConfig(env, { _configsvrCommitRefineCollectionShardKey: ns, key: newKey, collectionUUID: facts(d).collectionUUID });
            // Each shard refreshes on its next versioned request anyway.
            await Promise.all((await allShards(env)).map((s) => env.client.command(s.host, 'admin', { _flushRoutingTableCacheUpdates: ns }).catch(() => undefined)));
            return;
          }
        }
      },
      result: (): Doc => ({}),
    };
  };
}
