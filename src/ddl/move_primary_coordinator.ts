import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { checkNoOrphans, collectionsToClone } from '../catalog_decisions/move_primary.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { drivePhase, noSave } from './ddl_phase_driver.js';
import {
  CLEANUP_ON_ABORT, host, read, readConfig, readShardedCollectionsOf, readShardNamed, readShards, sendToConfig, sendToShards, shardNamedFrom, shardsFrom, START,
  type DDLPhaseEffect, type PhaseStep, type PhaseStepFn,
} from './ddl_phase_effects.js';
import type { DDLCoordinatorEnv, ParticipantShard } from './sharding_ddl_util.js';

// MongoDB's MovePrimaryCoordinator, on the database's primary shard (the donor), under the
// database's DDL lock, so that no other DDL of the database runs during the move:
//   kClone                 the donor blocks the database's versioned writes (its database critical
//                          section, persisted); note the database's version, the unsharded
//                          collections to copy (the recipient must hold none of them) and the
//                          sharded ones whose catalog entry the recipient gets; the recipient copies
//                          them (_shardsvrCloneCatalogData: options, UUID, indexes, documents)
//   kEnterCriticalSection  the donor blocks reads too; the recipient blocks the database's reads
//                          and writes (_shardsvrMovePrimaryEnterCriticalSection, persisted), so
//                          that it takes no request as the new primary, no DDL in particular,
//                          before the donor's copies are gone
//   kCommit                the config server names the recipient with lastMod + 1
//                          (_configsvrCommitMovePrimary)
//   kClean                 the donor drops its copies
//   kExitCriticalSection   the donor reloads the database's version and unblocks: the requests it
//                          held answer StaleDbVersion and the router goes to the new primary; the
//                          recipient reloads it and unblocks
//                          (_shardsvrMovePrimaryExitCriticalSection)
// Up to the commit an error that is not retriable (the recipient holds a collection of the same
// name) ends the move: the recipient's copies are dropped and both shards unblocked first. A crash
// anywhere resumes: kClone run again drops the recipient's partial copies and copies again, the
// commit finds its own entry and changes nothing.
// 7.0 refuses writes during the copy with MovePrimaryInProgress (its online copy, which catches up
// in kCatchup, is behind a feature flag); docshard's copy holds them.
const PHASES = ['kClone', 'kEnterCriticalSection', 'kCommit', 'kClean', 'kExitCriticalSection'] as const;

// The reason the donor holds its database critical section with.
const MOVE_PRIMARY_CRITICAL_SECTION_REASON = 'movePrimary';

interface MoveFacts {
  from: string;
  expectedDatabaseVersion: Doc;
  collections: string[];
  shardedCollections: string[];
}

function dropIfExists(shard: ParticipantShard, db: string, coll: string): DDLPhaseEffect {
  return { type: 'command', request: { to: host(shard), db, cmd: { drop: coll } }, accept: [ErrorCodes.NamespaceNotFound] };
}

