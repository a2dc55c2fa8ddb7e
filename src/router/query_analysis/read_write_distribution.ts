import { Binary, ObjectId, Timestamp } from 'bson';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { ShardKeyPattern, valueAtPath } from '../../catalog/shard_key_pattern.js';
import type { ChunkType } from '../../catalog/type_chunk.js';
import { diffChangesPath } from '../../query/update/index.js';
import { ChunkManager } from '../chunk_manager.js';
import { rangesForQuery } from '../targeter.js';
import { roundMetric } from './key_characteristics.js';

// analyzeShardKey's readDistribution and writeDistribution (MongoDB's
// analyze_shard_key_read_write_distribution): the candidate key's values cut into
// analyzeShardKeyNumRanges ranges of about as many documents each, and every sampled query
// targeted over those ranges as a router would target it: single-shard when it pins the whole
// key (under the simple collation, or on values no collation changes), scatter-gather when it
// leaves the key's first field unbounded, multi-shard otherwise.

// analyzeShardKeyNumRanges's default.
export const NUM_RANGES = 100;

// Split points cutting `ordered` (the key's distinct values in key order, with their frequencies)
// into `numRanges` ranges of about numDocs / numRanges documents; fewer when the values are too
// few (a value is never split).
export function splitPointsFor(ordered: readonly { key: Doc; frequency: number }[], numRanges = NUM_RANGES): Doc[] {
  const numDocs = ordered.reduce((s, v) => s + v.frequency, 0);
  const splitPoints: Doc[] = [];
  let before = 0;
  let next = 1;
  for (const value of ordered) {
    if (before > 0 && next < numRanges && before >= (next * numDocs) / numRanges) {
      splitPoints.push(value.key);
      while (next < numRanges && before >= (next * numDocs) / numRanges) next++;
    }
    before += value.frequency;
  }
  return splitPoints;
}

// A routing table of the ranges, each its own "shard", to target sampled queries over.
export function rangesTable(ns: string, keyPattern: Doc, splitPoints: readonly Doc[]): ChunkManager {
  const pattern = new ShardKeyPattern(keyPattern);
  const uuid = new Binary(Buffer.alloc(16), 4);
  const bounds = [pattern.globalMin(), ...splitPoints, pattern.globalMax()];
  const chunks: ChunkType[] = bounds.slice(1).map((max, i) => ({
    _id: new ObjectId(), uuid, min: bounds[i]!, max, shard: `range${i}`, lastmod: new Timestamp({ t: 1, i }),
    onCurrentShardSince: new Timestamp({ t: 0, i: 0 }), history: [],
  }));
  const collection = { _id: ns, lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp: new Timestamp({ t: 1, i: 0 }), uuid, key: keyPattern, unique: false };
  return ChunkManager.create(collection, chunks);
}

type Targeting = 'single' | 'multi' | 'scatter';

class RangeCounts {
  readonly byRange: number[];
  single = 0;
  multi = 0;
  scatter = 0;

  constructor(readonly table: ChunkManager) {
    this.byRange = new Array<number>(table.numChunks).fill(0);
  }

  // How `filter` targets the ranges; `replacement`, a replacement update's new document, pins the
  // key when the filter does not.
  add(filter: Doc, collation: Doc, replacement?: Doc): { targeting: Targeting; pinsKey: boolean } {
    const pattern = this.table.shardKeyPattern;
    const exact = pattern.extractShardKeyFromQuery(filter) ?? (replacement === undefined ? undefined : keyOfDocument(pattern, replacement));
    if (exact !== undefined) {
      this.count(this.table.findIntersectingChunk(exact));
      const targeting = isSimple(collation) || !collatable(pattern, exact) ? 'single' : 'multi';
      this[targeting]++;
      return { targeting, pinsKey: true };
    }
    const { chunks, wholeKeySpace } = rangesForQuery(this.table, filter);
    for (const chunk of chunks) this.count(chunk);
    const targeting = wholeKeySpace ? 'scatter' : 'multi';
    this[targeting]++;
    return { targeting, pinsKey: false };
  }

  // MongoDB's targeting shares and per-range counts, named for reads or writes.
  shares(of: 'Reads' | 'Writes', total: number): Doc {
    return {
      [`percentageOfSingleShard${of}`]: percentage(this.single, total),
      [`percentageOfMultiShard${of}`]: percentage(this.multi, total),
      [`percentageOfScatterGather${of}`]: percentage(this.scatter, total),
      [`num${of}ByRange`]: [...this.byRange],
    };
  }

