import type { KvStore, KvWriter } from './lmdb/kv_store.js';

// Document count and data size per collection, persisted with each write unit so that count()
// without a filter and collStats need no scan, and survive restarts.
const STATS_TAG = 0x73;

export function statsKey(collectionId: number): Buffer {
  const b = Buffer.allocUnsafe(6);
  b[0] = 0x00;
  b[1] = STATS_TAG;
  b.writeUInt32BE(collectionId, 2);
  return b;
}

export class CollectionStats {
  private readonly cache = new Map<number, { count: number; size: number }>();

  constructor(private readonly kv: KvStore) {}

  get(collectionId: number): { count: number; size: number } {
    const cached = this.cache.get(collectionId);
    if (cached) return cached;
    const raw = this.kv.get(statsKey(collectionId));
    const value = raw ? { count: raw.readDoubleBE(0), size: raw.readDoubleBE(8) } : { count: 0, size: 0 };
    this.cache.set(collectionId, value);
    return value;
  }

  apply(w: KvWriter, collectionId: number, count: number, size: number): void {
    const current = this.get(collectionId);
    const next = { count: current.count + count, size: current.size + size };
    const b = Buffer.allocUnsafe(16);
    b.writeDoubleBE(next.count, 0);
    b.writeDoubleBE(next.size, 8);
    w.put(statsKey(collectionId), b);
    this.cache.set(collectionId, next);
  }

  drop(w: KvWriter, collectionId: number): void {
    w.remove(statsKey(collectionId));
    this.cache.delete(collectionId);
  }

  // After an abort: the next read takes the committed figures from the store again.
  forget(collectionId: number): void {
    this.cache.delete(collectionId);
  }

  // After a restore to an earlier time (restore_to_timestamp.ts), for every collection.
  forgetAll(): void {
    this.cache.clear();
  }
}
