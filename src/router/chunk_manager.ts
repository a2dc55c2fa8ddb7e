import type { Binary, Double, Int32, Long, ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatValue } from '../bson/format.js';
import { bsonTag, type Doc } from '../bson/values.js';
import { placedAt, shardIdAt } from '../catalog/chunk_history.js';
import { chunkVersion, type ChunkVersion } from '../catalog/chunk_version.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';

// MongoDB's RoutingTableHistory/ChunkManager: one immutable snapshot of a sharded collection's
// routing table. Chunks are sorted by the key string of their min and cut into blocks (MongoDB's
// ChunkMap of ChunkVectors): an incremental refresh rebuilds only the blocks it touches and
// shares the rest with the previous snapshot, since copying a flat array of a million chunks
// alone costs tens of milliseconds. A chunk's max is the next chunk's min (contiguity is checked
// on every build), so the min key strings serve every binary search.
//
// The table as of a cluster time T (`atClusterTime`, MongoDB's ChunkManager with a clusterTime,
// what snapshot reads and transactions target by) shares the chunks of the table it comes from:
// its look-ups answer each chunk with the shard its history names at T (catalog/chunk_history.ts,
// StaleChunkHistory where the history does not reach back to T). Shard versions stay the current
// ones: a shard checks a request's version against what it holds now.
const MAX_BLOCK_SIZE = 512;

interface Block {
  readonly chunks: readonly ChunkType[];
  readonly minKeys: readonly Buffer[];
  // The chunks' min values as doubles, for single-field shard keys whose bounds are all numbers
  // (see numericMin); null when some bound is not; filled on the first numeric look-up.
  numericMins?: Float64Array | null;
}

// A chunk's place: block index and index within the block; {b: blocks.length, i: 0} is the end.
interface Position {
  b: number;
  i: number;
}

export class ChunkManager {
  readonly collection: CollectionType;
  readonly shardKeyPattern: ShardKeyPattern;
  readonly numChunks: number;
  private readonly blocks: readonly Block[];
  private readonly blockMins: readonly Buffer[];
  private readonly globalMaxKey: Buffer;
  private readonly placements: ReadonlyMap<string, ShardPlacement>;
  private readonly version: Timestamp;
  // Per block, its first chunk's min as a double (numericMin); null when some block's is not a
  // number, undefined until the first numeric look-up.
  private numericBlockMins: Float64Array | null | undefined;
  // shardVersionToBSON of each shard's version, which every versioned request carries (shared
  // with the tables at a cluster time made from this one: their versions are the same).
  private readonly versionTokens: Map<string, Doc>;
  // The time this table answers for; undefined for the table as it is now.
  readonly clusterTime: Timestamp | undefined;
  // The table as it is now, which this one (when at a cluster time) was made from.
  private readonly current: ChunkManager;
  // The latest validAfter of any chunk's newest history entry, or an upper bound of it: at or
  // after it the table as of a time is the current table. Worked out on the first look-up at a
  // time; carried over an incremental refresh.
  private newestPlacement: Timestamp | null | undefined;
  // The table at a cluster time last asked for: a transaction's statements all read at one.
  private lastAtClusterTime: ChunkManager | undefined;
  // At a cluster time: the shards owning some chunk then, worked out on the first ask.
  private shardsAtClusterTime: Set<string> | undefined;

  private constructor(
    collection: CollectionType,
    pattern: ShardKeyPattern,
    blocks: readonly Block[],
    placements: ReadonlyMap<string, ShardPlacement>,
    version: Timestamp,
    current?: { table: ChunkManager; at: Timestamp },
  ) {
    this.collection = collection;
    this.shardKeyPattern = pattern;
    this.blocks = blocks;
    this.blockMins = blocks.map((block) => block.minKeys[0]!);
    this.numChunks = blocks.reduce((n, block) => n + block.chunks.length, 0);
    this.globalMaxKey = pattern.keyString(pattern.globalMax());
    this.placements = placements;
    this.version = version;
    this.clusterTime = current?.at;
    this.current = current?.table ?? this;
    this.versionTokens = current?.table.versionTokens ?? new Map();
  }

