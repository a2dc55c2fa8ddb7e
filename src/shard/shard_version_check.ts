import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import {
  compareDatabaseVersions, databaseVersionToBSON, type DatabaseVersion,
} from '../catalog/database_version.js';
import {
  formatChunkVersion, isUnsharded, sameGeneration, shardVersionToBSON, unshardedVersion, type ChunkVersion,
} from '../catalog/chunk_version.js';

// The shard side of the versioning protocol (seed 004), as a pure decision: accept the request,
// refresh the filtering metadata from the config server first (the router knows something newer),
// or reject it as stale (the router must refresh).
export type VersionDecision = { kind: 'ok' } | { kind: 'refresh' } | { kind: 'stale'; error: MongoError };

// What the shard knows of a collection: unknown (never loaded), unsharded, or its shard version.
export type KnownVersion = { kind: 'unknown' } | { kind: 'unsharded' } | { kind: 'sharded'; version: ChunkVersion };

export function checkShardVersion(ns: string, shardId: string, received: ChunkVersion, known: KnownVersion, mayRefresh: boolean): VersionDecision {
  if (known.kind === 'unknown') return mayRefresh ? { kind: 'refresh' } : stale(ns, shardId, received, undefined);
  const receivedUnsharded = isUnsharded(received);
  if (known.kind === 'unsharded') {
    if (receivedUnsharded) return { kind: 'ok' };
    return mayRefresh ? { kind: 'refresh' } : stale(ns, shardId, received, unshardedVersion());
  }
  const wanted = known.version;
  if (receivedUnsharded) return stale(ns, shardId, received, wanted);
  if (!sameGeneration(received, wanted)) {
    if (received.timestamp.greaterThan(wanted.timestamp) && mayRefresh) return { kind: 'refresh' };
    return stale(ns, shardId, received, wanted);
  }
  // Within one generation only the major version matters: splits and merges (minor bumps) do not
  // move data, so a router that missed them still targets correctly.
  if (received.major === wanted.major) return { kind: 'ok' };
  if (received.major > wanted.major && mayRefresh) return { kind: 'refresh' };
  return stale(ns, shardId, received, wanted);
}

function stale(ns: string, shardId: string, received: ChunkVersion, wanted: ChunkVersion | undefined): VersionDecision {
  const extra: Record<string, unknown> = { ns, vReceived: shardVersionToBSON(received), shardId };
  if (wanted) extra.vWanted = shardVersionToBSON(wanted);
  const message = `version mismatch detected for ${ns}; shard ${shardId} received ${formatChunkVersion(received)}`
    + (wanted ? ` but has ${formatChunkVersion(wanted)}` : ' but has no metadata');
  return { kind: 'stale', error: new MongoError(ErrorCodes.StaleConfig, message, extra) };
}

export type KnownDatabase = { kind: 'unknown' } | { kind: 'notPrimary' } | { kind: 'primary'; version: DatabaseVersion };

export function checkDatabaseVersion(db: string, received: DatabaseVersion, known: KnownDatabase, mayRefresh: boolean): VersionDecision {
  if (known.kind === 'primary') {
    const c = compareDatabaseVersions(received, known.version);
    if (c === 0 && received.uuid.toString('hex') === known.version.uuid.toString('hex')) return { kind: 'ok' };
    if (c > 0 && mayRefresh) return { kind: 'refresh' };
    return staleDb(db, received, known.version);
  }
  if (mayRefresh) return { kind: 'refresh' };
  return staleDb(db, received, undefined);
}

function staleDb(db: string, received: DatabaseVersion, wanted: DatabaseVersion | undefined): VersionDecision {
  const extra: Record<string, unknown> = { db, vReceived: databaseVersionToBSON(received) };
  if (wanted) extra.vWanted = databaseVersionToBSON(wanted);
  return { kind: 'stale', error: new MongoError(ErrorCodes.StaleDbVersion, `version mismatch detected for database ${db}`, extra) };
}
