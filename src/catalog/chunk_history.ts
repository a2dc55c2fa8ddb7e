import type { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ChunkType } from './type_chunk.js';

// A chunk's placement over time, from its config.chunks `history` (newest entry first, each
// `validAfter` a config server cluster time, so comparable with the times snapshots read at).
type ChunkPlacement = Pick<ChunkType, 'shard' | 'history'>;

// MongoDB's ChunkInfo::getShardIdAt: the shard that owned the chunk at cluster time `at`, from the
// newest history entry valid at or before it. A chunk whose history does not reach back that far
// (trimmed at a migration's commit, or begun later by a merge or by sharding the collection) cannot
// say where its documents were: StaleChunkHistory. A chunk without history (never written by
// docshard, kept for robustness) answers its current shard, as MongoDB's does.
export function shardIdAt(chunk: ChunkPlacement, at: Timestamp): string {
  const shard = ownerAt(chunk, at);
  if (shard === undefined) throw staleChunkHistory(at);
  return shard;
}

// shardIdAt, with undefined where it throws.
export function ownerAt(chunk: ChunkPlacement, at: Timestamp): string | undefined {
  const history = chunk.history;
  if (history.length === 0) return chunk.shard;
  for (const entry of history) if (entry.validAfter.compare(at) <= 0) return entry.shard;
  return undefined;
}

// The cluster time from which the chunk's current placement holds (its newest history entry's
// validAfter); a read at or after it finds the chunk where it is now.
export function placedAt(chunk: ChunkPlacement): Timestamp | undefined {
  return chunk.history[0]?.validAfter;
}

// MongoDB's ChunkInfo::throwIfMovedSince, for writes of a transaction reading at `at`: writing to
// the shard that owned the chunk then is wrong once the chunk has moved (MigrationConflict), and
// unknowable when the history does not reach back to `at` (StaleChunkHistory). Both are snapshot
// errors: the transaction, run again at a later time, can succeed.
export function throwIfMovedSince(chunk: ChunkPlacement, at: Timestamp): void {
  const newest = chunk.history[0];
  if (newest === undefined || newest.validAfter.compare(at) <= 0) return;
  if (chunk.history[chunk.history.length - 1]!.validAfter.compare(at) > 0) throw staleChunkHistory(at);
  throw new MongoError(ErrorCodes.MigrationConflict, `Chunk has moved since timestamp: ${timestampString(at)}, most recently at timestamp: ${timestampString(newest.validAfter)}`);
}

export function staleChunkHistory(at: Timestamp): MongoError {
  return new MongoError(ErrorCodes.StaleChunkHistory, `Cannot find shardId the chunk belonged to at cluster time ${timestampString(at)}`);
}

// Timestamp::toString.
function timestampString(ts: Timestamp): string {
  return `Timestamp(${ts.t}, ${ts.i})`;
}