  // The routing table as of cluster time `at`: this table when no chunk moved (or was merged) after
  // `at`, which is the common case and costs nothing; else a table over the same chunks answering
  // each with its shard at `at`. Pure: the same chunks and time always target the same shards.
  atClusterTime(at: Timestamp): ChunkManager {
    const current = this.current;
    if (current.newestPlacement === undefined) current.newestPlacement = newestPlacement(current.blocks);
    if (current.newestPlacement === null || current.newestPlacement.compare(at) <= 0) return current;
    const last = current.lastAtClusterTime;
    if (last !== undefined && last.clusterTime!.equals(at)) return last;
    const table = new ChunkManager(current.collection, current.shardKeyPattern, current.blocks, current.placements, current.version, { table: current, at });
    current.lastAtClusterTime = table;
    return table;
  }

  // Full build from config.collections + config.chunks (any order).
  static create(collection: CollectionType, chunks: readonly ChunkType[]): ChunkManager {
    const pattern = new ShardKeyPattern(collection.key);
    if (chunks.length === 0) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `No chunks were found for the collection ${collection._id}`);
    }
    const entries = chunks.map((chunk) => ({ chunk, min: pattern.keyString(chunk.min), max: pattern.keyString(chunk.max) }));
    if (!isSortedByMin(entries)) entries.sort((a, b) => Buffer.compare(a.min, b.min));
    checkAllElementsAre('MinKey', entries[0]!.chunk.min);
    for (let i = 1; i < entries.length; i++) checkContiguous(entries[i - 1]!, entries[i]!);
    checkAllElementsAre('MaxKey', entries[entries.length - 1]!.chunk.max);

    const placements = new Map<string, ShardPlacement>();
    let version = entries[0]!.chunk.lastmod;
    for (const { chunk } of entries) {
      addToPlacement(placements, chunk);
      if (compareLastmods(chunk.lastmod, version) > 0) version = chunk.lastmod;
    }
    return new ChunkManager(collection, pattern, cutIntoBlocks(entries.map((e) => e.chunk), entries.map((e) => e.min)), placements, version);
  }

  get epoch(): ObjectId {
    return this.collection.lastmodEpoch;
  }

  get timestamp(): Timestamp {
    return this.collection.timestamp;
  }

  get uuid(): Binary {
    return this.collection.uuid;
  }

  get keyPattern(): Doc {
    return this.collection.key;
  }

  get ns(): string {
    return this.collection._id;
  }

  collectionVersion(): ChunkVersion {
    return this.versionOf(this.version);
  }

  // The highest lastmod among the shard's chunks; 0|0 of the same generation when it owns none
  // (RoutingTableHistory::_getVersion).
  shardVersion(shardId: string): ChunkVersion {
    const placement = this.placements.get(shardId);
    return placement ? this.versionOf(placement.version) : chunkVersion(this.epoch, this.timestamp, 0, 0);
  }

  // The shards owning some chunk (at the table's cluster time, when it has one: then every chunk's
  // history must reach back to it).
  getAllShardIds(): Set<string> {
    if (this.clusterTime === undefined) return new Set(this.placements.keys());
    if (this.shardsAtClusterTime === undefined) {
      const shards = new Set<string>();
      for (const block of this.blocks) for (const c of block.chunks) shards.add(shardIdAt(c, this.clusterTime));
      this.shardsAtClusterTime = shards;
    }
    return new Set(this.shardsAtClusterTime);
  }

  // Every chunk in shard key order (a fresh array: O(number of chunks)), as they are now.
  allChunks(): ChunkType[] {
    return this.blocks.flatMap((block) => block.chunks);
  }

  // The shard's chunks as they are now.
  chunksOnShard(shardId: string): ChunkType[] {
    return this.blocks.flatMap((block) => block.chunks.filter((c) => c.shard === shardId));
  }

  // The chunk whose [min, max) holds the key. A key equal to the global max belongs to no chunk.
  findIntersectingChunk(shardKey: Doc): ChunkType {
    const key = this.shardKeyPattern.keyString(shardKey);
    const pos = this.positionContaining(key);
    if (pos === undefined || Buffer.compare(key, this.maxKeyAt(pos)) >= 0) {
      throw new MongoError(ErrorCodes.ShardKeyNotFound, `Cannot target single shard using key ${formatValue(shardKey)} for namespace ${this.ns}`);
    }
    return this.placed(this.chunkAt(pos));
  }

  // The chunk as this table answers it: at a cluster time, with the shard that owned it then (a
  // copy only when that is not where it is now).
  private placed(chunk: ChunkType): ChunkType {
    if (this.clusterTime === undefined) return chunk;
    const shard = shardIdAt(chunk, this.clusterTime);
    return shard === chunk.shard ? chunk : { ...chunk, shard };
  }

  // findIntersectingChunk(...) for a single-field, unhashed shard key and a number (JS
  // number or Double, not NaN), without building the key string: a binary search over the
  // chunks' min values as doubles. Numbers order among themselves by value in key strings too,
  // and MinKey (only ever the first chunk's min) precedes them all, like -Infinity does here
  // because the search takes the last min <= key. Undefined when this path does not apply (the
  // key or a bound on the way is not a plain number): the caller then takes the general one.
  chunkForNumericKey(value: number): ChunkType | undefined {
    if (Number.isNaN(value) || this.shardKeyPattern.fields.length !== 1 || this.shardKeyPattern.isHashed) return undefined;
    let blockMins = this.numericBlockMins;
    if (blockMins === undefined) blockMins = this.numericBlockMins = numericMins(this.blocks.map((block) => block.chunks[0]!), this.shardKeyPattern.fields[0]!);
    if (blockMins === null) return undefined;
    const b = upperBoundNumeric(blockMins, value) - 1;
    if (b < 0) return undefined;
    const block = this.blocks[b]!;
    let mins = block.numericMins;
    if (mins === undefined) mins = block.numericMins = numericMins(block.chunks, this.shardKeyPattern.fields[0]!);
    if (mins === null) return undefined;
    const i = upperBoundNumeric(mins, value) - 1;
    return i < 0 ? undefined : this.placed(block.chunks[i]!);
  }

  shardForNumericKey(value: number): string | undefined {
    return this.chunkForNumericKey(value)?.shard;
  }

  // versionFields' token for a shard: built once per routing table and shard (never mutated).
  shardVersionToken(shardId: string, build: (v: ChunkVersion) => Doc): Doc {
    let token = this.versionTokens.get(shardId);
    if (token === undefined) this.versionTokens.set(shardId, token = build(this.shardVersion(shardId)));
    return token;
  }

  // Shards owning some chunk that intersects [min, max] (or [min, max) when !maxInclusive).
  getShardIdsForRange(min: Doc, max: Doc, maxInclusive = true): Set<string> {
    if (allElementsAre('MinKey', min) && allElementsAre('MaxKey', max)) return this.getAllShardIds();
    const pattern = this.shardKeyPattern;
    return this.shardIdsForKeyRange(pattern.keyString(min), pattern.keyString(max), maxInclusive);
  }

  // getShardIdsForRange for bounds already turned into key strings (the targeter's ranges).
  shardIdsForKeyRange(minKey: Buffer, maxKey: Buffer, maxInclusive: boolean, into = new Set<string>()): Set<string> {
    // At a cluster time the number of owners then is not known without reading every chunk's
    // history, which a chunk outside the range may lack: no early stop.
    const owners = this.clusterTime === undefined ? this.placements.size : Infinity;
    const start = this.positionContaining(minKey) ?? { b: 0, i: 0 };
    for (let b = start.b; b < this.blocks.length; b++) {
      const block = this.blocks[b]!;
      for (let i = b === start.b ? start.i : 0; i < block.chunks.length; i++) {
        const c = Buffer.compare(block.minKeys[i]!, maxKey);
        if (c > 0 || (c === 0 && !maxInclusive)) return into;
        into.add(this.placed(block.chunks[i]!).shard);
        if (into.size === owners) return into;
      }
    }
    return into;
  }

  // The chunks that intersect [minKey, maxKey] (or [minKey, maxKey) when !maxInclusive), in key
  // order, appended to `into` until it holds `limit`.
  chunksForKeyRange(minKey: Buffer, maxKey: Buffer, maxInclusive: boolean, into: ChunkType[], limit: number): void {
    const start = this.positionContaining(minKey) ?? { b: 0, i: 0 };
    for (let b = start.b; b < this.blocks.length; b++) {
      const block = this.blocks[b]!;
      for (let i = b === start.b ? start.i : 0; i < block.chunks.length; i++) {
        const c = Buffer.compare(block.minKeys[i]!, maxKey);
        if (c > 0 || (c === 0 && !maxInclusive) || into.length >= limit) return;
        into.push(this.placed(block.chunks[i]!));
      }
    }
  }

  // Incremental refresh (ChunkMap::createMerged): `changed` are the chunks whose lastmod is at
  // least this collection version, read from the config server. Each replaces every chunk it
  // overlaps; the result must again cover the key space exactly, otherwise the caller's read was
  // inconsistent and it must reload everything. `collection` may carry new options of the same
  // collection generation.
  applyChunkChanges(changed: readonly ChunkType[], collection: CollectionType = this.collection): ChunkManager {
    if (this.clusterTime !== undefined) throw new Error('a routing table at a cluster time is never refreshed: refresh the current one');
    if (!collection.lastmodEpoch.equals(this.epoch) || !collection.timestamp.equals(this.timestamp)) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `Collection ${this.ns} changed generation; the routing table must be reloaded`);
    }
    for (const chunk of changed) {
      if (compareLastmods(chunk.lastmod, this.version) < 0) {
        throw new MongoError(
          ErrorCodes.Location626840,
          `Changed chunk ${formatRange(chunk)} doesn't have version that's greater or equal than that of the collection ${formatLastmod(this.version)}`,
        );
      }
    }
    const updates = this.flatten(changed);
    const edits = this.editsFor(updates);
    for (const edit of edits) this.checkEdit(edit);

    const placements = new Map<string, ShardPlacement>();
    for (const [shard, p] of this.placements) placements.set(shard, { ...p });
    const dirty = new Set<string>();
    for (const edit of edits) this.forEachChunkIn(edit.from, edit.to, (chunk) => removeFromPlacement(placements, chunk, dirty));
    let version = this.version;
    for (const u of updates) {
      if (addToPlacement(placements, u.chunk)) dirty.delete(u.chunk.shard);
      if (compareLastmods(u.chunk.lastmod, version) > 0) version = u.chunk.lastmod;
    }
    const next = new ChunkManager(collection, this.shardKeyPattern, this.blocksWith(edits), placements, version);
    for (const shard of dirty) placements.get(shard)!.version = next.highestLastmodOn(shard);
    // An upper bound stays one: the chunks that went had placements no later than it.
    if (this.newestPlacement !== undefined) next.newestPlacement = later(this.newestPlacement, newestPlacement([{ chunks: updates.map((u) => u.chunk), minKeys: [] }]));
    return next;
  }

  private versionOf(lastmod: Timestamp): ChunkVersion {
    return chunkVersion(this.epoch, this.timestamp, lastmod.t, lastmod.i);
  }

  private chunkAt(pos: Position): ChunkType {
    return this.blocks[pos.b]!.chunks[pos.i]!;
  }

  private minKeyAt(pos: Position): Buffer {
    return pos.b < this.blocks.length ? this.blocks[pos.b]!.minKeys[pos.i]! : this.globalMaxKey;
  }

  private maxKeyAt(pos: Position): Buffer {
    return this.minKeyAt(this.after(pos));
  }

  private after(pos: Position): Position {
    return pos.i + 1 < this.blocks[pos.b]!.chunks.length ? { b: pos.b, i: pos.i + 1 } : { b: pos.b + 1, i: 0 };
  }

  private before(pos: Position): Position {
    return pos.i > 0 ? { b: pos.b, i: pos.i - 1 } : { b: pos.b - 1, i: this.blocks[pos.b - 1]!.chunks.length - 1 };
  }

  // The last chunk whose min is <= key; undefined when key precedes them all.
  private positionContaining(key: Buffer): Position | undefined {
    const b = upperBound(this.blockMins, key) - 1;
    if (b < 0) return undefined;
    return { b, i: upperBound(this.blocks[b]!.minKeys, key) - 1 };
  }

  // The first chunk whose min is >= key (possibly the end).
  private lowerBound(key: Buffer): Position {
    const pos = this.positionContaining(key);
    if (pos === undefined) return { b: 0, i: 0 };
    return Buffer.compare(this.minKeyAt(pos), key) === 0 ? pos : this.after(pos);
  }

  private forEachChunkIn(from: Position, to: Position, fn: (chunk: ChunkType) => void): void {
    for (let pos = from; comparePositions(pos, to) < 0; pos = this.after(pos)) fn(this.chunkAt(pos));
  }

  private highestLastmodOn(shard: string): Timestamp {
    let version: Timestamp | undefined;
    for (const block of this.blocks) {
      for (const chunk of block.chunks) {
        if (chunk.shard === shard && (version === undefined || compareLastmods(chunk.lastmod, version) > 0)) version = chunk.lastmod;
      }
    }
    return version!;
  }

  // Sorted by min; of two overlapping changed chunks only the newer survives (a diff may carry a
  // chunk and its own successor).
  private flatten(changed: readonly ChunkType[]): Entry[] {
    const pattern = this.shardKeyPattern;
    const entries = changed
      .map((chunk) => ({ chunk, min: pattern.keyString(chunk.min), max: pattern.keyString(chunk.max) }))
      .sort((a, b) => Buffer.compare(a.min, b.min));
    const out: Entry[] = [];
    for (const e of entries) {
      const last = out[out.length - 1];
      if (last && Buffer.compare(e.min, last.max) < 0) {
        if (compareLastmods(e.chunk.lastmod, last.chunk.lastmod) > 0) out[out.length - 1] = e;
        continue;
      }
      out.push(e);
    }
    return out;
  }

  // Each run of updates that overlap or touch the same old chunks becomes one edit: old chunks
  // [from, to) give way to them. Separate edits are then apart by at least one untouched chunk.
  private editsFor(updates: readonly Entry[]): Edit[] {
    const edits: Edit[] = [];
    for (const u of updates) {
      const from = this.positionContaining(u.min) ?? { b: 0, i: 0 };
      const end = this.lowerBound(u.max);
      const to = comparePositions(end, from) > 0 ? end : from;
      const last = edits[edits.length - 1];
      if (last && comparePositions(from, last.to) <= 0) {
        if (comparePositions(to, last.to) > 0) last.to = to;
        last.insert.push(u);
      } else {
        edits.push({ from, to, insert: [u] });
      }
    }
    return edits;
  }

  // The inserted run must fit exactly where the old chunks [from, to) were: from the untouched
  // chunk before (whose max is the old min at `from`) to the untouched chunk after.
  private checkEdit(edit: Edit): void {
    const first = edit.insert[0]!;
    if (edit.from.b === 0 && edit.from.i === 0) {
      checkAllElementsAre('MinKey', first.chunk.min);
    } else {
      const prev = this.before(edit.from);
      checkContiguous({ chunk: this.chunkAt(prev), min: this.minKeyAt(prev), max: this.minKeyAt(edit.from) }, first);
    }
    for (let k = 1; k < edit.insert.length; k++) checkContiguous(edit.insert[k - 1]!, edit.insert[k]!);
    const last = edit.insert[edit.insert.length - 1]!;
    if (edit.to.b === this.blocks.length) checkAllElementsAre('MaxKey', last.chunk.max);
    else checkContiguous(last, { chunk: this.chunkAt(edit.to), min: this.minKeyAt(edit.to), max: this.maxKeyAt(edit.to) });
  }

  // New block list: untouched blocks are shared; the blocks an edit touches are rebuilt from
  // their untouched chunks and the inserted ones. A rebuilt run under half a block joins the
  // block before it, so repeated merges do not fragment the table.
  private blocksWith(edits: readonly Edit[]): Block[] {
    const out: Block[] = [];
    let nextBlock = 0;
    let k = 0;
    while (k < edits.length) {
      const firstBlock = edits[k]!.from.b;
      let lastBlock = lastBlockTouched(edits[k]!);
      let j = k + 1;
      while (j < edits.length && edits[j]!.from.b <= lastBlock) lastBlock = Math.max(lastBlock, lastBlockTouched(edits[j++]!));
      for (; nextBlock < firstBlock; nextBlock++) out.push(this.blocks[nextBlock]!);

      const chunks: ChunkType[] = [];
      const minKeys: Buffer[] = [];
      let pos: Position = { b: firstBlock, i: 0 };
      const end: Position = { b: lastBlock + 1, i: 0 };
      for (; k < j; k++) {
        const edit = edits[k]!;
        for (; comparePositions(pos, edit.from) < 0; pos = this.after(pos)) {
          chunks.push(this.chunkAt(pos));
          minKeys.push(this.minKeyAt(pos));
        }
        for (const u of edit.insert) {
          chunks.push(u.chunk);
          minKeys.push(u.min);
        }
        pos = edit.to;
      }
      for (; comparePositions(pos, end) < 0; pos = this.after(pos)) {
        chunks.push(this.chunkAt(pos));
        minKeys.push(this.minKeyAt(pos));
      }
      const prev = out[out.length - 1];
      if (prev && chunks.length < MAX_BLOCK_SIZE / 2) {
        out.pop();
        chunks.unshift(...prev.chunks);
        minKeys.unshift(...prev.minKeys);
      }
      out.push(...cutIntoBlocks(chunks, minKeys));
      nextBlock = lastBlock + 1;
    }
    for (; nextBlock < this.blocks.length; nextBlock++) out.push(this.blocks[nextBlock]!);
    return out;
  }
}

