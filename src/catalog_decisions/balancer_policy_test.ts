import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { MongoError } from '../base/errors.js';
import {
  balanceCollection,
  chunkCountThreshold,
  type ChunkInfo,
  type CollectionBalanceResult,
  type CollectionSnapshot,
  type MigrateInfo,
  type PolicySettings,
  type ShardStats,
  type ZoneRange,
} from './balancer_policy.js';

const C = 1000; // maxChunkSizeBytes throughout
const byData: PolicySettings = { policy: 'dataSize', forceJumbo: false };
const byCount: PolicySettings = { policy: 'chunkCount', forceJumbo: false };

// Chunk i covers [10 i, 10 (i + 1)), the first from MinKey and the last to MaxKey.
function key(i: number, n: number): Doc {
  if (i === 0) return { k: new MinKey() };
  if (i === n) return { k: new MaxKey() };
  return { k: i * 10 };
}

// 'AAB' -> three chunks, two on A and one on B; `jumbo` lists chunk indexes flagged jumbo.
function chunks(owners: string, jumbo: readonly number[] = []): ChunkInfo[] {
  const n = owners.length;
  return [...owners].map((shard, i) => ({ min: key(i, n), max: key(i + 1, n), shard, ...(jumbo.includes(i) ? { jumbo: true } : {}) }));
}

// {A: 3, B: 1} -> 'AAAB'
function runs(counts: Record<string, number>): string {
  return Object.entries(counts).map(([id, n]) => id.repeat(n)).join('');
}

function shard(id: string, over: Partial<ShardStats> = {}): ShardStats {
  return { id, draining: false, zones: [], totalDataSizeBytes: 0, ...over };
}

function shardsOf(ids: string, over: Record<string, Partial<ShardStats>> = {}): ShardStats[] {
  return [...ids].map((id) => shard(id, over[id]));
}

function coll(list: ChunkInfo[], over: Partial<CollectionSnapshot> = {}): CollectionSnapshot {
  return { ns: 'db.c', chunks: list, zones: [], dataSizeBytes: new Map(), maxChunkSizeBytes: C, ...over };
}

function bytes(sizes: Record<string, number>): Map<string, number> {
  return new Map(Object.entries(sizes));
}

function zone(min: number | 'min', max: number | 'max', name: string): ZoneRange {
  return { min: { k: min === 'min' ? new MinKey() : min }, max: { k: max === 'max' ? new MaxKey() : max }, zone: name };
}

function pairs(r: CollectionBalanceResult): string[] {
  return r.migrations.map((m) => `${m.fromShard}->${m.toShard}`);
}

// Moves each migrated chunk to its recipient (the whole chunk: chunkCount tests).
function apply(list: readonly ChunkInfo[], migrations: readonly MigrateInfo[]): ChunkInfo[] {
  return list.map((c) => {
    const m = migrations.find((x) => compareValues(x.min, c.min) === 0);
    return m ? { ...c, shard: m.toShard } : c;
  });
}

function countOn(list: readonly ChunkInfo[], id: string): number {
  return list.filter((c) => c.shard === id).length;
}

test('chunkCountThreshold follows the seeds\' table by the collection\'s total chunks, and is 2 while balancing', () => {
  const rows: [total: number, balancing: boolean, threshold: number][] = [
    [1, false, 2], [19, false, 2], [20, false, 4], [79, false, 4], [80, false, 8], [1_000_000, false, 8],
    [20, true, 2], [80, true, 2], [1_000_000, true, 2],
  ];
  for (const [total, balancing, threshold] of rows) {
    assert.equal(chunkCountThreshold(total, balancing), threshold, `${total} chunks, balancing ${balancing}`);
  }
});

