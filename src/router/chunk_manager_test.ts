import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, MinKey, ObjectId, Timestamp, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { ChunkManager } from './chunk_manager.js';

const uuid = new Binary(Buffer.alloc(16, 7), 4);
const epoch = new ObjectId();
const timestamp = new Timestamp({ t: 100, i: 1 });

function collection(key: Doc = { x: 1 }): CollectionType {
  return { _id: 'db.c', lastmodEpoch: epoch, lastmod: new Date(0), timestamp, uuid, key, unique: false };
}

function chunk(min: unknown, max: unknown, shard: string, major: number, minor: number): ChunkType {
  const lastmod = new Timestamp({ t: major, i: minor });
  return {
    _id: new ObjectId(),
    uuid,
    min: { x: min },
    max: { x: max },
    shard,
    lastmod,
    onCurrentShardSince: timestamp,
    history: [{ validAfter: timestamp, shard }],
  };
}

// [MinKey, 0) s1 1|0, [0, 10) s1 1|1, [10, 20) s2 1|2, [20, MaxKey) s3 1|3
function fourChunks(): ChunkType[] {
  return [
    chunk(new MinKey(), 0, 's1', 1, 0),
    chunk(0, 10, 's1', 1, 1),
    chunk(10, 20, 's2', 1, 2),
    chunk(20, new MaxKey(), 's3', 1, 3),
  ];
}

function assertConflict(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof MongoError && err.code === 117 && message.test(err.message));
}

test('chunks given in any order are sorted by their min', () => {
  const cm = ChunkManager.create(collection(), fourChunks().reverse());
  assert.deepEqual(cm.allChunks().map((c) => c.min.x), [new MinKey(), 0, 10, 20]);
  assert.equal(cm.numChunks, 4);
});

test('a key is found in the chunk whose [min, max) holds it', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.equal(cm.findIntersectingChunk({ x: -5 }).shard, 's1');
  assert.equal(cm.findIntersectingChunk({ x: null }).shard, 's1');
  assert.equal(cm.findIntersectingChunk({ x: new MinKey() }).shard, 's1');
  assert.equal(cm.findIntersectingChunk({ x: 10 }).shard, 's2');
  assert.equal(cm.findIntersectingChunk({ x: 19.5 }).shard, 's2');
  assert.equal(cm.findIntersectingChunk({ x: 'str' }).shard, 's3');
});

test('the global max belongs to no chunk', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.throws(
    () => cm.findIntersectingChunk({ x: new MaxKey() }),
    (err: unknown) => err instanceof MongoError && err.code === 61 && /Cannot target single shard using key \{ x: MaxKey \} for namespace db.c/.test(err.message),
  );
});

test('versions: the collection version is the highest lastmod, a shard version its own highest', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.deepEqual([cm.collectionVersion().major, cm.collectionVersion().minor], [1, 3]);
  assert.deepEqual([cm.shardVersion('s1').major, cm.shardVersion('s1').minor], [1, 1]);
  assert.ok(cm.collectionVersion().epoch.equals(epoch));
  assert.ok(cm.collectionVersion().timestamp.equals(timestamp));
});

test('a shard without chunks has version 0|0 of the same generation', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const v = cm.shardVersion('s9');
  assert.deepEqual([v.major, v.minor], [0, 0]);
  assert.ok(v.epoch.equals(epoch));
  assert.ok(v.timestamp.equals(timestamp));
});

test('shard ids: all owners, chunks per shard', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.deepEqual(cm.getAllShardIds(), new Set(['s1', 's2', 's3']));
  assert.equal(cm.chunksOnShard('s1').length, 2);
  assert.deepEqual(cm.chunksOnShard('s9'), []);
});

