import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { sameGeneration, type ChunkVersion } from '../catalog/chunk_version.js';

// The order of chunk versions, the checker's own: a newer generation wins, then major, then minor.
function compareChunkVersions(a: ChunkVersion, b: ChunkVersion): number {
  if (!sameGeneration(a, b)) return Math.sign(a.timestamp.compare(b.timestamp));
  return Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor);
}
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { decideSplit } from './split_chunk.js';
import { decideMerge } from './merge_chunks.js';
import { decideMoveRange } from './move_range.js';
import { decideCommitChunkMigration } from './commit_chunk_migration.js';
import { collectionVersion, shardPlacementVersion } from './placement.js';

// Any sequence of splits, merges and migrations built with the decide* functions keeps the
// catalog sound: the chunks tile [MinKey, MaxKey), versions are unique, the collection version is
// the highest lastmod and grows with every change, and a shard's version never goes back.

const epoch = new ObjectId('65a000000000000000000001');
const collTs = new Timestamp({ t: 50, i: 0 });
const uuid = new UUID();
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: epoch, lastmod: new Date(0), timestamp: collTs, uuid, key: { a: 1 }, unique: false };
const shardIds = ['s0', 's1', 's2'];
const shards: ShardType[] = shardIds.map((id) => ({ _id: id, host: `${id}:27018`, state: 1, topologyTime: collTs }));
const log = { server: 'cfg:27019', clientAddr: '', time: new Date(0), newId: () => new ObjectId() };

type Op =
  | { kind: 'split'; pick: number; at: number }
  | { kind: 'merge'; pick: number; count: number }
  | { kind: 'move'; pick: number; to: number; cut: [number, number] | null };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('split' as const), pick: fc.nat(), at: fc.integer({ min: -50, max: 50 }) }),
  fc.record({ kind: fc.constant('merge' as const), pick: fc.nat(), count: fc.integer({ min: 2, max: 4 }) }),
  fc.record({ kind: fc.constant('move' as const), pick: fc.nat(), to: fc.nat({ max: 2 }), cut: fc.option(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 })), { nil: null }) }),
);

class Catalog {
  chunks: ChunkType[] = [{ _id: new ObjectId(), uuid, min: { a: new MinKey() }, max: { a: new MaxKey() }, shard: 's0', lastmod: new Timestamp({ t: 1, i: 0 }), onCurrentShardSince: new Timestamp({ t: 1, i: 0 }), history: [{ validAfter: new Timestamp({ t: 1, i: 0 }), shard: 's0' }] }];
  private clock = 10;

  tick(): Timestamp {
    return new Timestamp({ t: ++this.clock, i: 0 });
  }

  sorted(): ChunkType[] {
    return [...this.chunks].sort((x, y) => compareValues(x.min, y.min));
  }

  apply(removed: readonly ChunkType[], updated: readonly ChunkType[], inserted: readonly ChunkType[]): void {
    const gone = new Set(removed.map((c) => c._id.toHexString()));
    const byId = new Map(updated.map((c) => [c._id.toHexString(), c]));
    this.chunks = [...this.chunks.filter((c) => !gone.has(c._id.toHexString())).map((c) => byId.get(c._id.toHexString()) ?? c), ...inserted];
  }