test('chunkCount starts balancing when max − min reaches the threshold for the total chunk count', () => {
  const rows: { name: string; counts: Record<string, number>; balancing?: boolean; moves: string[] }[] = [
    { name: '19 chunks, 2 apart: moves', counts: { A: 7, B: 7, C: 5 }, moves: ['A->C'] },
    { name: '19 chunks, 1 apart: stays', counts: { A: 7, B: 6, C: 6 }, moves: [] },
    { name: '20 chunks, 2 apart: stays', counts: { A: 11, B: 9 }, moves: [] },
    { name: '20 chunks, 3 apart: stays', counts: { A: 8, B: 7, C: 5 }, moves: [] },
    { name: '20 chunks, 4 apart: moves', counts: { A: 12, B: 8 }, moves: ['A->B'] },
    { name: '79 chunks, 3 apart: stays', counts: { A: 28, B: 26, C: 25 }, moves: [] },
    { name: '79 chunks, 4 apart: moves', counts: { A: 29, B: 25, C: 25 }, moves: ['A->B'] },
    { name: '80 chunks, 7 apart: stays', counts: { A: 30, B: 27, C: 23 }, moves: [] },
    { name: '80 chunks, 8 apart: moves', counts: { A: 44, B: 36 }, moves: ['A->B'] },
    { name: '80 chunks while balancing, 2 apart: moves', counts: { A: 41, B: 39 }, balancing: true, moves: ['A->B'] },
    { name: '80 chunks while balancing, 1 apart: stays', counts: { A: 27, B: 27, C: 26 }, balancing: true, moves: [] },
    { name: '4 shards, 100 chunks: two pairs, the second exactly 8 apart', counts: { A: 34, B: 30, C: 22, D: 14 }, moves: ['A->D', 'B->C'] },
  ];
  for (const row of rows) {
    const ids = Object.keys(row.counts).join('');
    const r = balanceCollection(shardsOf(ids), coll(chunks(runs(row.counts)), { balancing: row.balancing ?? false }), byCount, new Set());
    assert.deepEqual(pairs(r), row.moves, row.name);
    for (const m of r.migrations) assert.equal(m.reason, 'chunksImbalance', row.name);
  }
});

test('chunkCount hysteresis: once started, rounds go on until the shards differ by less than 2', () => {
  let list = chunks(runs({ A: 44, B: 36 }));
  let balancing = false;
  const trace: string[] = [];
  for (let round = 0; round < 10; round++) {
    const r = balanceCollection(shardsOf('AB'), coll(list, { balancing }), byCount, new Set());
    list = apply(list, r.migrations);
    balancing = r.balancing;
    trace.push(`${countOn(list, 'A')}/${countOn(list, 'B')}:${balancing ? 'balancing' : 'settled'}`);
    if (r.migrations.length === 0) break;
  }
  assert.deepEqual(trace, ['43/37:balancing', '42/38:balancing', '41/39:balancing', '40/40:settled', '40/40:settled']);
  // Without the flag the same 43/37 split is inside the dead band and stays.
  const idle = balanceCollection(shardsOf('AB'), coll(chunks(runs({ A: 43, B: 37 }))), byCount, new Set());
  assert.deepEqual(idle.migrations, []);
  assert.equal(idle.balancing, false);
});

test('chunkCount: a move that still leaves 2 apart keeps balancing; a round without an episode never sets it', () => {
  const rows: { name: string; counts: Record<string, number>; balancing: boolean; expect: boolean }[] = [
    { name: '19 chunks 8/6/5 -> 7/6/6: settled', counts: { A: 8, B: 6, C: 5 }, balancing: false, expect: false },
    { name: '19 chunks 9/5/5 -> 8/5/6: still 3 apart', counts: { A: 9, B: 5, C: 5 }, balancing: false, expect: true },
    { name: '80 chunks 43/37, not balancing: no episode', counts: { A: 43, B: 37 }, balancing: false, expect: false },
    { name: '80 chunks 40/40 while balancing: ends', counts: { A: 40, B: 40 }, balancing: true, expect: false },
  ];
  for (const row of rows) {
    const ids = Object.keys(row.counts).join('');
    const r = balanceCollection(shardsOf(ids), coll(chunks(runs(row.counts)), { balancing: row.balancing }), byCount, new Set());
    assert.equal(r.balancing, row.expect, row.name);
  }
});