test('a range names the owners of every chunk it touches, max inclusive by default', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.deepEqual(cm.getShardIdsForRange({ x: 5 }, { x: 15 }), new Set(['s1', 's2']));
  assert.deepEqual(cm.getShardIdsForRange({ x: 0 }, { x: 10 }), new Set(['s1', 's2']));
  assert.deepEqual(cm.getShardIdsForRange({ x: 0 }, { x: 10 }, false), new Set(['s1']));
  assert.deepEqual(cm.getShardIdsForRange({ x: 25 }, { x: new MaxKey() }), new Set(['s3']));
  assert.deepEqual(cm.getShardIdsForRange({ x: new MinKey() }, { x: new MaxKey() }), new Set(['s1', 's2', 's3']));
});

test('chunks that miss the global min or max, leave a gap or overlap are refused', () => {
  const c = fourChunks();
  assertConflict(() => ChunkManager.create(collection(), c.slice(1)), /^Not all elements of \{ x: 0 \} are of type MinKey$/);
  assertConflict(() => ChunkManager.create(collection(), c.slice(0, 3)), /^Not all elements of \{ x: 20 \} are of type MaxKey$/);
  assertConflict(
    () => ChunkManager.create(collection(), [c[0]!, c[1]!, c[3]!]),
    /^Gap exists in the routing table between chunks \[\{ x: 0 \}, \{ x: 10 \}\) and \[\{ x: 20 \}, \{ x: MaxKey \}\)$/,
  );
  assertConflict(() => ChunkManager.create(collection(), [...c, chunk(5, 15, 's2', 1, 4)]), /^Overlap exists/);
  assertConflict(() => ChunkManager.create(collection(), []), /No chunks were found/);
});

test('a compound key is routed by its key string', () => {
  const key = { a: 1, b: 1 };
  const mk = (min: Doc, max: Doc, shard: string, minor: number): ChunkType => ({ ...chunk(0, 0, shard, 1, minor), min, max });
  const cm = ChunkManager.create(collection(key), [
    mk({ a: new MinKey(), b: new MinKey() }, { a: 5, b: new MinKey() }, 's1', 0),
    mk({ a: 5, b: new MinKey() }, { a: 5, b: 'm' }, 's2', 1),
    mk({ a: 5, b: 'm' }, { a: new MaxKey(), b: new MaxKey() }, 's3', 2),
  ]);
  assert.equal(cm.findIntersectingChunk({ a: 4, b: 'zzz' }).shard, 's1');
  assert.equal(cm.findIntersectingChunk({ a: 5, b: 'a' }).shard, 's2');
  assert.equal(cm.findIntersectingChunk({ a: 5, b: 'm' }).shard, 's3');
  assert.deepEqual(cm.getShardIdsForRange({ a: 5, b: new MinKey() }, { a: 5, b: new MaxKey() }), new Set(['s2', 's3']));
});

test('a split replaces the parent chunk and raises only the minor version', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(0, 5, 's1', 1, 4), chunk(5, 10, 's1', 1, 5)]);
  assert.equal(next.numChunks, 5);
  assert.equal(next.findIntersectingChunk({ x: 7 }).min.x, 5);
  assert.deepEqual([next.collectionVersion().major, next.collectionVersion().minor], [1, 5]);
  assert.deepEqual([next.shardVersion('s1').major, next.shardVersion('s1').minor], [1, 5]);
  assert.equal(cm.numChunks, 4, 'the old snapshot is untouched');
});

test('a migration moves a chunk and bumps the donor through another of its chunks', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(0, 10, 's2', 2, 0), chunk(new MinKey(), 0, 's1', 2, 1)]);
  assert.equal(next.findIntersectingChunk({ x: 3 }).shard, 's2');
  assert.deepEqual([next.shardVersion('s1').major, next.shardVersion('s1').minor], [2, 1]);
  assert.deepEqual([next.shardVersion('s2').major, next.shardVersion('s2').minor], [2, 0]);
  assert.deepEqual([next.shardVersion('s3').major, next.shardVersion('s3').minor], [1, 3]);
});

test('a shard that gives away its last chunk drops out of the owners', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(20, new MaxKey(), 's2', 2, 0)]);
  assert.deepEqual(next.getAllShardIds(), new Set(['s1', 's2']));
  assert.deepEqual([next.shardVersion('s3').major, next.shardVersion('s3').minor], [0, 0]);
});

