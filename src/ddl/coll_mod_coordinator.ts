import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { fetchAll } from '../wire/remote_cursor.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import type { DDLCoordinator } from './sharding_ddl_coordinator_service.js';
import { allShards, configCollection, configHostOf, onConfig, onParticipant, splitNs, stopMigrations, type DDLCoordinatorEnv } from './sharding_ddl_util.js';

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

export function collModCoordinator(env: DDLCoordinatorEnv, selfShard: () => string | undefined): (doc: CoordinatorDocument) => DDLCoordinator {
  return (doc) => {
    const ns = doc._id.namespace;
    const { db, coll } = splitNs(ns);
    const collModRequest = doc.request.collModRequest as Doc;
    const participant = { _shardsvrCollModParticipant: coll, collModRequest };
    const facts = (d: CoordinatorDocument): CollModFacts => d.facts as CollModFacts;
    return {
      desc: 'CollModCoordinator',
      plan: { phases: PHASES, preconditionPhase: 'kCheckPreconditions' },
      locks: { db: db.toLowerCase(), collections: [ns] },
      async runPhase(phase, d, save) {
        switch (phase) {
          case 'kCheckPreconditions': {
            const shards = await allShards(env);
            const self = shards.find((s) => s._id === selfShard());
            if (self === undefined) throw new MongoError(ErrorCodes.ShardNotFound, 'this shard is not in config.shards');
            const entry = await configCollection(env, ns);
            const { ok: _ok, ...result } = await onParticipant(env, self.host, db, participant);
            save({ facts: { sharded: entry !== undefined, migrationsStopped: entry?.permitMigrations === false, collectionUUID: entry?.uuid ?? null, result } });
            return;
          }
          case 'kFreezeMigrations':
            if (facts(d).sharded) await stopMigrations(env, ns);
            return;
          case 'kUpdateShards': {
            const { sharded, migrationsStopped, collectionUUID } = facts(d);
            if (!sharded) return;
            const chunks = await fetchAll(env.client, configHostOf(env), 'config', { find: 'chunks', filter: { uuid: collectionUUID }, projection: { shard: 1 } });
            const owners = new Set(chunks.map((c) => String(c.shard)));
            owners.delete(selfShard() ?? '');
            const shards = (await allShards(env)).filter((s) => owners.has(s._id));
            await Promise.all(shards.map((s) => onParticipant(env, s.host, db, participant)));
            if (!migrationsStopped) await onConfig(env, { _configsvrSetAllowMigrations: ns, allowMigrations: true });
            return;
          }
        }
      },
      result: (d): Doc => facts(d).result,
    };
  };
}