test('dataSize moves when two shards differ by 3 chunk sizes or more, not less', () => {
  const rows: { name: string; sizes: Record<string, number>; moves: string[] }[] = [
    { name: '3C − 1 apart: stays', sizes: { A: 3 * C - 1, B: 0 }, moves: [] },
    { name: 'exactly 3C apart: moves (7.0 skips only when from − to < 3C)', sizes: { A: 3 * C, B: 0 }, moves: ['A->B'] },
    { name: '3C + 1 apart: moves', sizes: { A: 3 * C + 1, B: 0 }, moves: ['A->B'] },
    { name: '5C vs 2C: moves', sizes: { A: 5 * C, B: 2 * C }, moves: ['A->B'] },
    { name: '5C − 1 vs 2C: stays', sizes: { A: 5 * C - 1, B: 2 * C }, moves: [] },
    { name: 'receiver is the smaller one', sizes: { A: 1 * C, B: 9 * C }, moves: ['B->A'] },
    { name: 'equal: stays', sizes: { A: 4 * C, B: 4 * C }, moves: [] },
  ];
  for (const row of rows) {
    const r = balanceCollection(shardsOf('AB'), coll(chunks('AABB'), { dataSizeBytes: bytes(row.sizes) }), byData, new Set());
    assert.deepEqual(pairs(r), row.moves, row.name);
    assert.equal(r.firstComplianceViolation, row.moves.length ? 'chunksImbalance' : undefined, row.name);
  }
});

test('dataSize balances bytes, not chunks: one big chunk against many empty ones', () => {
  const r = balanceCollection(shardsOf('AB'), coll(chunks('ABBBBB'), { dataSizeBytes: bytes({ A: 10 * C, B: 0 }) }), byData, new Set());
  assert.deepEqual(pairs(r), ['A->B']);
  const reverse = balanceCollection(shardsOf('AB'), coll(chunks('ABBBBB'), { dataSizeBytes: bytes({ A: 0, B: 2 * C }) }), byData, new Set());
  assert.deepEqual(reverse.migrations, []);
});

test('an imbalance migration names the donor\'s first chunk it may move (a jumbo one only with forceJumbo) and carries the chunk size and forceJumbo', () => {
  const list = chunks('AAAB', [0]);
  for (const forceJumbo of [false, true]) {
    const r = balanceCollection(shardsOf('AB'), coll(list, { dataSizeBytes: bytes({ A: 9 * C }) }), { policy: 'dataSize', forceJumbo }, new Set());
    assert.equal(r.migrations.length, 1);
    const m = r.migrations[0]!;
    const chosen = list[forceJumbo ? 0 : 1]!;
    assert.deepEqual([m.min, m.max], [chosen.min, chosen.max]);
    assert.deepEqual([m.ns, m.reason, m.maxChunkSizeBytes, m.forceJumbo], ['db.c', 'chunksImbalance', C, forceJumbo]);
  }
  // Only jumbo chunks on the donor: nothing to move, unless forceJumbo (attemptToBalanceJumboChunks).
  const allJumbo = chunks('AAAB', [0, 1, 2]);
  const stuck = balanceCollection(shardsOf('AB'), coll(allJumbo, { dataSizeBytes: bytes({ A: 9 * C }) }), byData, new Set());
  assert.deepEqual(stuck.migrations, []);
  const forced = balanceCollection(shardsOf('AB'), coll(allJumbo, { dataSizeBytes: bytes({ A: 9 * C }) }), { policy: 'dataSize', forceJumbo: true }, new Set());
  assert.deepEqual(forced.migrations.map((m) => [m.fromShard, m.toShard, m.min]), [['A', 'B', allJumbo[0]!.min]]);
});

test('dataSize pairs the most loaded with the least loaded, then the next two, while they differ by 3C', () => {
  const sizes = { A: 20 * C, B: 16 * C, C: 11 * C, D: 9 * C, E: 4 * C, F: 0 };
  const r = balanceCollection(shardsOf('ABCDEF'), coll(chunks('ABCDEF'), { dataSizeBytes: bytes(sizes) }), byData, new Set());
  // Ideal 10C: A->F (20C vs 0), B->E (16C vs 4C); C->D differ by 2C, and so would any later pair.
  assert.deepEqual(pairs(r), ['A->F', 'B->E']);
});

test('parallel migrations share no shard and number at most floor(n / 2)', () => {
  const ids = 'ABCDEFGHIJK'; // 11 shards, five heavy
  const sizes = Object.fromEntries([...ids].map((id, i) => [id, i < 5 ? 50 * C : 0]));
  for (const settings of [byData, byCount]) {
    const owners = [...ids].map((id, i) => id.repeat(i < 5 ? 20 : 1)).join('');
    const r = balanceCollection(shardsOf(ids), coll(chunks(owners), { dataSizeBytes: bytes(sizes) }), settings, new Set());
    assert.equal(r.migrations.length, 5, settings.policy);
    const involved = r.migrations.flatMap((m) => [m.fromShard, m.toShard]);
    assert.equal(new Set(involved).size, involved.length, settings.policy);
  }
});