test('a donor whose version-carrying chunk left without a bump falls back to its highest remaining chunk', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(0, 10, 's3', 2, 0)]);
  assert.deepEqual([next.shardVersion('s1').major, next.shardVersion('s1').minor], [1, 0]);
});

test('a merge replaces several chunks with one', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(new MinKey(), 20, 's1', 1, 4)]);
  assert.equal(next.numChunks, 2);
  assert.deepEqual(next.getAllShardIds(), new Set(['s1', 's3']));
});

test('of two overlapping changed chunks the newer wins', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(0, 10, 's2', 1, 4), chunk(0, 10, 's3', 1, 5)]);
  assert.equal(next.findIntersectingChunk({ x: 1 }).shard, 's3');
});

test('re-reading the chunk at the collection version changes nothing', () => {
  const chunks = fourChunks();
  const cm = ChunkManager.create(collection(), chunks);
  const next = cm.applyChunkChanges([chunks[3]!]);
  assert.deepEqual(next.allChunks(), cm.allChunks());
  assert.deepEqual(next.shardVersion('s3'), cm.shardVersion('s3'));
  assert.deepEqual(next.collectionVersion(), cm.collectionVersion());
});

test('a change that leaves a gap is refused, so the caller reloads everything', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assertConflict(() => cm.applyChunkChanges([chunk(0, 5, 's1', 1, 4)]), /^Gap exists in the routing table between chunks \[\{ x: 0 \}, \{ x: 5 \}\) and \[\{ x: 10 \}/);
  assertConflict(() => cm.applyChunkChanges([chunk(2, 10, 's1', 1, 4)]), /^Gap exists/);
});

test('a changed chunk older than the collection version is refused', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assert.throws(() => cm.applyChunkChanges([chunk(0, 10, 's2', 1, 2)]), (err: unknown) => err instanceof MongoError && err.code === 626840);
});

test('a change of collection generation is refused', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  assertConflict(() => cm.applyChunkChanges([], { ...collection(), lastmodEpoch: new ObjectId() }), /changed generation/);
});

test('changes far apart are spliced in independently', () => {
  const cm = ChunkManager.create(collection(), fourChunks());
  const next = cm.applyChunkChanges([chunk(new MinKey(), 0, 's2', 2, 0), chunk(20, new MaxKey(), 's1', 2, 1)]);
  assert.deepEqual(next.allChunks().map((c) => c.shard), ['s2', 's1', 's2', 's1']);
  assert.deepEqual(next.getAllShardIds(), new Set(['s1', 's2']));
});

function manyChunks(n: number, shards: number): ChunkType[] {
  const out: ChunkType[] = [];
  for (let i = 0; i < n; i++) {
    out.push(chunk(i === 0 ? new MinKey() : i * 10, i === n - 1 ? new MaxKey() : (i + 1) * 10, `s${i % shards}`, 1, i));
  }
  return out;
}

test('100k chunks build, route, and take an incremental change and many-change refresh', () => {
  const n = 100_000;
  const cm = ChunkManager.create(collection(), manyChunks(n, 4));
  assert.equal(cm.numChunks, n);
  assert.equal(cm.findIntersectingChunk({ x: 123_456 }).min.x, 123_450);

  const next = cm.applyChunkChanges([chunk(500_000, 500_005, 's9', 2, 0), chunk(500_005, 500_010, 's1', 2, 1)]);
  assert.equal(next.numChunks, n + 1);
  assert.equal(next.findIntersectingChunk({ x: 500_001 }).shard, 's9');
  assert.equal(next.findIntersectingChunk({ x: 500_007 }).shard, 's1');
  assert.equal(next.findIntersectingChunk({ x: 500_010 }).min.x, 500_010);

  // Many separate changes take the linear merge path.
  const moves = [];
  for (let i = 1; i <= 100; i++) moves.push(chunk(i * 1000, i * 1000 + 10, 's8', 3, i));
  const moved = next.applyChunkChanges(moves);
  assert.equal(moved.numChunks, n + 1);
  assert.equal(moved.findIntersectingChunk({ x: 50_005 }).shard, 's8');
  assert.equal(moved.chunksOnShard('s8').length, 100);
  assert.deepEqual([moved.collectionVersion().major, moved.collectionVersion().minor], [3, 100]);
});