export const movePrimaryStep: PhaseStepFn = ({ phase, doc, stage, memo, self }, replies): PhaseStep => {
  const db = doc._id.namespace;
  const to = String(doc.request.to);
  const facts = doc.facts as MoveFacts | undefined;
  const reason = MOVE_PRIMARY_CRITICAL_SECTION_REASON;
  const log = (server: ParticipantShard, what: string): DDLPhaseEffect => ({ type: 'logChange', server: server.host, what, ns: db, details: { from: facts!.from, to } });
  const onRecipient = (recipient: ParticipantShard, cmd: Doc): DDLPhaseEffect => sendToShards([recipient], 'admin', cmd);
  // What a move that did not commit left on the recipient (as config.shards lists it): its
  // copies, and its critical section when the move got that far; a recipient removed since has
  // nothing left.
  const cleanUpRecipient = (shards: readonly Doc[]): DDLPhaseEffect[] => {
    const recipient = shardsFrom(shards).find((s) => s._id === to);
    if (recipient === undefined) return [];
    const exit = doc.phase === 'kClone' ? [] : [onRecipient(recipient, { _shardsvrMovePrimaryExitCriticalSection: db, reason })];
    return [...facts!.collections.map((name) => dropIfExists(recipient, db, name)), ...exit];
  };
  const clone = (moving: MoveFacts): DDLPhaseEffect => onRecipient(memo.recipient as ParticipantShard, {
    _shardsvrCloneCatalogData: db, from: (memo.donor as ParticipantShard).host, collections: moving.collections, shardedCollections: moving.shardedCollections,
  });
  switch (phase) {
    case 'kClone':
      switch (stage) {
        case START:
          return { effects: [readShardNamed(self), readShardNamed(to)], next: 'hosts' };
        case 'hosts': {
          const shards = { donor: shardNamedFrom(replies[0]!, self), recipient: shardNamedFrom(replies[1]!, to) };
          const block: DDLPhaseEffect = { type: 'blockDatabaseWrites', db, reason };
          // Run again after a crash or a failed attempt: the copy starts over.
          if (facts !== undefined) return { effects: [block, readShards()], next: 'recipientListed', memo: shards };
          return { effects: [block, readConfig('databases', { filter: { _id: db } })], next: 'database', memo: shards };
        }
        case 'database': {
          const [database] = replies[1]!;
          if (database?.primary !== self) throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `database ${db} is no longer on this shard; nothing was moved`);
          return {
            effects: [
              read(host(memo.donor as ParticipantShard), db, { listCollections: 1 }), readShardedCollectionsOf(db),
              read(host(memo.recipient as ParticipantShard), db, { listCollections: 1, nameOnly: true }),
            ],
            next: 'listed', memo: { expectedDatabaseVersion: database.version },
          };
        }
        case 'listed': {
          const [listed, shardedEntries, onRecipientListed] = replies as [Doc[], Doc[], Doc[]];
          const { unsharded, sharded } = collectionsToClone(listed, shardedEntries.map((c) => String(c._id).slice(db.length + 1)));
          checkNoOrphans(db, to, unsharded, onRecipientListed.map((c) => String(c.name)));
          const moving: MoveFacts = { from: String(self), expectedDatabaseVersion: memo.expectedDatabaseVersion as Doc, collections: unsharded, shardedCollections: sharded };
          const start: DDLPhaseEffect = { type: 'logChange', server: (memo.donor as ParticipantShard).host, what: 'movePrimary.start', ns: db, details: { from: moving.from, to } };
          return { save: { facts: moving }, effects: [start, clone(moving)], next: 'cloned', memo: { collections: unsharded } };
        }
        case 'recipientListed':
          return { effects: [...cleanUpRecipient(replies[1]!), clone(facts!)], next: 'cloned', memo: { collections: facts!.collections } };
        default: {
          const cloned = (replies.at(-1)![0]!.clonedColls as unknown[]).map(String).sort();
          const expected = (memo.collections as string[]).map((c) => `${db}.${c}`).sort();
          if (cloned.join('\n') !== expected.join('\n')) {
            throw new MongoError(ErrorCodes.OperationFailed, "Error cloning data in movePrimary: the list of actually cloned collections doesn't match the list of collections to clone");
          }
          return { effects: [] };
        }
      }
    case 'kEnterCriticalSection':
      if (stage === START) return { effects: [{ type: 'blockDatabase', db, reason }, readShardNamed(to)], next: 'recipient' };
      return { effects: [onRecipient(shardNamedFrom(replies[1]!, to), { _shardsvrMovePrimaryEnterCriticalSection: db, reason })] };
    case 'kCommit':
      return { effects: [sendToConfig({ _configsvrCommitMovePrimary: db, from: facts!.from, to, expectedDatabaseVersion: facts!.expectedDatabaseVersion })] };
    case 'kClean': {
      if (stage === START) return { effects: [readShardNamed(self)], next: 'drop' };
      const donor = shardNamedFrom(replies[0]!, self);
      return { effects: facts!.collections.map((name) => dropIfExists(donor, db, name)) };
    }
    case 'kExitCriticalSection': {
      if (stage === START) return { effects: [readShardNamed(to), readShardNamed(facts!.from)], next: 'exit' };
      const [recipient, donor] = [shardNamedFrom(replies[0]!, to), shardNamedFrom(replies[1]!, facts!.from)];
      return {
        effects: [{ type: 'unblockDatabase', db, reason }, onRecipient(recipient, { _shardsvrMovePrimaryExitCriticalSection: db, reason }), log(donor, 'movePrimary.end')],
      };
    }
    case CLEANUP_ON_ABORT: {
      const unblock: DDLPhaseEffect = { type: 'unblockDatabase', db, reason };
      if (facts === undefined) return { effects: [unblock] };
      switch (stage) {
        case START:
          return { effects: [readShards()], next: 'recipient' };
        case 'recipient':
          return { effects: [...cleanUpRecipient(replies[0]!), unblock, readShardNamed(facts.from)], next: 'log' };
        default:
          return { effects: [log(shardNamedFrom(replies.at(-1)!, facts.from), 'movePrimary.error')] };
      }
    }
    default:
      throw new Error(`MovePrimaryCoordinator has no phase ${phase}`);
  }
};

export function movePrimaryCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => ({
    desc: 'MovePrimaryCoordinator',
    plan: { phases: PHASES, preconditionPhase: 'kClone', lastAbortablePhase: 'kCommit' },
    locks: { db: doc._id.namespace.toLowerCase() },
    runPhase: (phase, d, save) => drivePhase(env, movePrimaryStep, phase, d, save, selfShard),
    result: (): Doc => ({}),
    cleanupOnAbort: (d) => drivePhase(env, movePrimaryStep, CLEANUP_ON_ABORT, d, noSave, selfShard),
  });
}
