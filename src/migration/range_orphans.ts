import type { UUID } from 'bson';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import type { LocalCollections, LocalWriter } from '../query/exec/local_collection.js';
import { prepareFind, type Output } from '../query/exec/find_query.js';
import type { IndexAccess } from '../storage/index_access.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON, type RangeDeletionTask } from './range_deletion_task.js';

// The documents of a range, and the orphan counters range deletion tasks keep for them.

export interface OrphanCount {
  readonly docs: number;
  readonly bytes: number;
}

// The index a range is walked by: the task's shard key pattern, or (a task from before keyPattern
// was kept) the index on the range's fields in their order; never one under a collation, whose
// keys do not order strings as chunk bounds do.
export function rangeIndex(coll: Collection, range: ChunkRange, keyPattern?: Doc): IndexAccess | undefined {
  if (keyPattern !== undefined) {
    const exact = coll.indexes.find((i) => i.collation === undefined && compareValues(i.keyPattern, keyPattern) === 0);
    if (exact !== undefined) return exact;
  }
  const fields = Object.keys(range.min);
  return coll.indexes.find((i) => {
    const keys = Object.keys(i.keyPattern);
    return i.collation === undefined && keys.length === fields.length && keys.every((f, n) => f === fields[n]);
  });
}

// The range's documents in key order (`limit` 0: all), as stored.
export function documentsInRange(storage: StorageEngine, coll: Collection, index: IndexAccess, range: ChunkRange, limit = 0): Iterable<Output> {
  return prepareFind(storage, coll, { filter: {}, hint: index.name, min: range.min, max: range.max, limit, includeHidden: true }).results;
}

// What this shard holds of the range, counted through the index.
export function countRange(storage: StorageEngine, nss: string, range: ChunkRange, keyPattern?: Doc): OrphanCount {
  const coll = storage.getCollection(nss);
  const index = coll === undefined ? undefined : rangeIndex(coll, range, keyPattern);
  if (coll === undefined || index === undefined) return { docs: 0, bytes: 0 };
  let docs = 0;
  let bytes = 0;
  for (const r of documentsInRange(storage, coll, index, range)) {
    docs += 1;
    bytes += r.bytes?.length ?? 0;
  }
  return { docs, bytes };
}

// Adds a change to a task's counters, in the caller's write unit (the one that changed the range).
export function addOrphans(w: LocalWriter, taskId: UUID, change: OrphanCount): void {
  if (change.docs === 0 && change.bytes === 0) return;
  w.update(RANGE_DELETIONS_NS, { _id: taskId }, { $inc: { numOrphanDocs: change.docs, orphanedSizeBytes: change.bytes } });
}

// The orphans of a collection on this shard: the sum over its range deletion tasks, pending or
// ready (a donor's pending task counts none: it still owns the range). collStats reports it as
// `numOrphanDocs`, as MongoDB does.
export function orphansOf(local: LocalCollections, nss: string): OrphanCount {
  let docs = 0;
  let bytes = 0;
  for (const raw of local.find(RANGE_DELETIONS_NS, { nss })) {
    const task = rangeDeletionTaskFromBSON(raw);
    docs += task.numOrphanDocs;
    bytes += task.orphanedSizeBytes;
  }
  return { docs, bytes };
}

// Tasks for the same collection whose range overlaps `range`.
export function overlappingTasks(local: LocalCollections, nss: string, range: ChunkRange): RangeDeletionTask[] {
  return local.find(RANGE_DELETIONS_NS, { nss }).map(rangeDeletionTaskFromBSON)
    .filter((t) => compareValues(t.range.min, range.max) < 0 && compareValues(range.min, t.range.max) < 0);
}
