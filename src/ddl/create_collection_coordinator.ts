import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import { checkShardCollectionArgs, translateShardCollection, type InitialChunksLayout } from '../catalog_decisions/shard_collection.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import {
  configCollection, configHostOf, criticalSectionReason, onConfig, onShards, shardNamed, splitNs, type DDLCoordinatorEnv, type ParticipantShard,
} from './sharding_ddl_util.js';

// MongoDB's CreateCollectionCoordinator (shardCollection), on the database's primary shard:
//   kCheckPreconditions                     the request's own checks; a collection sharded already
//                                           answers its result when the key and uniqueness are the
//                                           same, AlreadyInitialized when not
//   kEnterWriteCriticalSectionOnCoordinator the primary blocks writes to the namespace (persisted),
//                                           so that what the translation decides on (empty or not,
//                                           its indexes) holds until the routing table is in place
//   kCreateCollectionOnCoordinator          the primary creates the collection if it has none,
//                                           translates the request (options, shard key index,
//                                           zones, the initial chunks' layout from config.shards and
//                                           config.tags), builds the shard key index, and persists
//                                           the layout and the shards other than itself it gives
//                                           chunks (the data shards)
//   kEnterCriticalSectionOnDataShards       the data shards block writes to the namespace, so that
//                                           none creates its own copy before the commit
//   kCreateCollectionOnParticipants         each data shard creates the collection with the
//                                           primary's UUID, indexes and options
//   kCommitOnShardingCatalog                the config server writes config.collections and
//                                           config.chunks in one commit, laid out again from the
//                                           persisted layout
//   kExitCriticalSection                    the data shards and the primary unblock and forget the
//                                           namespace's metadata; held writes refresh and route by
//                                           the new routing table
// Up to the commit an error that is not retriable ends the operation, the data shards' copies
// dropped (by UUID, if still empty) and every critical section released first. Each phase runs
// again after a crash: collections and indexes are created only if missing, and the commit finds
// the collection sharded with the same UUID and key and changes nothing.
const PHASES = [
  'kCheckPreconditions', 'kEnterWriteCriticalSectionOnCoordinator', 'kCreateCollectionOnCoordinator', 'kEnterCriticalSectionOnDataShards',
  'kCreateCollectionOnParticipants', 'kCommitOnShardingCatalog', 'kExitCriticalSection',
] as const;

// What kCreateCollectionOnCoordinator persists for the later phases, with the data shards.
interface Translated {
  readonly collectionUUID: unknown;
  readonly layout: InitialChunksLayout;
}

