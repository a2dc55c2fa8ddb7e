import type { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { ownerAt, placedAt, staleChunkHistory } from '../catalog/chunk_history.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType } from '../catalog/type_chunk.js';

interface KeyRange {
  min: Buffer;
  max: Buffer;
}

// Every chunk of the collection (with its history) and this shard's name: what the ownership as of
// an earlier cluster time is worked out from.
interface Placement {
  readonly chunks: readonly ChunkType[];
  readonly shardId: string;
  // The latest validAfter of any chunk's newest history entry: at or after it, ownership is as now.
  readonly newest: Timestamp | undefined;
}

// Which shard keys this shard owns for one collection, from its chunks: [min, max) ranges compared
// as key strings. Used to keep a document from changing owner through an update today, and to
// filter orphans on reads when migrations arrive. A snapshot read or a transaction reading at
// cluster time T filters by the ownership as of T (`atClusterTime`, MongoDB's filtering metadata
// at a cluster time): a range this shard donated after T is still its own at T, and its snapshot
// still holds those documents; a range it received after T is not.
export class OwnershipFilter {
  private readonly ranges: KeyRange[];
  // At a cluster time: the ranges of chunks whose history does not reach back to it. A document
  // there cannot be judged, and a read that meets one fails with StaleChunkHistory, as MongoDB's
  // keyBelongsToMe does.
  private readonly unknown: KeyRange[];
  private readonly whole: boolean;
  // The ownership at the cluster time last asked for: a transaction's statements all read at one.
  private lastAtClusterTime: OwnershipFilter | undefined;

  constructor(
    readonly pattern: ShardKeyPattern,
    ownedChunks: readonly ChunkType[],
    private readonly placement?: Placement,
    readonly clusterTime?: Timestamp,
    unknownChunks: readonly ChunkType[] = [],
  ) {
    this.ranges = sortedRanges(pattern, ownedChunks);
    this.unknown = sortedRanges(pattern, unknownChunks);
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

  // The ownership of shard `shardId` now, from all the collection's chunks, which it keeps for
  // `atClusterTime`.
  static forShard(keyPattern: Doc, chunks: readonly ChunkType[], shardId: string): OwnershipFilter {
    let newest: Timestamp | undefined;
    for (const c of chunks) {
      const at = placedAt(c);
      if (at !== undefined && (newest === undefined || at.compare(newest) > 0)) newest = at;
    }
    return new OwnershipFilter(new ShardKeyPattern(keyPattern), chunks.filter((c) => c.shard === shardId), { chunks, shardId, newest });
  }

  // The ownership as of cluster time `at`: this filter when no chunk changed hands (or was merged)
  // after `at` or when the chunks are not known, else the ranges whose history names this shard at
  // `at`. Pure; the last one asked for is kept.
  atClusterTime(at: Timestamp): OwnershipFilter {
    const placement = this.placement;
    if (placement === undefined || this.clusterTime !== undefined || placement.newest === undefined || placement.newest.compare(at) <= 0) return this;
    if (this.lastAtClusterTime?.clusterTime!.equals(at)) return this.lastAtClusterTime;
    const owned: ChunkType[] = [];
    const unknown: ChunkType[] = [];
    for (const c of placement.chunks) {
      const owner = ownerAt(c, at);
      if (owner === undefined) unknown.push(c);
      else if (owner === placement.shardId) owned.push(c);
    }
    return this.lastAtClusterTime = new OwnershipFilter(this.pattern, owned, undefined, at, unknown);
  }

  ownsKey(shardKey: Doc): boolean {
    const key = this.pattern.keyString(shardKey);
    if (rangeHolding(this.ranges, key)) return true;
    if (this.unknown.length > 0 && rangeHolding(this.unknown, key)) throw staleChunkHistory(this.clusterTime!);
    return false;
  }

  // True when some owned range (or one whose owner is unknown) meets [min, max): a read holding
  // this filter can still see documents of that range.
  overlaps(min: Doc, max: Doc): boolean {
    const lo = this.pattern.keyString(min);
    const hi = this.pattern.keyString(max);
    const meets = (r: KeyRange): boolean => Buffer.compare(r.min, hi) < 0 && Buffer.compare(lo, r.max) < 0;
    return this.ranges.some(meets) || this.unknown.some(meets);
  }

  ownsDocument(doc: Doc): boolean {
    return this.ownsKey(this.pattern.extractShardKeyFromDoc(doc));
  }
}

function sortedRanges(pattern: ShardKeyPattern, chunks: readonly ChunkType[]): KeyRange[] {
  return chunks
    .map((c) => ({ min: pattern.keyString(c.min), max: pattern.keyString(c.max) }))
    .sort((a, b) => Buffer.compare(a.min, b.min));
}

function rangeHolding(ranges: readonly KeyRange[], key: Buffer): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid]!;
    if (Buffer.compare(key, r.min) < 0) hi = mid - 1;
    else if (Buffer.compare(key, r.max) >= 0) lo = mid + 1;
    else return true;
  }
  return false;
}
