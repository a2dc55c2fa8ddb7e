import type { ObjectId, Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { placementTimestamp, sameGeneration, chunkVersion, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ChangeLogContext } from './changelog.js';
import { isStorableShardKey } from './shard_key.js';
import { chunkDocument, collectionVersion, shardPlacementVersion, versionString } from './placement.js';
import { formatRange, type ChunkRange } from '../catalog/chunk_range.js';
import { moveChunkCommitEntry } from './migration_changelog.js';

// MongoDB's getHistoryWindowInSeconds: a chunk's history must reach back as far as a snapshot read
// can (minSnapshotHistoryWindowInSeconds) and as long as a transaction may run on its snapshot
// (transactionLifetimeLimitSeconds), never less than 10 seconds. Older entries can no longer be
// read at, so a migration's commit drops them.
export function chunkHistoryWindowSecs(parameters: { minSnapshotHistoryWindowInSeconds: number; transactionLifetimeLimitSeconds: number }): number {
  return Math.max(parameters.minSnapshotHistoryWindowInSeconds, parameters.transactionLifetimeLimitSeconds, 10);
}

// With the parameters' defaults (300 and 60).
export const DEFAULT_CHUNK_HISTORY_WINDOW_SECS = chunkHistoryWindowSecs({ minSnapshotHistoryWindowInSeconds: 300, transactionLifetimeLimitSeconds: 60 });

export interface CommitMigrationRequest {
  readonly collection: CollectionType;
  readonly chunks: readonly ChunkType[]; // every chunk of the collection
  readonly shards: readonly ShardType[]; // config.shards, to refuse unknown or draining recipients
  // The range the donor moved and the version of its chunk when the migration started. The range
  // is one chunk, or part of one after moveRange (the commit then splits that chunk).
  readonly migratedChunk: { readonly min: Doc; readonly max: Doc; readonly lastmod?: Timestamp };
  // The collection version the donor saw (epoch and timestamp identify the incarnation it moved).
  readonly fromShardCollectionVersion: ChunkVersion;
  readonly fromShard: string;
  readonly toShard: string;
  readonly validAfter: Timestamp; // the commit's cluster time
  readonly historyWindowSecs?: number; // chunkHistoryWindowSecs; DEFAULT_CHUNK_HISTORY_WINDOW_SECS when absent
  readonly counts: Doc; // the recipient's _recvChunkCommit counts, for moveChunk.commit
  readonly chunkIdFactory: () => ObjectId; // ids of the pieces left on the donor after moveRange
  readonly log: ChangeLogContext;
}

export interface CommitMigrationDecision {
  // True when the range is already on the recipient (a retried commit): nothing to write.
  readonly alreadyCommitted: boolean;
  // The moved chunk (it keeps the _id of the chunk it came from) and the donor's control chunk.
  readonly updated: ChunkType[];
  // The pieces of the donor's chunk on either side of a moved sub-range.
  readonly inserted: ChunkType[];
  readonly collectionVersion: ChunkVersion;
  readonly shardVersions: { readonly donor: ChunkVersion; readonly recipient: ChunkVersion };
  readonly changelog: Doc[];
}

// ShardingCatalogManager::commitChunkMigration (7.0). The moved chunk takes a new major version so
// that the recipient's shard version moves, and one other chunk left on the donor (the control
// chunk) takes the same major so that the donor's moves too (seed 001): every router and shard
// holding the old placement sees StaleConfig on both shards and refreshes.
export function decideCommitChunkMigration(req: CommitMigrationRequest): CommitMigrationDecision {
  const { collection, migratedChunk, fromShard, toShard, validAfter } = req;
  const range: ChunkRange = { min: migratedChunk.min, max: migratedChunk.max };
  checkStorable(range.min);
  checkStorable(range.max);
  checkRecipient(req.shards, toShard);

  const before = collectionVersion(collection, req.chunks);
  if (!sameGeneration(before, req.fromShardCollectionVersion)) {
    throw new MongoError(ErrorCodes.StaleEpoch, `The epoch of collection '${collection._id}' has changed since the migration began. The config server's collection placement version epoch is now '${before.epoch.toHexString()}', but the shard's is ${req.fromShardCollectionVersion.epoch.toHexString()}'. Aborting migration commit for chunk (${formatRange(range)}).`);
  }
  if (migratedChunk.lastmod === undefined) {
    throw new MongoError(ErrorCodes.Location4683300, 'Config server rejecting commitChunkMigration request that does not have a ChunkVersion');
  }

  const current = findChunkContainingRange(req.chunks, range);
  if (current.shard === toShard) return alreadyCommitted(req, before);
  if (current.shard !== fromShard) {
    throw new MongoError(ErrorCodes.Location4914702, `Migrated  chunk ${formatValue({ ...range, shard: fromShard, lastmod: migratedChunk.lastmod })} from ns: ${collection._id} not owned by donor ${fromShard} neither by recipient ${toShard}`);
  }
  if (migratedChunk.lastmod.compare(current.lastmod) < 0) {
    throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `Rejecting migration request because the version of the requested chunk ${formatValue({ ...range, shard: fromShard, lastmod: migratedChunk.lastmod })}(${versionString(at(before, migratedChunk.lastmod))}) is older than the version of the current chunk ${formatValue(chunkDocument(current))}(${versionString(at(before, current.lastmod))}) on shard ${fromShard}`);
  }

  // Minor 0 for the moved chunk, then 1, 2... for the donor's pieces and its control chunk, so
  // all new versions are distinct and above everything before.
  let minor = 0;
  const next = (): Timestamp => placementTimestamp(chunkVersion(before.epoch, before.timestamp, before.major + 1, minor++));
  // The bytes the recipient cloned are the moved chunk's size estimate; pieces cut off the donor's
  // chunk no longer match its old estimate, so they have none.
  const clonedBytes = typeof req.counts.clonedBytes === 'number' ? req.counts.clonedBytes : undefined;
  const moved = chunkDocument({
    ...current, min: range.min, max: range.max, shard: toShard, lastmod: next(), onCurrentShardSince: validAfter, history: newHistory(req, current),
    estimatedDataSizeBytes: clonedBytes,
  });
  const inserted: ChunkType[] = [];
  if (compareValues(range.min, current.min) !== 0) {
    inserted.push(chunkDocument({ ...current, _id: req.chunkIdFactory(), max: range.min, lastmod: next(), estimatedDataSizeBytes: undefined }));
  }
  if (compareValues(range.max, current.max) !== 0) {
    inserted.push(chunkDocument({ ...current, _id: req.chunkIdFactory(), min: range.max, lastmod: next(), estimatedDataSizeBytes: undefined }));
  }
  const updated = [moved];
  const control = controlChunk(req.chunks, current, fromShard);
  if (control !== undefined) updated.push(chunkDocument({ ...control, lastmod: next() }));

  const after = applied(req.chunks, updated, inserted);
  return {
    alreadyCommitted: false,
    updated,
    inserted,
    collectionVersion: collectionVersion(collection, after),
    shardVersions: { donor: shardPlacementVersion(collection, after, fromShard), recipient: shardPlacementVersion(collection, after, toShard) },
    // MongoDB's donor writes this once the commit is known; here it lands with the commit itself.
    changelog: [moveChunkCommitEntry(req.log, fromShard, { ns: collection._id, ...range, from: fromShard, to: toShard }, req.counts)],
  };
}

