import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { CoordinatorDocument } from './sharding_ddl_coordinator_document.js';
import { splitNs, type ParticipantShard } from './sharding_ddl_util.js';

// A coordinator's phase as a pure step function, apart from the I/O (ddl_phase_driver.ts performs
// it): given the state document, where in the phase it is and what the effects it asked for last
// answered, it decides the fields to persist and the next effects. A crash re-runs a phase from its
// first stage with the persisted document alone, so what a stage keeps in `memo` lives only as
// long as this run of the phase.
//
//   step(at{stage: 'start'}, []) ─▶ {save?, effects, next} ─driver: persist, perform─▶ step(at{stage: next}, replies) ─▶ … ─▶ {next: undefined}
//
// A step that refuses (a precondition, a reply it cannot accept) throws a MongoError: the phase
// fails with it, as the run loop (sharding_ddl_coordinator_run.ts) decides.

export const START = 'start';

// The pseudo-phase of a coordinator's cleanupOnAbort: the document's phase is the one that aborted.
export const CLEANUP_ON_ABORT = 'cleanupOnAbort';

export type Target = 'config' | { readonly host: string };

export interface Request {
  readonly to: Target;
  readonly db: string;
  readonly cmd: Doc;
}

export type DDLPhaseEffect =
  // A read whose cursor is drained: answers its documents.
  | { readonly type: 'read'; readonly to: Target; readonly db: string; readonly cmd: Doc }
  // Commands that change something on the participants or the config server, each a retryable
  // write of the coordinator's session, sent at once: every one must answer ok (or with an error
  // code in `accept`). Answers the replies, in order.
  | { readonly type: 'send'; readonly requests: readonly Request[]; readonly accept?: readonly number[] }
  // A command to a shard's own catalog, outside the session (create, count, createIndexes, drop):
  // ok or an error code in `accept`. Answers its reply.
  | { readonly type: 'command'; readonly request: Request; readonly accept?: readonly number[] }
  // Commands that only save time (a refresh a shard would do anyway), sent at once; their
  // failures are ignored. Answers nothing.
  | { readonly type: 'hint'; readonly requests: readonly Request[] }
  // The primary's own database critical section and cached version (PrimaryShardState).
  | { readonly type: 'blockDatabaseWrites'; readonly db: string; readonly reason: string }
  | { readonly type: 'blockDatabase'; readonly db: string; readonly reason: string }
  | { readonly type: 'unblockDatabase'; readonly db: string; readonly reason: string }
  // An entry of the config server's config.changelog, stamped with the shard's clock; a lost entry
  // changes nothing else.
  | { readonly type: 'logChange'; readonly server: string; readonly what: string; readonly ns: string; readonly details: Doc };

export interface PhaseAt {
  readonly phase: string;
  readonly doc: CoordinatorDocument;
  readonly stage: string;
  readonly memo: Doc;
  // This shard's id in config.shards (undefined before it was added to a cluster).
  readonly self: string | undefined;
}

export interface PhaseStep {
  // Persisted in the state document before any of the effects runs.
  readonly save?: Doc;
  readonly effects: readonly DDLPhaseEffect[];
  // The stage the effects' answers go to; none: the phase is done once they ran.
  readonly next?: string;
  // Merged into the memo for the next stage.
  readonly memo?: Doc;
}

// `replies`: one entry per effect of the step before (for a read its documents, for a send its
// replies, for a command its reply, else nothing).
export type PhaseStepFn = (at: PhaseAt, replies: readonly (readonly Doc[])[]) => PhaseStep;

export function read(to: Target, db: string, cmd: Doc): DDLPhaseEffect {
  return { type: 'read', to, db, cmd };
}

export function readConfig(collection: string, query: Doc): DDLPhaseEffect {
  return read('config', 'config', { find: collection, ...query });
}

export function readShards(): DDLPhaseEffect {
  return readConfig('shards', { sort: { _id: 1 } });
}

export function readCollectionEntry(ns: string): DDLPhaseEffect {
  return readConfig('collections', { filter: { _id: ns } });
}

// The config.collections entries of the database's sharded collections.
export function readShardedCollectionsOf(db: string): DDLPhaseEffect {
  const escaped = db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return readConfig('collections', { filter: { _id: { $regex: `^${escaped}\\.` } } });
}

export function shardsFrom(docs: readonly Doc[]): ParticipantShard[] {
  return docs.map((s) => ({ _id: String(s._id), host: String(s.host) }));
}

// One shard as config.shards names it: read by readShardNamed, found by shardNamedFrom.
export function readShardNamed(id: string | undefined): DDLPhaseEffect {
  return readConfig('shards', { filter: { _id: id } });
}

export function shardNamedFrom(docs: readonly Doc[], id: string | undefined): ParticipantShard {
  const [entry] = docs;
  if (entry === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${id} not found`);
  return { _id: String(entry._id), host: String(entry.host) };
}

export function host(shard: ParticipantShard): Target {
  return { host: shard.host };
}

export function sendToConfig(cmd: Doc, accept?: readonly number[]): DDLPhaseEffect {
  return { type: 'send', requests: [{ to: 'config', db: 'admin', cmd }], ...(accept === undefined ? {} : { accept }) };
}

export function sendToShards(shards: readonly ParticipantShard[], db: string, cmd: Doc): DDLPhaseEffect {
  return { type: 'send', requests: shards.map((s) => ({ to: host(s), db, cmd })) };
}

// MongoDB's stopMigrations: the balancer and moveChunk leave the collection alone, and the config
// server waits out the migrations of it still running. A collection no longer sharded (a phase
// run again after its metadata went) has none.
export function stopMigrations(ns: string): DDLPhaseEffect {
  return sendToConfig({ _configsvrSetAllowMigrations: ns, allowMigrations: false }, [ErrorCodes.NamespaceNotSharded]);
}

export function blockCrud(shards: readonly ParticipantShard[], ns: string, reason: Doc): DDLPhaseEffect {
  const { db, coll } = splitNs(ns);
  return sendToShards(shards, db, { _shardsvrParticipantBlock: coll, blockType: 'ReadsAndWrites', reason });
}

export function unblockCrud(shards: readonly ParticipantShard[], ns: string, reason: Doc): DDLPhaseEffect {
  const { db, coll } = splitNs(ns);
  return sendToShards(shards, db, { _shardsvrParticipantBlock: coll, blockType: 'Unblock', reason });
}

// The drop of a collection on every shard, once the config server has forgotten it: each drops its
// copy, its range deletion tasks and its cached metadata.
export function dropOnParticipants(shards: readonly ParticipantShard[], ns: string): DDLPhaseEffect {
  const { db, coll } = splitNs(ns);
  return sendToShards(shards, db, { _shardsvrDropCollectionParticipant: coll });
}