test('usedShards: shards used by an earlier collection are skipped, and the ones used here are added', () => {
  const shards = shardsOf('ABCD');
  const used = new Set<string>();
  const sizes = bytes({ A: 12 * C, B: 9 * C, C: 3 * C, D: 0 });
  const first = balanceCollection(shards, coll(chunks('ABCD'), { ns: 'db.one', dataSizeBytes: sizes, maxChunkSizeBytes: 4 * C }), byData, used);
  assert.deepEqual(pairs(first), ['A->D']);
  assert.deepEqual([...used].sort(), ['A', 'D']);
  const second = balanceCollection(shards, coll(chunks('ABCD'), { ns: 'db.two', dataSizeBytes: sizes }), byData, used);
  assert.deepEqual(pairs(second), ['B->C']);
  assert.deepEqual([...used].sort(), ['A', 'B', 'C', 'D']);
  const third = balanceCollection(shards, coll(chunks('ABCD'), { ns: 'db.three', dataSizeBytes: sizes }), byData, used);
  assert.deepEqual(third.migrations, []);
  // Compliance is judged on the whole cluster, used shards included.
  assert.equal(third.firstComplianceViolation, 'chunksImbalance');
  // The round's first caller may already have used shards (a manual migration, say).
  const busy = balanceCollection(shards, coll(chunks('ABCD'), { dataSizeBytes: sizes }), byData, new Set(['A', 'X']));
  assert.deepEqual(pairs(busy), ['B->D']);
});

test('a zone violation moves to the least loaded shard of the zone', () => {
  const shards = shardsOf('ABC', { A: { zones: ['X'] }, C: { zones: ['X'] } });
  // Chunk [20, 30) is in zone X but on B.
  const list = chunks('ABBC');
  const zones = [zone(20, 30, 'X')];
  for (const [settings, sizes, to] of [
    [byData, { A: 5 * C, B: 1 * C, C: 1 * C }, 'C'],
    [byData, { A: 1 * C, B: 1 * C, C: 5 * C }, 'A'],
    [byCount, {}, 'A'], // A and C hold one chunk each: the first wins
  ] as const) {
    const r = balanceCollection(shards, coll(list, { zones, dataSizeBytes: bytes(sizes) }), settings, new Set());
    assert.equal(r.migrations.length, 1);
    const m = r.migrations[0]!;
    assert.deepEqual([m.fromShard, m.toShard, m.reason, m.min], ['B', to, 'zoneViolation', { k: 20 }]);
    assert.equal(r.firstComplianceViolation, 'zoneViolation');
  }
});

test('chunks outside every zone may live on any shard, zoned ones only on their zone\'s shards', () => {
  const shards = shardsOf('ABC', { A: { zones: ['X'] }, B: { zones: ['X'] } });
  // Zone X = [MinKey, 100): ten chunks, all on A. Then two no-zone chunks on A and C.
  const list = chunks(`${'A'.repeat(10)}AC`);
  const zones = [zone('min', 100, 'X')];
  const r = balanceCollection(shards, coll(list, { zones }), byCount, new Set());
  assert.deepEqual(pairs(r), ['A->B']);
  assert.ok(compareValues(r.migrations[0]!.min, { k: 100 }) < 0, 'a chunk of zone X');
  // A no-zone chunk on a zone shard is no violation.
  const calm = balanceCollection(shards, coll(chunks('ABCABC'), { zones: [zone('min', 10, 'X')] }), byCount, new Set());
  assert.equal(calm.firstComplianceViolation, undefined);
  assert.deepEqual(calm.migrations, []);
});

test('zone imbalance is balanced among the zone\'s shards only', () => {
  const shards = shardsOf('ABC', { A: { zones: ['X'] }, B: { zones: ['X'] } });
  // Everything is zone X; C (not in X) is empty and must not receive.
  const list = chunks(runs({ A: 12, B: 6 }));
  const r = balanceCollection(shards, coll(list, { zones: [zone('min', 'max', 'X')] }), byCount, new Set());
  assert.deepEqual(pairs(r), ['A->B']);
  const sized = balanceCollection(shards, coll(list, { zones: [zone('min', 'max', 'X')], dataSizeBytes: bytes({ A: 4 * C, B: 4 * C }) }), byData, new Set());
  assert.deepEqual(sized.migrations, []);
});

