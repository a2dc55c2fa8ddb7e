import { Timestamp, type UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import { shardVersionFromBSON, shardVersionToBSON, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import { IdlReader } from './idl_reader.js';

// A range one shard must delete once the migration that named it is decided (MongoDB's
// RangeDeletionTask in config.rangeDeletions). Both shards write one, keyed by the migration id,
// before any document moves: the donor's is for the range it gives away (deleted on abort, made
// ready on commit), the recipient's for what it copied in (deleted on commit, made ready on abort).
// `pending` tasks are never executed; the range deleter only runs tasks that are not pending.
//
// `numOrphanDocs` counts the documents of the range this shard holds without owning them, as
// MongoDB 6.0+ keeps it: the recipient adds what every clone and catch-up batch changes in the
// range, the donor sets it from its own copy of the range when the commit makes the task ready, and
// every batch the range deleter removes takes its documents off. Each change commits in the same
// write unit as the documents it counts, so the figure is exact across crashes.
// `orphanedSizeBytes` is docshard's own: the same for the documents' bytes, so the owned and
// orphaned sizes $shardedDataDistribution reports are exact rather than count × average.
export type CleanWhen = 'now' | 'delayed';

export const RANGE_DELETIONS_NS = 'config.rangeDeletions';

export interface RangeDeletionTask {
  readonly _id: UUID;
  readonly nss: string;
  readonly collectionUuid: UUID;
  readonly donorShardId: string;
  readonly range: ChunkRange;
  readonly pending: boolean;
  // Set once the range deleter has started deleting (after any delay), as MongoDB marks it.
  readonly processing: boolean;
  readonly whenToClean: CleanWhen;
  // When the task was written.
  readonly timestamp?: Timestamp;
  readonly numOrphanDocs: number;
  readonly orphanedSizeBytes: number;
  // The collection's shard key pattern: the index the deleter walks.
  readonly keyPattern?: Doc;
  // The donor's shard version before the migration; the recipient's task has none, as in MongoDB.
  readonly preMigrationShardVersion?: ChunkVersion;
}

const STRUCT = 'rangeDeletionTask';
const CLEAN_WHEN: readonly CleanWhen[] = ['now', 'delayed'];

// `pending` and `processing` are present only while true, as in MongoDB, where they are unset.
// Validates on the way out too (by reading the result back), so nothing invalid reaches disk.
export function rangeDeletionTaskToBSON(task: RangeDeletionTask): Doc {
  const out: Doc = { _id: task._id, nss: task.nss, collectionUuid: task.collectionUuid, donorShardId: task.donorShardId, range: { min: task.range.min, max: task.range.max } };
  if (task.pending) out.pending = true;
  if (task.processing) out.processing = true;
  out.whenToClean = task.whenToClean;
  if (task.timestamp !== undefined) out.timestamp = task.timestamp;
  out.numOrphanDocs = task.numOrphanDocs;
  out.orphanedSizeBytes = task.orphanedSizeBytes;
  if (task.keyPattern !== undefined) out.keyPattern = task.keyPattern;
  if (task.preMigrationShardVersion !== undefined) out.preMigrationShardVersion = shardVersionToBSON(task.preMigrationShardVersion);
  rangeDeletionTaskFromBSON(out);
  return out;
}

// Not strict, as in MongoDB: fields a newer version adds are ignored. A task written before the
// counters existed reads with none (`hasOrphanCounters`), so startup can count its range once.
export function rangeDeletionTaskFromBSON(raw: unknown): RangeDeletionTask {
  const r = IdlReader.of(STRUCT, raw);
  return {
    _id: r.uuid('_id'),
    nss: r.nss('nss'),
    collectionUuid: r.uuid('collectionUuid'),
    donorShardId: r.shardId('donorShardId'),
    range: r.range('range'),
    pending: r.has('pending') ? r.bool('pending') : false,
    processing: r.has('processing') ? r.bool('processing') : false,
    whenToClean: r.enumValue('whenToClean', CLEAN_WHEN),
    ...(r.has('timestamp') ? { timestamp: r.timestamp('timestamp') } : {}),
    numOrphanDocs: r.has('numOrphanDocs') ? r.count('numOrphanDocs') : 0,
    orphanedSizeBytes: r.has('orphanedSizeBytes') ? r.count('orphanedSizeBytes') : 0,
    ...(r.has('keyPattern') ? { keyPattern: r.doc('keyPattern') } : {}),
    ...(r.has('preMigrationShardVersion') ? { preMigrationShardVersion: shardVersionFromBSON(r.doc('preMigrationShardVersion')) } : {}),
  };
}

export function hasOrphanCounters(raw: Doc): boolean {
  return raw.numOrphanDocs !== undefined;
}

// Until the logical clock arrives with sessions, a task is stamped with the wall clock, made
// strictly increasing within this process.
let lastStamp = { t: 0, i: 0 };
export function taskTimestamp(nowMs: number): Timestamp {
  const t = Math.floor(nowMs / 1000);
  lastStamp = t > lastStamp.t ? { t, i: 1 } : { t: lastStamp.t, i: lastStamp.i + 1 };
  return new Timestamp(lastStamp);
}
