import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { DatabaseType, ShardType } from '../catalog/type_chunk.js';
import { isValidDbName } from './create_database.js';

const INTERNAL_DATABASES = new Set(['admin', 'config', 'local']);

// movePrimary's checks on the request alone, made by the router before it looks the database up
// (7.0's ClusterMovePrimaryCommand), in their order.
export function checkMovePrimaryRequest(db: string, to: string): void {
  if (!isValidDbName(db)) throw new MongoError(ErrorCodes.InvalidNamespace, `invalid db name specified: ${db}`);
  if (INTERNAL_DATABASES.has(db)) throw new MongoError(ErrorCodes.InvalidOptions, `Can't move primary for ${db} database`);
  if (to === '') throw new MongoError(ErrorCodes.InvalidOptions, 'you have to specify where you want to move it');
}

export interface MovePrimaryRequest {
  readonly db: string;
  readonly to: string;
  readonly database: DatabaseType | undefined; // config.databases entry
  readonly shards: readonly ShardType[];
}

export type MovePrimaryDecision =
  | { readonly kind: 'noop' } // already primary there: ok, nothing moves
  | { readonly kind: 'start'; readonly from: string; readonly to: string };

// What the primary shard's _shardsvrMovePrimary decides before it starts a coordinator (none
// starts for a move to where the database already is).
export function decideMovePrimary(req: MovePrimaryRequest): MovePrimaryDecision {
  const { db, to } = req;
  checkMovePrimaryRequest(db, to);
  if (req.database === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `database ${db} not found`);
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

export interface MovePrimaryCommit {
  readonly db: string;
  readonly from: string;
  readonly to: string;
  // The database's version the move started from.
  readonly expectedDatabaseVersion: DatabaseType['version'];
}

// _configsvrCommitMovePrimary: the entry must still be the one the move started from (same
// primary, same version); the new one names the recipient and bumps lastMod, so routers and the
// old primary see a newer database version. Sent again after a crash (the coordinator runs its
// commit phase again), it finds the entry it wrote and changes nothing: `undefined`.
export function commitMovePrimary(current: DatabaseType | undefined, commit: MovePrimaryCommit): DatabaseType | undefined {
  const v = commit.expectedDatabaseVersion;
  const sameDatabase = current !== undefined && current.version.timestamp.equals(v.timestamp) && current.version.uuid.toString('hex') === v.uuid.toString('hex');
  if (sameDatabase && current.primary === commit.to && current.version.lastMod === v.lastMod + 1) return undefined;
  if (!sameDatabase || current.primary !== commit.from || current.version.lastMod !== v.lastMod) {
    throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `movePrimary of ${commit.db} found config.databases changed since it started; aborting`);
  }
  return { ...current, primary: commit.to, version: { ...current.version, lastMod: current.version.lastMod + 1 } };
}
