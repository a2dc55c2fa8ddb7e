import type { Timestamp, UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import type { ChunkRange } from '../config/chunk_range.js';
import { IdlReader } from './idl_reader.js';

// A range one shard must delete once the migration that named it is decided (MongoDB's
// RangeDeletionTask in config.rangeDeletions). Both shards write one, keyed by the migration id,
// before any document moves: the donor's is for the range it gives away (deleted on abort, made
// ready on commit), the recipient's for what it copied in (deleted on commit, made ready on abort).
// `pending` tasks are never executed; the range deleter only runs tasks that are not pending.
export type CleanWhen = 'now' | 'delayed';

export const RANGE_DELETIONS_NS = 'config.rangeDeletions';

export interface RangeDeletionTask {
  readonly _id: UUID;
  readonly nss: string;
  readonly collectionUuid: UUID;
  readonly donorShardId: string;
  readonly range: ChunkRange;
  readonly pending: boolean;
  readonly whenToClean: CleanWhen;
  readonly timestamp?: Timestamp;
}

const STRUCT = 'rangeDeletionTask';
const CLEAN_WHEN: readonly CleanWhen[] = ['now', 'delayed'];

// `pending` is present only while true, as in MongoDB, where marking a task ready unsets it.
// Validates on the way out too (by reading the result back), so nothing invalid reaches disk.
export function rangeDeletionTaskToBSON(task: RangeDeletionTask): Doc {
  const out: Doc = { _id: task._id, nss: task.nss, collectionUuid: task.collectionUuid, donorShardId: task.donorShardId, range: { min: task.range.min, max: task.range.max } };
  if (task.pending) out.pending = true;
  out.whenToClean = task.whenToClean;
  if (task.timestamp !== undefined) out.timestamp = task.timestamp;
  rangeDeletionTaskFromBSON(out);
  return out;
}

// Not strict, as in MongoDB: fields a newer version adds (processing, numOrphanDocs) are ignored.
export function rangeDeletionTaskFromBSON(raw: unknown): RangeDeletionTask {
  const r = IdlReader.of(STRUCT, raw);
  return {
    _id: r.uuid('_id'),
    nss: r.nss('nss'),
    collectionUuid: r.uuid('collectionUuid'),
    donorShardId: r.shardId('donorShardId'),
    range: r.range('range'),
    pending: r.has('pending') ? r.bool('pending') : false,
    whenToClean: r.enumValue('whenToClean', CLEAN_WHEN),
    ...(r.has('timestamp') ? { timestamp: r.timestamp('timestamp') } : {}),
  };
}