  // Applies the op; answers the decision's collection version, or undefined when it was a no-op.
  run(op: Op): ChunkVersion | undefined {
    const list = this.sorted();
    const target = list[op.pick % list.length]!;
    if (op.kind === 'split') {
      const at = { a: op.at };
      if (compareValues(at, target.min) <= 0 || compareValues(at, target.max) >= 0) return undefined;
      const d = decideSplit({ collection, chunks: this.chunks, chunkRange: target, splitPoints: [at], shard: target.shard, chunkIdFactory: () => new ObjectId(), log });
      this.apply([], d.updated, d.inserted);
      return d.collectionVersion;
    }
    if (op.kind === 'merge') {
      const start = list.indexOf(target);
      const run = [target];
      while (run.length < op.count && list[start + run.length]?.shard === target.shard) run.push(list[start + run.length]!);
      if (run.length < 2) return undefined;
      const d = decideMerge({ collection, chunks: this.chunks, range: { min: target.min, max: run[run.length - 1]!.max }, shard: target.shard, now: this.tick(), log });
      this.apply(d.removed, [], d.merged === undefined ? [] : [d.merged]);
      return d.collectionVersion;
    }
    const [lo, hi] = op.cut ?? [0, 0];
    const inside = (k: Doc) => compareValues(k, target.min) > 0 && compareValues(k, target.max) < 0;
    const sub = lo < hi && inside({ a: lo }) && inside({ a: hi });
    const move = decideMoveRange({ collection, chunks: this.chunks, min: sub ? { a: lo } : target.min, max: sub ? { a: hi } : undefined, toShard: shardIds[op.to]!, shards });
    if (move.migration === undefined) return undefined;
    const m = move.migration;
    const before = versions(this.chunks);
    const d = decideCommitChunkMigration({
      collection, chunks: this.chunks, shards, migratedChunk: { min: m.min, max: m.max, lastmod: target.lastmod },
      fromShardCollectionVersion: collectionVersion(collection, this.chunks), fromShard: m.fromShard, toShard: m.toShard,
      validAfter: this.tick(), counts: {}, chunkIdFactory: () => new ObjectId(), log,
    });
    this.apply([], d.updated, d.inserted);
    const after = versions(this.chunks);
    // Both shards' versions move: routers that knew either one must refresh.
    assert.ok(compareChunkVersions(after.get(m.toShard)!, before.get(m.toShard)!) > 0);
    if (this.chunks.some((c) => c.shard === m.fromShard)) assert.ok(compareChunkVersions(after.get(m.fromShard)!, before.get(m.fromShard)!) > 0);
    assert.equal(compareChunkVersions(d.shardVersions.donor, after.get(m.fromShard)!), 0);
    assert.equal(compareChunkVersions(d.shardVersions.recipient, after.get(m.toShard)!), 0);
    return d.collectionVersion;
  }
}

function versions(chunks: readonly ChunkType[]): Map<string, ChunkVersion> {
  return new Map(shardIds.map((s) => [s, shardPlacementVersion(collection, chunks, s)]));
}

function checkTiling(chunks: readonly ChunkType[]): void {
  const list = [...chunks].sort((x, y) => compareValues(x.min, y.min));
  assert.deepEqual(list[0]!.min, { a: new MinKey() });
  assert.deepEqual(list[list.length - 1]!.max, { a: new MaxKey() });
  for (let i = 0; i < list.length; i++) {
    assert.ok(compareValues(list[i]!.min, list[i]!.max) < 0);
    if (i > 0) assert.equal(compareValues(list[i - 1]!.max, list[i]!.min), 0);
  }
}

test('splits, merges and migrations keep the chunks tiling the key space and the versions monotonic', () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
      const catalog = new Catalog();
      let collVersion = collectionVersion(collection, catalog.chunks);
      const highWater = versions(catalog.chunks);
      for (const op of ops) {
        const decided = catalog.run(op);
        checkTiling(catalog.chunks);
        const lastmods = catalog.chunks.map((c) => `${c.lastmod.t}|${c.lastmod.i}`);
        assert.equal(new Set(lastmods).size, lastmods.length, 'chunk versions are unique');
        const now = collectionVersion(collection, catalog.chunks);
        if (decided !== undefined) {
          assert.equal(compareChunkVersions(decided, now), 0, 'the decision reports the highest lastmod');
          assert.ok(compareChunkVersions(now, collVersion) > 0, 'every change raises the collection version');
        } else {
          assert.equal(compareChunkVersions(now, collVersion), 0);
        }
        collVersion = now;
        for (const [shard, v] of versions(catalog.chunks)) {
          if (!catalog.chunks.some((c) => c.shard === shard)) continue;
          assert.ok(compareChunkVersions(v, highWater.get(shard)!) >= 0, `${shard}'s version never goes back`);
          highWater.set(shard, v);
        }
      }
    }),
    { numRuns: 200 },
  );
});
