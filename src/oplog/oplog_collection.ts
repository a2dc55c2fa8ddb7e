import type { Timestamp } from 'bson';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import { OPLOG_NS } from './oplog_entry.js';
import { tsOfRecord } from './oplog_reads.js';

// local.oplog.rs itself: a capped collection of `--oplogSize` MB without an _id index (its
// entries have none; MongoDB creates it with autoIndexId: false too), whose oldest entries go
// only while they are at or before the truncate bound (the majority commit point): past it the
// cap is exceeded rather than lose an entry a majority may not hold.

// MongoDB picks 5% of the disk (at least 990 MB, at most 50 GB); docshard takes a fixed default.
export const DEFAULT_OPLOG_SIZE_MB = 1024;

export function ensureOplogCollection(storage: StorageEngine, sizeMB: number): Collection {
  return storage.getCollection(OPLOG_NS) ?? storage.createCollection(OPLOG_NS, { capped: true, size: sizeMB * 1024 * 1024, autoIndexId: false });
}

// The bound capping may remove entries up to; none before the driver sets one.
export class TruncateBound {
  private bound: Timestamp | undefined;

  set(ts: Timestamp | undefined): void {
    this.bound = ts;
  }

  guard(coll: Collection): void {
    coll.mayEvict = (oldest) => this.bound !== undefined && tsOfRecord(oldest).lessThanOrEqual(this.bound);
  }
}
