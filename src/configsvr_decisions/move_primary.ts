import type { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { DatabaseType, ShardType } from '../catalog/type_chunk.js';
import { isValidDbName } from './create_database.js';

// The coordinator's state document (config.movePrimaryCoordinator, one per database), written
// before each phase so that a restarted config server knows what to undo or finish:
// - clone: the donor blocks writes, the recipient copies; `collections` is set once the recipient
//   was checked to hold none of them, so an abort drops only what the copy created.
// - clean: written in the same write unit as the new config.databases entry: the commit happened,
//   the donor's copies and its critical section are still to go.
// - abort: the copy failed; the recipient's copies and the donor's critical section are to go.
export type MovePrimaryPhase = 'clone' | 'clean' | 'abort';

export interface MovePrimaryCoordinatorDoc {
  _id: string; // the database
  from: string;
  to: string;
  phase: MovePrimaryPhase;
  // Names the donor's critical section, so a donor that restarted (and lost it) is noticed.
  reason: ObjectId;
  preCommitVersion: DatabaseType['version'];
  collections?: string[]; // unsharded collection names being copied
  shardedCollections?: string[]; // sharded collections whose catalog entry the recipient gets
  error?: string;
}

export const MOVE_PRIMARY_COORDINATOR_NS = 'config.movePrimaryCoordinator';

export interface MovePrimaryRequest {
  readonly db: string;
  readonly to: string;
  readonly database: DatabaseType | undefined; // config.databases entry
  readonly shards: readonly ShardType[];
  readonly inProgress: { readonly to: string } | undefined; // the move running for this database
}

export type MovePrimaryDecision =
  | { readonly kind: 'noop' } // already primary there: ok, nothing moves
  | { readonly kind: 'join' } // the same move is in flight: wait for it
  | { readonly kind: 'start'; readonly from: string; readonly to: string };

const INTERNAL_DATABASES = new Set(['admin', 'config', 'local']);

// movePrimary's checks (7.0: the router's catalog cache look-up, _shardsvrMovePrimary, then the
// MovePrimaryCoordinator's), in their order.
export function decideMovePrimary(req: MovePrimaryRequest): MovePrimaryDecision {
  const { db, to } = req;
  if (!isValidDbName(db)) throw new MongoError(ErrorCodes.InvalidNamespace, `invalid db name specified: ${db}`);
  if (INTERNAL_DATABASES.has(db)) throw new MongoError(ErrorCodes.InvalidOptions, `Can't move primary for ${db} database`);
  if (to === '') throw new MongoError(ErrorCodes.InvalidOptions, 'you have to specify where you want to move it');
  if (req.database === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `database ${db} not found`);
  if (req.inProgress !== undefined) {
    if (req.inProgress.to !== to) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, 'Another movePrimary operation with different arguments is already running on the same database');
    }
    return { kind: 'join' };
  }
  if (req.database.primary === to) return { kind: 'noop' };
  const target = req.shards.find((s) => s._id === to);
  if (!target) throw new MongoError(ErrorCodes.ShardNotFound, `Requested primary shard ${to} does not exist`);
  if (target.draining === true) throw new MongoError(ErrorCodes.ShardNotFound, `Requested primary shard ${to} is draining`);
  return { kind: 'start', from: req.database.primary, to };
}

// The donor's collections (listCollections entries) that move: every collection that is not
// sharded and not a system collection; views are not supported here. Sorted by name.
export function collectionsToClone(donorCollections: readonly Doc[], shardedCollections: readonly string[]): { unsharded: string[]; sharded: string[] } {
  const sharded = new Set(shardedCollections);
  const names = donorCollections
    .filter((c) => c.type === undefined || c.type === 'collection')
    .map((c) => String(c.name))
    .filter((n) => !n.startsWith('system.'))
    .sort();
  return { unsharded: names.filter((n) => !sharded.has(n)), sharded: names.filter((n) => sharded.has(n)) };
}

// The recipient must not hold any collection being copied (7.0: "Found orphaned collection").
export function checkNoOrphans(db: string, to: string, collections: readonly string[], recipientCollections: readonly string[]): void {
  const present = new Set(recipientCollections);
  const orphan = collections.find((c) => present.has(c));
  if (orphan !== undefined) throw new MongoError(ErrorCodes.NamespaceExists, `Found orphaned collection ${db}.${orphan} on recipient ${to}`);
}

// _configsvrCommitMovePrimary: the entry must still be the one the move started from (same
// primary, same version); the new one names the recipient and bumps lastMod, so routers and the
// old primary see a newer database version.
export function commitMovePrimary(current: DatabaseType | undefined, doc: MovePrimaryCoordinatorDoc): DatabaseType {
  const v = doc.preCommitVersion;
  const same = current !== undefined && current.primary === doc.from && current.version.lastMod === v.lastMod
    && current.version.timestamp.equals(v.timestamp) && current.version.uuid.toString('hex') === v.uuid.toString('hex');
  if (!same) {
    throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `movePrimary of ${doc._id} found config.databases changed since it started; aborting`);
  }
  return { ...current, primary: doc.to, version: { ...current.version, lastMod: current.version.lastMod + 1 } };
}

// What a restarted config server does with a state document it finds.
export function recoveryAction(doc: MovePrimaryCoordinatorDoc): 'abort' | 'finish' {
  return doc.phase === 'clean' ? 'finish' : 'abort';
}