test('a zone whose shards are all gone leaves its chunks in place and reports the violation', () => {
  const r = balanceCollection(shardsOf('AB'), coll(chunks('AB'), { zones: [zone('min', 10, 'Y')] }), byData, new Set());
  assert.deepEqual(r.migrations, []);
  assert.equal(r.firstComplianceViolation, 'zoneViolation');
});

test('a chunk straddling zone boundaries is split at them, and nothing moves that round', () => {
  const rows: { name: string; zones: ZoneRange[]; splits: { min: number | 'min'; points: number[] }[] }[] = [
    { name: 'boundaries inside two chunks', zones: [zone(15, 25, 'X')], splits: [{ min: 10, points: [15] }, { min: 20, points: [25] }] },
    { name: 'a zone inside one chunk', zones: [zone(12, 18, 'X')], splits: [{ min: 10, points: [12, 18] }] },
    { name: 'adjacent zones inside one chunk share a point', zones: [zone(12, 15, 'X'), zone(15, 18, 'Y')], splits: [{ min: 10, points: [12, 15, 18] }] },
    { name: 'a zone from MinKey into the first chunk', zones: [zone('min', 5, 'X')], splits: [{ min: 'min', points: [5] }] },
    { name: 'boundaries on chunk bounds: no split', zones: [zone('min', 20, 'X'), zone(30, 'max', 'Y')], splits: [] },
  ];
  const shards = shardsOf('ABC', { A: { zones: ['X', 'Y'], draining: true } });
  for (const row of rows) {
    const list = chunks('AABC');
    const r = balanceCollection(shards, coll(list, { zones: row.zones, dataSizeBytes: bytes({ A: 9 * C }) }), byData, new Set());
    const got = r.splits.map((s) => ({ min: s.min.k instanceof MinKey ? 'min' : s.min.k, points: s.splitPoints.map((p) => p.k) }));
    assert.deepEqual(got, row.splits, row.name);
    if (row.splits.length > 0) {
      assert.deepEqual(r.migrations, [], row.name);
      assert.equal(r.firstComplianceViolation, 'zoneViolation', row.name);
      for (const s of r.splits) {
        const c = list.find((x) => compareValues(x.min, s.min) === 0)!;
        assert.deepEqual([s.ns, s.shard, s.max], ['db.c', c.shard, c.max], row.name);
      }
    }
  }
});

test('draining shards give one chunk each to the least loaded shard allowed to take it', () => {
  const shards = shardsOf('ABC', { A: { draining: true } });
  const r = balanceCollection(shards, coll(chunks('AAABC'), { dataSizeBytes: bytes({ A: 3 * C, B: 5 * C, C: 2 * C }) }), byData, new Set());
  assert.equal(r.migrations.length, 1);
  const m = r.migrations[0]!;
  assert.deepEqual([m.fromShard, m.toShard, m.reason, m.forceJumbo, m.min], ['A', 'C', 'drain', true, { k: new MinKey() }]);
  assert.equal(r.firstComplianceViolation, 'draining');
  // chunkCount measures the receivers by their chunks of the collection.
  const counted = balanceCollection(shards, coll(chunks('AAABCC')), byCount, new Set());
  assert.deepEqual(pairs(counted), ['A->B']);
});

test('draining skips jumbo chunks unless forceJumbo', () => {
  const shards = shardsOf('AB', { A: { draining: true } });
  const rows: { name: string; jumbo: number[]; forceJumbo: boolean; min: Doc | undefined }[] = [
    { name: 'first chunk jumbo: the next one moves', jumbo: [0], forceJumbo: false, min: { k: 10 } },
    { name: 'all jumbo: nothing moves', jumbo: [0, 1], forceJumbo: false, min: undefined },
    { name: 'all jumbo with forceJumbo: the first moves', jumbo: [0, 1], forceJumbo: true, min: { k: new MinKey() } },
  ];
  for (const row of rows) {
    const r = balanceCollection(shards, coll(chunks('AAB', row.jumbo)), { policy: 'dataSize', forceJumbo: row.forceJumbo }, new Set());
    assert.deepEqual(r.migrations[0]?.min, row.min, row.name);
    assert.equal(r.migrations.length, row.min ? 1 : 0, row.name);
    assert.equal(r.firstComplianceViolation, 'draining', row.name);
  }
});

