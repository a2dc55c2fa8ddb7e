import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { allShards, configCollection, criticalSectionReason, onConfig, onParticipant, splitNs, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

// MongoDB's CreateCollectionCoordinator (shardCollection), on the database's primary shard:
//   kCheckPreconditions                     a collection sharded already answers its result when
//                                           the key and uniqueness are the same, AlreadyInitialized
//                                           when not
//   kEnterWriteCriticalSectionOnCoordinator the primary blocks writes to the namespace (persisted),
//                                           so that what the commit decides on (empty or not, its
//                                           indexes) holds until the routing table is in place
//   kCreateCollectionOnCoordinator          the primary creates the collection if it has none
//   kCommitOnShardingCatalog                the config server checks the shard key index (creating
//                                           it on an empty collection), creates the collection
//                                           with the primary's UUID on the shards given chunks
//                                           (_shardsvrCreateCollectionParticipant), and writes
//                                           config.collections and config.chunks in one commit
//   kExitCriticalSection                    the primary unblocks; held writes refresh and route by
//                                           the new routing table
// Up to the commit an error that is not retriable ends the operation (the config server checks the
// request before it writes anything); the critical section is released first.
// Each phase runs again after a crash: the collection is created only if missing, the config
// server's commit finds the collection sharded with the same UUID and key and changes nothing.
const PHASES = [
  'kCheckPreconditions', 'kEnterWriteCriticalSectionOnCoordinator', 'kCreateCollectionOnCoordinator', 'kCommitOnShardingCatalog', 'kExitCriticalSection',
] as const;

export function createCollectionCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    const { db, coll } = splitNs(ns);
    const { shardKey, unique, numInitialChunks, presplitHashedZones } = doc.request as {
      shardKey: Doc; unique: boolean; numInitialChunks?: number; presplitHashedZones: boolean;
    };
    const reason = criticalSectionReason('createCollection', ns);
    const sharded = (d: CoordinatorDocument): boolean => d.result !== undefined && d.result !== null;
    // This shard as config.shards names it, the host the other coordinators' requests reach it by.
    const selfHost = async (): Promise<string> => {
      const self = (await allShards(env)).find((s) => s._id === selfShard());
      if (self === undefined) throw new MongoError(ErrorCodes.ShardNotFound, 'this shard is not in config.shards');
      return self.host;
    };
    const blockOnSelf = async (blockType: 'Writes' | 'Unblock'): Promise<void> => {
      await onParticipant(env, await selfHost(), db, { _shardsvrParticipantBlock: coll, blockType, reason });
    };
    return {
      desc: 'CreateCollectionCoordinator',
      // The config server refuses a shard key it cannot index, a capped collection or a zone it
      // contradicts before its commit writes anything: the critical section is released and the
      // error answered.
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions', lastAbortablePhase: 'kCommitOnShardingCatalog' },
      locks: { db: db.toLowerCase(), collections: [ns] },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kCheckPreconditions': {
            const existing = await configCollection(env, ns);
            if (existing === undefined) return;
            if (compareValues(existing.key, shardKey) !== 0 || (existing.unique === true) !== unique) {
              throw new MongoError(ErrorCodes.AlreadyInitialized, `sharding already enabled for collection ${ns}`);
            }
            save({ result: { collectionsharded: ns, collectionUUID: existing.uuid } });
            return;
          }
          case 'kEnterWriteCriticalSectionOnCoordinator':
            if (!sharded(d)) await blockOnSelf('Writes');
            return;
          case 'kCreateCollectionOnCoordinator': {
            if (sharded(d)) return;
            const host = await selfHost();
            const [info] = await fetchAll(env.client, host, db, { listCollections: 1, filter: { name: coll } });
            if (info?.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `${ns} is a view`);
            if (info === undefined) checkOk(await env.client.command(host, db, { create: coll }));
            return;
          }
          case 'kCommitOnShardingCatalog': {
            if (sharded(d)) return;
            const reply = await onConfig(env, {
              _configsvrShardCollection: ns, key: shardKey, unique, presplitHashedZones,
              ...(numInitialChunks === undefined ? {} : { numInitialChunks }),
            });
            save({ result: { collectionsharded: ns, collectionUUID: reply.collectionUUID } });
            return;
          }
          case 'kExitCriticalSection':
            await blockOnSelf('Unblock');
            return;
        }
      },
      result: (d): Doc => d.result as Doc,
      async cleanupOnAbort(d) {
        if (d.phase !== 'kCheckPreconditions') await blockOnSelf('Unblock');
      },
    };
  };
}
