import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import { checkShardCollectionArgs, translateShardCollection, type InitialChunksLayout } from '../catalog_decisions/shard_collection.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase, noSave } from './ddl_phase_driver.js';
import {
  CLEANUP_ON_ABORT, host, read, readCollectionEntry, readConfig, readShardNamed, sendToConfig, sendToShards, shardNamedFrom, START,
  type DDLPhaseEffect, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { criticalSectionReason, splitNs, type DDLCoordinatorEnv, type ParticipantShard } from './sharding_ddl_util.js';

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

interface CreateRequest {
  readonly shardKey: Doc;
  readonly unique: boolean;
  readonly numInitialChunks?: number;
  readonly presplitHashedZones: boolean;
  // MongoDB 8.0's registration of an existing unsharded collection in the sharding catalog (before
  // a moveCollection): an unsplittable entry, key {_id: 1}, one chunk on the primary.
  readonly unsplittable?: boolean;
  readonly registerExistingCollectionInGlobalCatalog?: boolean;
}

export const createCollectionStep: PhaseStepFn = ({ phase, doc, stage, memo, self }, replies): PhaseStep => {
  const ns = doc._id.namespace;
  const { db, coll } = splitNs(ns);
  const { shardKey, unique, numInitialChunks, presplitHashedZones, unsplittable = false, registerExistingCollectionInGlobalCatalog: register = false } = doc.request as unknown as CreateRequest;
  const args = { ns, key: shardKey, unique, presplitHashedZones, ...(numInitialChunks === undefined ? {} : { numInitialChunks }) };
  const reason = criticalSectionReason('createCollection', ns);
  const translated = doc as unknown as Translated;
  // None before the translation, or for a collection sharded already.
  const dataShards = (doc.dataShards as ParticipantShard[] | undefined) ?? [];
  const block = (shards: readonly ParticipantShard[], blockType: 'Writes' | 'Unblock'): DDLPhaseEffect => (
    sendToShards(shards, db, { _shardsvrParticipantBlock: coll, blockType, reason })
  );
  const listed = (primary: ParticipantShard): DDLPhaseEffect => read(host(primary), db, { listCollections: 1, filter: { name: coll } });
  // This shard, as config.shards names it, once read (the stage after readShardNamed).
  const primary = (): ParticipantShard => shardNamedFrom(replies[0]!, self);
  if (phase !== 'kCheckPreconditions' && phase !== 'kExitCriticalSection' && phase !== CLEANUP_ON_ABORT && doc.result !== undefined && doc.result !== null) {
    return { effects: [] };
  }
  switch (phase) {
    case 'kCheckPreconditions': {
      if (stage === START) {
        checkShardCollectionArgs(args);
        return { effects: [readCollectionEntry(ns)], next: 'existing' };
      }
      if (stage === 'placement') {
        // An unsplittable collection is sharded where it lies only when that is this shard.
        if (replies[0]!.some((c) => c.shard !== shardNamedFrom(replies[1]!, self)._id)) {
          throw new MongoError(ErrorCodes.IllegalOperation, `Collection ${ns} lies on another shard than its database's primary: move it there (moveCollection) before sharding it`);
        }
        return { effects: [] };
      }
      const [existing] = replies[0]!;
      if (existing === undefined) return { effects: [] };
      if (unsplittable) return { save: { result: { collectionsharded: ns, collectionUUID: existing.uuid } }, effects: [] };
      if (existing.unsplittable === true) {
        return { effects: [readConfig('chunks', { filter: { uuid: existing.uuid } }), readShardNamed(self)], next: 'placement' };
      }
      if (compareValues(existing.key, shardKey) !== 0 || (existing.unique === true) !== unique) {
        throw new MongoError(ErrorCodes.AlreadyInitialized, `sharding already enabled for collection ${ns}`);
      }
      return { save: { result: { collectionsharded: ns, collectionUUID: existing.uuid } }, effects: [] };
    }
    case 'kEnterWriteCriticalSectionOnCoordinator':
      if (stage === START) return { effects: [readShardNamed(self)], next: 'self' };
      return { effects: [block([primary()], 'Writes')] };
    case 'kCreateCollectionOnCoordinator':
      return createOnCoordinator();
    case 'kEnterCriticalSectionOnDataShards':
      return { effects: [block(dataShards, 'Writes')] };
    case 'kCreateCollectionOnParticipants':
      if (dataShards.length === 0) return { effects: [] };
      switch (stage) {
        case START:
          return { effects: [readShardNamed(self)], next: 'self' };
        case 'self':
          return { effects: [listed(primary()), read(host(primary()), db, { listIndexes: coll })], next: 'create' };
        default: {
          const [info] = replies[0]!;
          const indexes = replies[1]!.filter((i) => i.name !== '_id_');
          return {
            effects: [sendToShards(dataShards, db, {
              _shardsvrCreateCollectionParticipant: coll, indexes, options: (info?.options as Doc | undefined) ?? {}, collectionUUID: translated.collectionUUID,
            })],
          };
        }
      }
    case 'kCommitOnShardingCatalog':
      if (stage === START) return { effects: [sendToConfig({ _configsvrShardCollection: ns, ...args, collectionUUID: translated.collectionUUID, layout: translated.layout, ...(unsplittable ? { unsplittable } : {}) })], next: 'committed' };
      return { save: { result: { collectionsharded: ns, collectionUUID: replies[0]![0]!.collectionUUID } }, effects: [] };
    case 'kExitCriticalSection':
      if (stage === START) return { effects: [readShardNamed(self)], next: 'self' };
      return { effects: [block([...dataShards, primary()], 'Unblock')] };
    case CLEANUP_ON_ABORT: {
      if (doc.phase === 'kCheckPreconditions') return { effects: [] };
      if (stage !== START) return { effects: [block([...dataShards, shardNamedFrom(replies.at(-1)!, self)], 'Unblock')] };
      // The data shards' copies, made in kCreateCollectionOnParticipants: empty under their
      // critical section, taken back by UUID so that no copy made otherwise goes with them.
      const copiesMade = doc.phase === 'kCreateCollectionOnParticipants' || doc.phase === 'kCommitOnShardingCatalog';
      const drop = sendToShards(dataShards, db, { _shardsvrDropCollectionParticipant: coll, collectionUUID: translated.collectionUUID, requireCollectionEmpty: true });
      return { effects: [...(copiesMade ? [drop] : []), readShardNamed(self)], next: 'unblock' };
    }
    default:
      throw new Error(`CreateCollectionCoordinator has no phase ${phase}`);
  }

  // The collection on the primary, the request translated against it and config.*, the shard key
  // index built: nothing the config server or another shard holds has changed yet.
  function createOnCoordinator(): PhaseStep {
    switch (stage) {
      case START:
        return { effects: [readShardNamed(self)], next: 'self' };
      case 'self':
        return { effects: [listed(primary())], next: 'listed', memo: { primary: primary() } };
      case 'listed':
      case 'created': {
        const me = memo.primary as ParticipantShard;
        const info = stage === 'listed' ? replies[0]![0] : replies[1]![0];
        if (info?.type === 'view') throw new MongoError(ErrorCodes.CommandNotSupportedOnView, `${ns} is a view`);
        if (info === undefined && register) throw new MongoError(ErrorCodes.NamespaceNotFound, `Collection ${ns} does not exist`);
        if (info === undefined && stage === 'listed') return { effects: [{ type: 'command', request: { to: host(me), db, cmd: { create: coll } } }, listed(me)], next: 'created' };
        return {
          effects: [
            read(host(me), db, { listIndexes: coll }), { type: 'command', request: { to: host(me), db, cmd: { count: coll } } },
            readConfig('shards', { sort: { _id: 1 } }), readConfig('tags', { filter: { ns }, sort: { min: 1 } }),
          ],
          next: 'translate', memo: { info: info ?? null },
        };
      }
      case 'translate': {
        const me = memo.primary as ParticipantShard;
        const info = memo.info as Doc | null;
        const [existingIndexes, [count], shards, tags] = replies as [Doc[], Doc[], Doc[], Doc[]];
        const layout = initialChunksLayout(me._id, Number(count!.n) === 0, shards, tags);
        const hosts = new Map(shards.map((s) => [String(s._id), String(s.host)]));
        const { createIndex, dataShards: ids } = translateShardCollection({ ...args, layout, options: (info?.options as Doc | undefined) ?? {}, existingIndexes });
        const noted = { collectionUUID: (info?.info as Doc | undefined)?.uuid, layout, dataShards: ids.map((id) => ({ _id: id, host: hosts.get(id)! })) };
        // Persisted once the index is built: a refusal leaves nothing noted for the clean-up.
        const build: DDLPhaseEffect[] = createIndex === undefined ? [] : [{ type: 'command', request: { to: host(me), db, cmd: { createIndexes: coll, indexes: [createIndex] } } }];
        return { effects: build, next: 'built', memo: { noted } };
      }
      default:
        return { save: memo.noted as Doc, effects: [] };
    }
  }
};

// config.shards and config.tags as the initial chunks are laid out from.
function initialChunksLayout(primaryShard: string, collectionIsEmpty: boolean, shards: readonly Doc[], tags: readonly Doc[]): InitialChunksLayout {
  return {
    primaryShard, collectionIsEmpty,
    shards: shards.map((s) => String(s._id)),
    zones: tags.map((t) => ({ tag: String(t.tag), min: t.min as Doc, max: t.max as Doc })),
    shardZones: Object.fromEntries(shards.map((s) => [String(s._id), ((s.tags as unknown[] | undefined) ?? []).map(String)])),
  };
}

export function createCollectionCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    return {
      desc: 'CreateCollectionCoordinator',
      // A refusal of the translation (options, shard key index, zones) or of the commit releases
      // every critical section and answers the error.
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions', lastAbortablePhase: 'kCommitOnShardingCatalog' },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      runPhase: (phase, d, save) => drivePhase(env, createCollectionStep, phase, d, save, selfShard),
      result: (d): Doc => d.result as Doc,
      cleanupOnAbort: (d) => drivePhase(env, createCollectionStep, CLEANUP_ON_ABORT, d, noSave, selfShard),
    };
  };
}
