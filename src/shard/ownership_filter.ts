import type { Doc } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType } from '../catalog/type_chunk.js';

// Which shard keys this shard owns for one collection, from its chunks: [min, max) ranges compared
// as key strings. Used to keep a document from changing owner through an update today, and to
// filter orphans on reads when migrations arrive.
export class OwnershipFilter {
  private readonly ranges: { min: Buffer; max: Buffer }[];
  private readonly whole: boolean;

  constructor(readonly pattern: ShardKeyPattern, ownedChunks: readonly ChunkType[]) {
    this.ranges = ownedChunks
      .map((c) => ({ min: pattern.keyString(c.min), max: pattern.keyString(c.max) }))
      .sort((a, b) => Buffer.compare(a.min, b.min));
    this.whole = this.coversKeySpace();
  }

  // True when the owned ranges join up into the whole key space: nothing can be an orphan, so
  // reads need not check each document. Worked out once: every routed read asks.
  ownsEverything(): boolean {
    return this.whole;
  }

  private coversKeySpace(): boolean {
    if (this.ranges.length === 0) return false;
    if (Buffer.compare(this.ranges[0]!.min, this.pattern.keyString(this.pattern.globalMin())) !== 0) return false;
    for (let i = 1; i < this.ranges.length; i++) {
      if (Buffer.compare(this.ranges[i - 1]!.max, this.ranges[i]!.min) !== 0) return false;
    }
    return Buffer.compare(this.ranges[this.ranges.length - 1]!.max, this.pattern.keyString(this.pattern.globalMax())) === 0;
  }

  static of(keyPattern: Doc, ownedChunks: readonly ChunkType[]): OwnershipFilter {
    return new OwnershipFilter(new ShardKeyPattern(keyPattern), ownedChunks);
  }

  ownsKey(shardKey: Doc): boolean {
    const key = this.pattern.keyString(shardKey);
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.ranges[mid]!;
      if (Buffer.compare(key, r.min) < 0) hi = mid - 1;
      else if (Buffer.compare(key, r.max) >= 0) lo = mid + 1;
      else return true;
    }
    return false;
  }

  // True when some owned range meets [min, max): a read holding this filter can still see
  // documents of that range.
  overlaps(min: Doc, max: Doc): boolean {
    const lo = this.pattern.keyString(min);
    const hi = this.pattern.keyString(max);
    return this.ranges.some((r) => Buffer.compare(r.min, hi) < 0 && Buffer.compare(lo, r.max) < 0);
  }

  ownsDocument(doc: Doc): boolean {
    return this.ownsKey(this.pattern.extractShardKeyFromDoc(doc));
  }
}