  private count(chunk: ChunkType): void {
    this.byRange[Number(chunk.shard.slice('range'.length))]! += 1;
  }
}

function percentage(part: number, total: number): number {
  return roundMetric((part / total) * 100);
}

export class ReadDistribution {
  private readonly counts: RangeCounts;
  private readonly sampleSize = { total: 0, find: 0, aggregate: 0, count: 0, distinct: 0 };

  constructor(table: ChunkManager) {
    this.counts = new RangeCounts(table);
  }

  add(cmdName: string, cmd: Doc): void {
    if (!(cmdName in this.sampleSize) || cmdName === 'total') return;
    this.sampleSize[cmdName as 'find']++;
    this.sampleSize.total++;
    this.counts.add(docOr(cmd.filter), docOr(cmd.collation));
  }

  metrics(): Doc {
    const { total } = this.sampleSize;
    const out: Doc = { sampleSize: { ...this.sampleSize } };
    if (total === 0) return out;
    return { ...out, ...this.counts.shares('Reads', total) };
  }
}

export class WriteDistribution {
  private readonly counts: RangeCounts;
  private readonly sampleSize = { total: 0, update: 0, delete: 0, findAndModify: 0 };
  private shardKeyUpdates = 0;
  private singleWithoutShardKey = 0;
  private multiWithoutShardKey = 0;

  constructor(table: ChunkManager) {
    this.counts = new RangeCounts(table);
  }

  // `diff`: what the sampled update changed in the document it wrote, as its shard recorded it.
  add(cmdName: string, cmd: Doc, diff?: Doc): void {
    if (cmdName === 'update') {
      for (const op of statements(cmd.updates)) {
        const replacement = isPlainObject(op.u) && !Object.keys(op.u).some((k) => k.startsWith('$')) && op.upsert !== true ? op.u : undefined;
        this.one('update', docOr(op.q), docOr(op.collation), op.multi === true, replacement);
      }
    } else if (cmdName === 'delete') {
      for (const op of statements(cmd.deletes)) this.one('delete', docOr(op.q), docOr(op.collation), op.limit === 0);
    } else if (cmdName === 'findAndModify') {
      this.one('findAndModify', docOr(cmd.query), docOr(cmd.collation), false);
    }
    if (diff !== undefined && this.counts.table.shardKeyPattern.fields.some((f) => diffChangesPath(diff, f))) this.shardKeyUpdates++;
  }

  private one(cmdName: 'update' | 'delete' | 'findAndModify', filter: Doc, collation: Doc, multi: boolean, replacement?: Doc): void {
    this.sampleSize[cmdName]++;
    this.sampleSize.total++;
    if (this.counts.add(filter, collation, replacement).pinsKey) return;
    if (multi) this.multiWithoutShardKey++;
    else this.singleWithoutShardKey++;
  }

  metrics(): Doc {
    const { total } = this.sampleSize;
    const out: Doc = { sampleSize: { ...this.sampleSize } };
    if (total === 0) return out;
    return {
      ...out,
      ...this.counts.shares('Writes', total),
      percentageOfShardKeyUpdates: percentage(this.shardKeyUpdates, total),
      percentageOfSingleWritesWithoutShardKey: percentage(this.singleWithoutShardKey, total),
      percentageOfMultiWritesWithoutShardKey: percentage(this.multiWithoutShardKey, total),
    };
  }
}

function statements(value: unknown): Doc[] {
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}

function docOr(value: unknown): Doc {
  return isPlainObject(value) ? value : {};
}

function isSimple(collation: Doc): boolean {
  return Object.keys(collation).length === 0 || collation.locale === 'simple';
}

// Strings, documents and arrays compare by collation; so may whatever a hashed field hashed.
function collatable(pattern: ShardKeyPattern, key: Doc): boolean {
  return pattern.fields.some((f) => pattern.isHashedField(f) || typeof key[f] === 'string' || isPlainObject(key[f]) || Array.isArray(key[f]));
}

// The shard key a whole document holds, when it holds every field of it (none an array).
function keyOfDocument(pattern: ShardKeyPattern, doc: Doc): Doc | undefined {
  if (pattern.fields.some((f) => valueAtPath(doc, f) === undefined)) return undefined;
  try {
    return pattern.extractShardKeyFromDoc(doc);
  } catch {
    return undefined;
  }
}