test('a draining shard\'s zoned chunk goes to a shard of its zone, even a more loaded one', () => {
  const shards = shardsOf('ABC', { A: { draining: true, zones: ['X'] }, B: { zones: ['X'] } });
  const r = balanceCollection(shards, coll(chunks('ABC'), { zones: [zone('min', 10, 'X')], dataSizeBytes: bytes({ A: C, B: 8 * C, C: 0 }) }), byData, new Set());
  assert.deepEqual(pairs(r), ['A->B']);
  assert.equal(r.migrations[0]!.reason, 'drain');
});

test('dataSize, while a shard drains, compares the others as the drain will leave them', () => {
  // A drains 6C onto the least loaded: C and D would both reach 7C. B at 9.5C is then 2.5C above
  // them, which is balanced; at 10.5C it is 3.5C above, so B gives to D (C takes the drain).
  const rows: { name: string; b: number; moves: string[] }[] = [
    { name: 'B 9.5C: only the drain', b: 9.5 * C, moves: ['A->C'] },
    { name: 'B 10.5C: the drain, and B to D', b: 10.5 * C, moves: ['A->C', 'B->D'] },
  ];
  const shards = shardsOf('ABCD', { A: { draining: true } });
  for (const row of rows) {
    const sizes = bytes({ A: 6 * C, B: row.b, C: 4 * C, D: 4 * C });
    const r = balanceCollection(shards, coll(chunks('AABBCD'), { dataSizeBytes: sizes }), byData, new Set());
    assert.deepEqual(pairs(r), row.moves, row.name);
  }
});

test('never to a draining shard or one over maxSize', () => {
  const rows: { name: string; over: Record<string, Partial<ShardStats>>; moves: string[] }[] = [
    { name: 'the emptiest shard drains: next one receives', over: { C: { draining: true } }, moves: ['A->B'] },
    { name: 'the emptiest shard is over maxSize', over: { C: { maxSizeBytes: 100, totalDataSizeBytes: 101 } }, moves: ['A->B'] },
    { name: 'exactly at maxSize still receives', over: { C: { maxSizeBytes: 100, totalDataSizeBytes: 100 } }, moves: ['A->C'] },
    { name: 'maxSize 0 means no limit', over: { C: { maxSizeBytes: 0, totalDataSizeBytes: 10 ** 12 } }, moves: ['A->C'] },
    { name: 'every other shard full: nothing moves', over: { B: { maxSizeBytes: 1, totalDataSizeBytes: 2 }, C: { maxSizeBytes: 1, totalDataSizeBytes: 2 } }, moves: [] },
  ];
  for (const row of rows) {
    const sizes = bytes({ A: 12 * C, B: 2 * C, C: 0 });
    const r = balanceCollection(shardsOf('ABC', row.over), coll(chunks('AAAB'), { dataSizeBytes: sizes }), byData, new Set());
    assert.deepEqual(pairs(r), row.moves, row.name);
  }
});

test('firstComplianceViolation: zone violation before draining before imbalance; undefined when compliant', () => {
  const rows: { name: string; shards: ShardStats[]; snap: Partial<CollectionSnapshot>; settings: PolicySettings; expect: CollectionBalanceResult['firstComplianceViolation'] }[] = [
    { name: 'compliant', shards: shardsOf('AB'), snap: { dataSizeBytes: bytes({ A: C, B: C }) }, settings: byData, expect: undefined },
    { name: 'chunk count inside the dead band', shards: shardsOf('AB'), snap: {}, settings: byCount, expect: undefined },
    { name: 'imbalanced', shards: shardsOf('AB'), snap: { dataSizeBytes: bytes({ A: 5 * C }) }, settings: byData, expect: 'chunksImbalance' },
    { name: 'draining', shards: shardsOf('AB', { B: { draining: true } }), snap: { dataSizeBytes: bytes({ A: 5 * C }) }, settings: byData, expect: 'draining' },
    {
      name: 'zone violation and draining',
      shards: shardsOf('AB', { B: { draining: true, zones: ['X'] } }),
      snap: { zones: [zone('min', 10, 'X')] },
      settings: byData,
      expect: 'zoneViolation',
    },
  ];
  for (const row of rows) {
    const r = balanceCollection(row.shards, coll(chunks('AAABBB'), row.snap), row.settings, new Set());
    assert.equal(r.firstComplianceViolation, row.expect, row.name);
  }
});

