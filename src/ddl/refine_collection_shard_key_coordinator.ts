import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { checkRefineShardKey, isAlreadyRefined } from '../catalog_decisions/refine_shard_key.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase } from './ddl_phase_driver.js';
import {
  host, read, readCollectionEntry, readConfig, readShards, sendToConfig, shardsFrom, START, stopMigrations, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import { splitNs, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

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

export const refineCollectionShardKeyStep: PhaseStepFn = ({ phase, doc, stage, memo }, replies): PhaseStep => {
  const ns = doc._id.namespace;
  const { db, coll } = splitNs(ns);
  const newKey = doc.request.newShardKey as Doc;
  const facts = doc.facts as RefineFacts;
  switch (phase) {
    case 'kCheckPreconditions':
      switch (stage) {
        case START:
          return { effects: [readCollectionEntry(ns)], next: 'entry' };
        case 'entry': {
          const [entry] = replies[0]!;
          if (entry === undefined) throw new MongoError(ErrorCodes.NamespaceNotSharded, `Can't execute refineCollectionShardKey on unsharded collection ${ns}`);
          if (isAlreadyRefined(entry.key as Doc, newKey)) return { save: { facts: { alreadyRefined: true, collectionUUID: entry.uuid } }, effects: [] };
          return { effects: [readConfig('chunks', { filter: { uuid: entry.uuid }, projection: { shard: 1 } }), readShards()], next: 'owners', memo: { entry } };
        }
        case 'owners': {
          const owners = new Set(replies[0]!.map((c) => String(c.shard)));
          const shards = shardsFrom(replies[1]!).filter((s) => owners.has(s._id));
          return { effects: shards.map((s) => read(host(s), db, { listIndexes: coll })), next: 'indexes' };
        }
        default: {
          const entry = memo.entry as Doc;
          for (const indexes of replies) checkRefineShardKey({ ns, currentKey: entry.key as Doc, newKey, unique: entry.unique === true, indexes });
          return { save: { facts: { alreadyRefined: false, collectionUUID: entry.uuid } }, effects: [] };
        }
      }
    case 'kFreezeMigrations':
      return { effects: facts.alreadyRefined ? [] : [stopMigrations(ns)] };
    case 'kCommit':
      if (facts.alreadyRefined) return { effects: [] };
      if (stage === START) {
        return { effects: [sendToConfig({ _configsvrCommitRefineCollectionShardKey: ns, key: newKey, collectionUUID: facts.collectionUUID }), readShards()], next: 'flush' };
      }
      // Each shard refreshes on its next versioned request anyway.
      return { effects: [{ type: 'hint', requests: shardsFrom(replies[1]!).map((s) => ({ to: host(s), db: 'admin', cmd: { _flushRoutingTableCacheUpdates: ns } })) }] };
    default:
      throw new Error(`RefineCollectionShardKeyCoordinator has no phase ${phase}`);
  }
};

export function refineCollectionShardKeyCoordinator(env: DDLCoordinatorEnv): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    return {
      desc: 'RefineCollectionShardKeyCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      locks: { db: splitNs(ns).db.toLowerCase(), collections: [ns] },
      runPhase: (phase, d, save) => drivePhase(env, refineCollectionShardKeyStep, phase, d, save, () => undefined),
      result: (): Doc => ({}),
    };
  };
}