export function createCollectionCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    const { db, coll } = splitNs(ns);
    const request = doc.request as { shardKey: Doc; unique: boolean; numInitialChunks?: number; presplitHashedZones: boolean };
    const { shardKey, unique, numInitialChunks, presplitHashedZones } = request;
    const args = { ns, key: shardKey, unique, presplitHashedZones, ...(numInitialChunks === undefined ? {} : { numInitialChunks }) };
    const reason = criticalSectionReason('createCollection', ns);
    const sharded = (d: CoordinatorDocument): boolean => d.result !== undefined && d.result !== null;
    const translated = (d: CoordinatorDocument): Translated => d as unknown as Translated;
    // None before the translation, or for a collection sharded already.
    const dataShardsOf = (d: CoordinatorDocument): readonly ParticipantShard[] => (d.dataShards as ParticipantShard[] | undefined) ?? [];
    const self = (): Promise<ParticipantShard> => shardNamed(env, selfShard());
    const block = async (shards: readonly ParticipantShard[], blockType: 'Writes' | 'Unblock'): Promise<void> => {
      await onShards(env, shards, db, { _shardsvrParticipantBlock: coll, blockType, reason });
    };
    const listed = async (host: string): Promise<Doc | undefined> => (await fetchAll(env.client, host, db, { listCollections: 1, filter: { name: coll } }))[0];

    // The collection on the primary, the request translated against it and config.*, the shard key
    // index built: nothing the config server or another shard holds has changed yet.
    const createOnCoordinator = async (save: (fields: Doc) => void): Promise<void> => {
      const primary = await self();
      let info = await listed(primary.host);
      if (info?.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `${ns} is a view`);
      if (info === undefined) {
        checkOk(await env.client.command(primary.host, db, { create: coll }));
        info = await listed(primary.host);
      }
      const existingIndexes = await fetchAll(env.client, primary.host, db, { listIndexes: coll });
      const count = checkOk(await env.client.command(primary.host, db, { count: coll }));
      const { layout, hosts } = await initialChunksLayout(env, ns, primary._id, Number(count.n) === 0);
      const { createIndex, dataShards } = translateShardCollection({ ...args, layout, options: (info?.options as Doc | undefined) ?? {}, existingIndexes });
      if (createIndex !== undefined) checkOk(await env.client.command(primary.host, db, { createIndexes: coll, indexes: [createIndex] }));
      save({ collectionUUID: (info?.info as Doc | undefined)?.uuid, layout, dataShards: dataShards.map((id) => ({ _id: id, host: hosts.get(id)! })) });
    };

    return {
      desc: 'CreateCollectionCoordinator',
      // A refusal of the translation (options, shard key index, zones) or of the commit releases
      // every critical section and answers the error.
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions', lastAbortablePhase: 'kCommitOnShardingCatalog' },
      locks: { db: db.toLowerCase(), collections: [ns] },
      async runPhase(phase, d, save) {
        if (phase !== 'kCheckPreconditions' && phase !== 'kExitCriticalSection' && sharded(d)) return;
        switch (phase) {
          case 'kCheckPreconditions': {
            checkShardCollectionArgs(args);
            const existing = await configCollection(env, ns);
            if (existing === undefined) return;
            if (compareValues(existing.key, shardKey) !== 0 || (existing.unique === true) !== unique) {
              throw new MongoError(ErrorCodes.AlreadyInitialized, `sharding already enabled for collection ${ns}`);
            }
            save({ result: { collectionsharded: ns, collectionUUID: existing.uuid } });
            return;
          }
          case 'kEnterWriteCriticalSectionOnCoordinator':
            await block([await self()], 'Writes');
            return;
          case 'kCreateCollectionOnCoordinator':
            await createOnCoordinator(save);
            return;
          case 'kEnterCriticalSectionOnDataShards':
            await block(dataShardsOf(d), 'Writes');
            return;
          case 'kCreateCollectionOnParticipants': {
            const dataShards = dataShardsOf(d);
            if (dataShards.length === 0) return;
            const { host } = await self();
            const info = await listed(host);
            const indexes = (await fetchAll(env.client, host, db, { listIndexes: coll })).filter((i) => i.name !== '_id_');
            await onShards(env, dataShards, db, {
              _shardsvrCreateCollectionParticipant: coll, indexes, options: (info?.options as Doc | undefined) ?? {}, collectionUUID: translated(d).collectionUUID,
            });
            return;
          }
          case 'kCommitOnShardingCatalog': {
            const { layout, collectionUUID } = translated(d);
            const reply = await onConfig(env, { _configsvrShardCollection: ns, ...args, collectionUUID, layout });
            save({ result: { collectionsharded: ns, collectionUUID: reply.collectionUUID } });
            return;
          }
          case 'kExitCriticalSection':
            await block([...dataShardsOf(d), await self()], 'Unblock');
            return;
        }
      },
      result: (d): Doc => d.result as Doc,
      async cleanupOnAbort(d) {
        if (d.phase === 'kCheckPreconditions') return;
        // The data shards' copies, made in kCreateCollectionOnParticipants: empty under their
        // critical section, taken back by UUID so that no copy made otherwise goes with them.
        if (d.phase === 'kCreateCollectionOnParticipants' || d.phase === 'kCommitOnShardingCatalog') {
          await onShards(env, dataShardsOf(d), db, {
            _shardsvrDropCollectionParticipant: coll, collectionUUID: translated(d).collectionUUID, requireCollectionEmpty: true,
          });
        }
        await block([...dataShardsOf(d), await self()], 'Unblock');
      },
    };
  };
}

// config.shards and config.tags as the initial chunks are laid out from, and each shard's host.
async function initialChunksLayout(env: DDLCoordinatorEnv, ns: string, primaryShard: string, collectionIsEmpty: boolean): Promise<{ layout: InitialChunksLayout; hosts: Map<string, string> }> {
  const configHost = configHostOf(env);
  const shards = await fetchAll(env.client, configHost, 'config', { find: 'shards', sort: { _id: 1 } });
  const tags = await fetchAll(env.client, configHost, 'config', { find: 'tags', filter: { ns }, sort: { min: 1 } });
  const layout: InitialChunksLayout = {
    primaryShard, collectionIsEmpty,
    shards: shards.map((s) => String(s._id)),
    zones: tags.map((t) => ({ tag: String(t.tag), min: t.min as Doc, max: t.max as Doc })),
    shardZones: Object.fromEntries(shards.map((s) => [String(s._id), ((s.tags as unknown[] | undefined) ?? []).map(String)])),
  };
  return { layout, hosts: new Map(shards.map((s) => [String(s._id), String(s.host)])) };
}
