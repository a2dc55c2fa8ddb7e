import { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { changeLogEntry } from '../catalog_decisions/changelog.js';
import { checkNoOrphans, collectionsToClone } from '../catalog_decisions/move_primary.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { allShards, configHostOf, onConfig, onParticipant, shardedCollectionsOf, shardNamed, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

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

async function dropIfExists(env: DDLCoordinatorEnv, host: string, db: string, coll: string): Promise<void> {
  const reply = await env.client.command(host, db, { drop: coll });
  if (reply.ok !== 1 && reply.code !== ErrorCodes.NamespaceNotFound) checkOk(reply);
}

export function movePrimaryCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const db = doc._id.namespace;
    const to = String(doc.request.to);
    const facts = (d: CoordinatorDocument): MoveFacts => d.facts as MoveFacts;
    const reason = MOVE_PRIMARY_CRITICAL_SECTION_REASON;
    // Shards log to the config server's config.changelog (MongoDB's ShardingLogging); a lost entry
    // changes nothing else.
    const logChange = async (server: string, what: string, details: Doc): Promise<void> => {
      const entry = changeLogEntry({ server, clientAddr: '', time: new Date(env.clock.now()), newId: () => new ObjectId() }, selfShard() ?? '', what, db, details);
      await env.client.command(configHostOf(env), 'config', { insert: 'changelog', documents: [entry] }).catch(() => undefined);
    };
    // What a move that did not commit left on the recipient: its copies, and its critical section
    // when the move got that far; a recipient removed since has nothing left.
    const cleanUpRecipient = async (d: CoordinatorDocument): Promise<void> => {
      const host = (await allShards(env)).find((s) => s._id === to)?.host;
      if (host === undefined) return;
      for (const name of facts(d).collections) await dropIfExists(env, host, db, name);
      if (d.phase !== 'kClone') await onParticipant(env, host, 'admin', { _shardsvrMovePrimaryExitCriticalSection: db, reason });
    };

    const clone = async (d: CoordinatorDocument, save: (fields: Doc) => void): Promise<void> => {
      const [{ host: self }, { host: recipient }] = await Promise.all([shardNamed(env, selfShard()), shardNamed(env, to)]);
      env.primary.blockDatabaseWrites(db, reason);
      let moving = d.facts as MoveFacts | undefined;
      if (moving === undefined) {
        const [database] = await fetchAll(env.client, configHostOf(env), 'config', { find: 'databases', filter: { _id: db } });
        if (database?.primary !== selfShard()) throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `database ${db} is no longer on this shard; nothing was moved`);
        const listed = await fetchAll(env.client, self, db, { listCollections: 1 });
        const shardedEntries = await shardedCollectionsOf(env, db);
        const { unsharded, sharded } = collectionsToClone(listed, shardedEntries.map((c) => String(c._id).slice(db.length + 1)));
        const onRecipient = await fetchAll(env.client, recipient, db, { listCollections: 1, nameOnly: true });
        checkNoOrphans(db, to, unsharded, onRecipient.map((c) => String(c.name)));
        moving = { from: String(selfShard()), expectedDatabaseVersion: database.version as Doc, collections: unsharded, shardedCollections: sharded };
        save({ facts: moving });
        await logChange(self, 'movePrimary.start', { from: moving.from, to });
      } else {
        // Run again after a crash or a failed attempt: the copy starts over.
        await cleanUpRecipient(d);
      }
      const { collections, shardedCollections } = moving;
      const reply = await onParticipant(env, recipient, 'admin', { _shardsvrCloneCatalogData: db, from: self, collections, shardedCollections });
      const cloned = (reply.clonedColls as unknown[]).map(String).sort();
      const expected = collections.map((c) => `${db}.${c}`).sort();
      if (cloned.join('\n') !== expected.join('\n')) {
        throw new MongoError(ErrorCodes.OperationFailed, "Error cloning data in movePrimary: the list of actually cloned collections doesn't match the list of collections to clone");
      }
    };

    return {
      desc: 'MovePrimaryCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kClone', lastAbortablePhase: 'kCommit' },
      locks: { db: db.toLowerCase() },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kClone':
            return clone(d, save);
          case 'kEnterCriticalSection': {
            env.primary.blockDatabase(db, reason);
            const { host: recipient } = await shardNamed(env, to);
            await onParticipant(env, recipient, 'admin', { _shardsvrMovePrimaryEnterCriticalSection: db, reason });
            return;
          }
          case 'kCommit': {
            const { from, expectedDatabaseVersion } = facts(d);
            await onConfig(env, { _configsvrCommitMovePrimary: db, from, to, expectedDatabaseVersion });
            return;
          }
          case 'kClean': {
            const { host: self } = await shardNamed(env, selfShard());
            for (const name of facts(d).collections) await dropIfExists(env, self, db, name);
            return;
          }
          case 'kExitCriticalSection': {
            const [{ host: recipient }, { host: self }] = await Promise.all([shardNamed(env, to), shardNamed(env, facts(d).from)]);
            await env.primary.unblockDatabase(db, reason);
            await onParticipant(env, recipient, 'admin', { _shardsvrMovePrimaryExitCriticalSection: db, reason });
            await logChange(self, 'movePrimary.end', { from: facts(d).from, to });
            return;
          }
        }
      },
      result: (): Doc => ({}),
      async cleanupOnAbort(d) {
        if (d.facts !== undefined) await cleanUpRecipient(d);
        await env.primary.unblockDatabase(db, reason);
        if (d.facts !== undefined) await logChange((await shardNamed(env, facts(d).from)).host, 'movePrimary.error', { from: facts(d).from, to });
      },
    };
  };
}