// A seeded generator, so that a failure replays.
function random(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

test('random splits, merges and migrations across block boundaries match a full rebuild', () => {
  const rand = random(42);
  const bound = (x: number): unknown => (x === -Infinity ? new MinKey() : x === Infinity ? new MaxKey() : x);
  interface Model { min: number; max: number; shard: string; major: number; minor: number }
  let model: Model[] = [];
  for (let i = 0; i < 3000; i++) model.push({ min: i === 0 ? -Infinity : i * 100, max: i === 2999 ? Infinity : (i + 1) * 100, shard: `s${rand(5)}`, major: 1, minor: i });
  const toChunk = (m: Model): ChunkType => chunk(bound(m.min), bound(m.max), m.shard, m.major, m.minor);
  let version = { major: 1, minor: 2999 };
  const bump = (major: boolean): { major: number; minor: number } => {
    version = major ? { major: version.major + 1, minor: 0 } : { major: version.major, minor: version.minor + 1 };
    return version;
  };
  let cm = ChunkManager.create(collection(), model.map(toChunk));

  for (let round = 0; round < 60; round++) {
    const before = cm.collectionVersion();
    for (let op = 1 + rand(4); op > 0; op--) {
      const i = rand(model.length);
      const kind = rand(3);
      if (kind === 0) {
        const c = model[i]!;
        const lo = Number.isFinite(c.min) ? c.min : c.max - 100;
        const hi = Number.isFinite(c.max) ? c.max : lo + 200;
        const mid = Math.floor((lo + hi) / 2);
        if (mid <= lo || (Number.isFinite(c.max) && mid >= c.max) || (Number.isFinite(c.min) && mid <= c.min)) continue;
        model.splice(i, 1, { ...c, max: mid, ...bump(false) }, { ...c, min: mid, ...bump(false) });
      } else if (kind === 1) {
        const n = Math.min(2 + rand(700), model.length - i);
        if (n < 2) continue;
        const run = model.slice(i, i + n);
        model.splice(i, n, { min: run[0]!.min, max: run[n - 1]!.max, shard: run[0]!.shard, ...bump(false) });
      } else {
        const c = model[i]!;
        const donor = c.shard;
        model[i] = { ...c, shard: `s${rand(6)}`, ...bump(true) };
        const control = model.findIndex((m) => m.shard === donor);
        if (control >= 0 && rand(4) > 0) model[control] = { ...model[control]!, ...bump(false) };
      }
    }
    const changed = model.filter((m) => m.major > before.major || (m.major === before.major && m.minor >= before.minor));
    cm = cm.applyChunkChanges(changed.map(toChunk));

    const expected = ChunkManager.create(collection(), model.map(toChunk));
    assert.equal(cm.numChunks, model.length);
    assert.deepEqual(cm.allChunks().map((c) => [c.min.x, c.shard]), expected.allChunks().map((c) => [c.min.x, c.shard]));
    assert.deepEqual(cm.getAllShardIds(), expected.getAllShardIds());
    for (const shard of ['s0', 's1', 's2', 's3', 's4', 's5']) {
      const [got, want] = [cm.shardVersion(shard), expected.shardVersion(shard)];
      assert.deepEqual([got.major, got.minor], [want.major, want.minor], `round ${round} ${shard}`);
    }
    for (let probe = 0; probe < 20; probe++) {
      const key = rand(310_000) - 5000;
      assert.deepEqual(cm.findIntersectingChunk({ x: key }).min, expected.findIntersectingChunk({ x: key }).min);
    }
  }
});