function checkStorable(bound: Doc): void {
  for (const [field, value] of Object.entries(bound)) {
    if (!isStorableShardKey({ [field]: value })) {
      throw new MongoError(ErrorCodes.BadValue, `Shard key element ${field}: ${formatValue(value)} is not valid for storage`);
    }
  }
}

// The commit holds the shard membership lock: a recipient removed or draining meanwhile cannot
// be given data.
function checkRecipient(shards: readonly ShardType[], toShard: string): void {
  const shard = shards.find((s) => s._id === toShard);
  if (shard === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${toShard} does not exist`);
  if (shard.draining === true) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${toShard} is currently draining`);
}

// The chunk with the greatest min at or below the range's min, if it covers the whole range.
function findChunkContainingRange(chunks: readonly ChunkType[], range: ChunkRange): ChunkType {
  let found: ChunkType | undefined;
  for (const c of chunks) {
    if (compareValues(c.min, range.min) <= 0 && (found === undefined || compareValues(c.min, found.min) > 0)) found = c;
  }
  if (found === undefined || compareValues(range.max, found.max) > 0) {
    throw new MongoError(ErrorCodes.Location40165, `Could not find a chunk including bounds ${formatRange(range)}. Cannot execute the migration commit with invalid chunks.`);
  }
  return found;
}

// A retry after a commit whose answer was lost: report the current versions, write nothing.
function alreadyCommitted(req: CommitMigrationRequest, before: ChunkVersion): CommitMigrationDecision {
  return {
    alreadyCommitted: true,
    updated: [],
    inserted: [],
    collectionVersion: before,
    shardVersions: {
      donor: shardPlacementVersion(req.collection, req.chunks, req.fromShard),
      recipient: shardPlacementVersion(req.collection, req.chunks, req.toShard),
    },
    changelog: [],
  };
}

// The recipient's entry goes first; entries that no snapshot read can reach any more are dropped
// from the oldest end, always keeping one so that getShardIdAt still answers inside the window.
function newHistory(req: CommitMigrationRequest, current: ChunkType): ChunkType['history'] {
  const history = [...current.history];
  const windowSecs = req.historyWindowSecs ?? DEFAULT_CHUNK_HISTORY_WINDOW_SECS;
  while (history.length > 1 && history[history.length - 1]!.validAfter.t + windowSecs < req.validAfter.t) history.pop();
  const newest = history[0];
  if (newest !== undefined && newest.validAfter.compare(req.validAfter) >= 0) {
    const oldest = history[history.length - 1]!;
    // MongoDB's message quotes the oldest entry although it compares the newest.
    throw new MongoError(ErrorCodes.IncompatibleShardingMetadata, `The chunk history for chunk with namespace ${req.collection._id} and min key ${formatValue(req.migratedChunk.min)} is corrupted. The last validAfter ${timestampString(oldest.validAfter)} is greater or equal to the new validAfter ${timestampString(req.validAfter)}`);
  }
  return [{ validAfter: req.validAfter, shard: req.toShard }, ...history];
}

// getControlChunkForMigrate: any other chunk of the donor; the lowest one, to be deterministic.
function controlChunk(chunks: readonly ChunkType[], current: ChunkType, fromShard: string): ChunkType | undefined {
  let control: ChunkType | undefined;
  for (const c of chunks) {
    if (c.shard !== fromShard || c === current) continue;
    if (control === undefined || compareValues(c.min, control.min) < 0) control = c;
  }
  return control;
}

function applied(chunks: readonly ChunkType[], updated: ChunkType[], inserted: ChunkType[]): ChunkType[] {
  const byId = new Map(updated.map((c) => [c._id.toHexString(), c]));
  return [...chunks.map((c) => byId.get(c._id.toHexString()) ?? c), ...inserted];
}

function at(generation: ChunkVersion, lastmod: Timestamp): ChunkVersion {
  return chunkVersion(generation.epoch, generation.timestamp, lastmod.t, lastmod.i);
}

// Timestamp::toString, with the unsigned seconds and increment.
function timestampString(ts: Timestamp): string {
  return `Timestamp(${ts.t}, ${ts.i})`;
}