interface Entry {
  chunk: ChunkType;
  min: Buffer;
  max: Buffer;
}

interface Edit {
  from: Position;
  to: Position;
  insert: Entry[];
}

interface ShardPlacement {
  count: number;
  version: Timestamp;
}

function comparePositions(a: Position, b: Position): number {
  return a.b !== b.b ? a.b - b.b : a.i - b.i;
}

// The last block holding a chunk of [from, to), or from's block when the edit removes nothing.
function lastBlockTouched(edit: Edit): number {
  return Math.max(edit.from.b, edit.to.i === 0 ? edit.to.b - 1 : edit.to.b);
}

// Index of the first key > key.
function upperBound(keys: readonly Buffer[], key: Buffer): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(keys[mid]!, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Index of the first value > key.
function upperBoundNumeric(values: Float64Array, key: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The chunks' mins on `field` as doubles, or null when one is not exactly a non-NaN number (an
// int64 beyond 2^53, a decimal, another type). MinKey becomes -Infinity: it is only ever the
// first chunk's min, and a search for the last min <= key still lands on the right chunk.
function numericMins(chunks: readonly ChunkType[], field: string): Float64Array | null {
  const out = new Float64Array(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const v = numericMin(chunks[i]!.min[field]);
    if (v === undefined) return null;
    out[i] = v;
  }
  return out;
}

function numericMin(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isNaN(v) ? undefined : v;
  switch (bsonTag(v)) {
    case 'MinKey': return -Infinity;
    case 'Double': {
      const d = (v as Double).value;
      return Number.isNaN(d) ? undefined : d;
    }
    case 'Int32': return (v as Int32).value;
    case 'Long': {
      const n = (v as Long).toNumber();
      return Number.isSafeInteger(n) ? n : undefined;
    }
    default: return undefined;
  }
}

// The latest time any of the chunks took its current placement; null when none has a history.
function newestPlacement(blocks: readonly Block[]): Timestamp | null {
  let newest: Timestamp | null = null;
  for (const block of blocks) {
    for (const chunk of block.chunks) {
      const at = placedAt(chunk);
      if (at !== undefined && (newest === null || at.compare(newest) > 0)) newest = at;
    }
  }
  return newest;
}

function later(a: Timestamp | null, b: Timestamp | null): Timestamp | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.compare(b) >= 0 ? a : b;
}

// Pieces of near-equal size, none over MAX_BLOCK_SIZE.
function cutIntoBlocks(chunks: readonly ChunkType[], minKeys: readonly Buffer[]): Block[] {
  const pieces = Math.ceil(chunks.length / MAX_BLOCK_SIZE);
  const blocks: Block[] = [];
  for (let p = 0; p < pieces; p++) {
    const start = Math.floor((p * chunks.length) / pieces);
    const end = Math.floor(((p + 1) * chunks.length) / pieces);
    blocks.push({ chunks: chunks.slice(start, end), minKeys: minKeys.slice(start, end) });
  }
  return blocks;
}

// True when the shard's version is now carried by this chunk.
function addToPlacement(placements: Map<string, ShardPlacement>, chunk: ChunkType): boolean {
  const p = placements.get(chunk.shard);
  if (!p) {
    placements.set(chunk.shard, { count: 1, version: chunk.lastmod });
    return true;
  }
  p.count++;
  if (compareLastmods(chunk.lastmod, p.version) < 0) return false;
  p.version = chunk.lastmod;
  return true;
}

// A shard that loses the chunk carrying its version is `dirty` until a newer chunk of its own
// arrives; if none does (MongoDB's protocol always bumps a donor's remaining chunk, so this is
// rare) its version is recomputed by a full scan.
function removeFromPlacement(placements: Map<string, ShardPlacement>, chunk: ChunkType, dirty: Set<string>): void {
  const p = placements.get(chunk.shard)!;
  p.count--;
  if (p.count === 0) {
    placements.delete(chunk.shard);
    dirty.delete(chunk.shard);
  } else if (compareLastmods(chunk.lastmod, p.version) === 0) {
    dirty.add(chunk.shard);
  }
}

function isSortedByMin(entries: readonly Entry[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if (Buffer.compare(entries[i - 1]!.min, entries[i]!.min) > 0) return false;
  }
  return true;
}

function checkContiguous(left: Entry, right: Entry): void {
  const c = Buffer.compare(left.max, right.min);
  if (c === 0) return;
  throw new MongoError(
    ErrorCodes.ConflictingOperationInProgress,
    `${c < 0 ? 'Gap' : 'Overlap'} exists in the routing table between chunks ${formatRange(left.chunk)} and ${formatRange(right.chunk)}`,
  );
}

function allElementsAre(type: 'MinKey' | 'MaxKey', key: Doc): boolean {
  return Object.values(key).every((v) => bsonTag(v) === type);
}

function checkAllElementsAre(type: 'MinKey' | 'MaxKey', key: Doc): void {
  if (!allElementsAre(type, key)) {
    throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `Not all elements of ${formatValue(key)} are of type ${type}`);
  }
}

// Placement order of two lastmods of one generation: major, then minor.
export function compareLastmods(a: Timestamp, b: Timestamp): number {
  if (a.t !== b.t) return a.t < b.t ? -1 : 1;
  if (a.i !== b.i) return a.i < b.i ? -1 : 1;
  return 0;
}

function formatRange(chunk: ChunkType): string {
  return `[${formatValue(chunk.min)}, ${formatValue(chunk.max)})`;
}

function formatLastmod(t: Timestamp): string {
  return `${t.t}|${t.i}`;
}