test('a chunk on a shard missing from the shard list is a catalog bug', () => {
  assert.throws(() => balanceCollection(shardsOf('A'), coll(chunks('AZ')), byData, new Set()), (e: unknown) => e instanceof MongoError && /not in the shard list/.test(e.message));
});

test('an empty collection snapshot moves nothing', () => {
  const r = balanceCollection(shardsOf('AB'), coll([]), byCount, new Set());
  assert.deepEqual(r, { migrations: [], splits: [], balancing: false });
});

// A small seeded generator: many random clusters, checking what every round must satisfy.
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

test('random clusters: every round keeps the invariants (seeded)', () => {
  const rand = lcg(42);
  const pick = (n: number): number => Math.floor(rand() * n);
  const seen = { splitRounds: 0, moveRounds: 0, reasons: new Set<string>() };
  for (let iter = 0; iter < 300; iter++) {
    const n = 1 + pick(12);
    const ids = 'ABCDEFGHIJKLMNOP'.slice(0, n);
    const zoneNames = ['X', 'Y'].slice(0, pick(3));
    const shards = [...ids].map((id) => shard(id, {
      draining: rand() < 0.15,
      zones: zoneNames.filter(() => rand() < 0.5),
      ...(rand() < 0.15 ? { maxSizeBytes: 10 * C, totalDataSizeBytes: pick(20) * C } : {}),
    }));
    const chunkCount = 1 + pick(40);
    const owners = Array.from({ length: chunkCount }, () => ids[pick(n)]!).join('');
    const list = chunks(owners, Array.from({ length: chunkCount }, (_, i) => i).filter(() => rand() < 0.1));
    const zones: ZoneRange[] = [];
    let at = 0;
    for (const name of zoneNames) {
      const from = at + pick(8) * 5;
      const to = from + (1 + pick(8)) * 5;
      zones.push(zone(from === 0 ? 'min' : from, to, name));
      at = to;
    }
    const sizes = bytes(Object.fromEntries([...ids].map((id) => [id, pick(30) * C])));
    const settings: PolicySettings = { policy: rand() < 0.5 ? 'dataSize' : 'chunkCount', forceJumbo: rand() < 0.3 };
    const preUsed = new Set([...ids].filter(() => rand() < 0.2));
    const used = new Set(preUsed);
    const r = balanceCollection(shards, coll(list, { zones, dataSizeBytes: sizes, balancing: rand() < 0.3 }), settings, used);
    const ctx = `iteration ${iter}`;
    if (r.splits.length > 0) {
      assert.deepEqual(r.migrations, [], ctx);
      seen.splitRounds++;
      continue;
    }
    if (r.migrations.length > 0) seen.moveRounds++;
    assert.ok(r.migrations.length <= Math.floor(n / 2), ctx);
    const involved = r.migrations.flatMap((m) => [m.fromShard, m.toShard]);
    assert.equal(new Set(involved).size, involved.length, ctx);
    assert.deepEqual([...used].sort(), [...new Set([...preUsed, ...involved])].sort(), ctx);
    for (const m of r.migrations) {
      seen.reasons.add(m.reason);
      const to = shards.find((s) => s.id === m.toShard)!;
      const chunk = list.find((c) => compareValues(c.min, m.min) === 0)!;
      assert.ok(!preUsed.has(m.fromShard) && !preUsed.has(m.toShard), ctx);
      assert.equal(chunk.shard, m.fromShard, ctx);
      assert.deepEqual(chunk.max, m.max, ctx);
      assert.ok(!to.draining, ctx);
      assert.ok(!(to.maxSizeBytes && to.totalDataSizeBytes > to.maxSizeBytes), ctx);
      if (chunk.jumbo) assert.ok(settings.forceJumbo && m.reason !== 'chunksImbalance', ctx);
      const z = zones.find((x) => compareValues(x.min, chunk.min) <= 0 && compareValues(chunk.max, x.max) <= 0);
      if (z) assert.ok(to.zones.includes(z.zone), `${ctx}: chunk of zone ${z.zone} sent to ${to.id}`);
    }
  }
  // The generator reaches every path: splits, and migrations of every reason.
  assert.ok(seen.splitRounds > 20 && seen.moveRounds > 50, JSON.stringify({ ...seen, reasons: [...seen.reasons] }));
  assert.deepEqual([...seen.reasons].sort(), ['chunksImbalance', 'drain', 'zoneViolation']);
});
