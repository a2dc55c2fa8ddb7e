import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { BSONRegExp, MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { CollectionType, ShardType } from '../catalog/type_chunk.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { initialChunks, type InitialChunksRequest } from './initial_chunks.js';
import { decideShardCollection, translateShardCollection } from './shard_collection.js';
import {
  checkRemoveShardFromZone, checkShardExists, checkShardKeyAgainstZones, decideAssignKeyRange, decideRemoveKeyRange, extendRangeBound,
  findOverlappingRange, shardsByZone, type ZoneRange, type ZoneRangeType,
} from './zones.js';

const now = new Timestamp({ t: 200, i: 3 });

function code(expected: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === expected && (message === undefined || message.test(err.message));
}

function shard(id: string, tags?: string[]): ShardType {
  return { _id: id, host: `${id}:1`, state: 1, topologyTime: now, ...(tags ? { tags } : {}) };
}

function sharded(key: Doc): CollectionType {
  return { _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(), timestamp: now, uuid: new UUID(), key, unique: false };
}

const shards = [shard('s0', ['A']), shard('s1', ['A', 'B']), shard('s2')];

function assign(over: Partial<Parameters<typeof decideAssignKeyRange>[0]>) {
  return decideAssignKeyRange({ ns: 'db.c', min: { x: 0 }, max: { x: 10 }, zone: 'A', shards, collection: undefined, existing: [], ...over });
}

test('addShardToZone needs an existing shard (ShardNotFound)', () => {
  checkShardExists(shards, 's2');
  assert.throws(() => checkShardExists(shards, 'nope'), code(70, /shard nope does not exist/));
});

test('a zone can leave its last shard only when no range uses it (ZoneStillInUse)', () => {
  assert.throws(() => checkRemoveShardFromZone({ shards, shard: 's1', zone: 'B', zoneHasRanges: true }), code(163));
  checkRemoveShardFromZone({ shards, shard: 's1', zone: 'B', zoneHasRanges: false });
  checkRemoveShardFromZone({ shards, shard: 's1', zone: 'A', zoneHasRanges: true }); // s0 still has A
  checkRemoveShardFromZone({ shards, shard: 's2', zone: 'B', zoneHasRanges: true }); // s2 never had B
  assert.throws(() => checkRemoveShardFromZone({ shards, shard: 'nope', zone: 'A', zoneHasRanges: false }), code(70));
});

test('a range goes to an existing zone only (ZoneNotFound), with valid bounds (BadValue)', () => {
  assert.throws(() => assign({ zone: 'C' }), code(177, /zone C does not exist/));
  assert.throws(() => assign({ min: { x: 10 }, max: { x: 10 } }), code(2, /should be less than max/));
  assert.throws(() => assign({ min: { x: 10 }, max: { x: 0 } }), code(2));
  assert.throws(() => assign({ min: {} }), code(2, /min field is empty/));
  assert.throws(() => assign({ max: { x: [1] } }), code(2, /not valid for storage/));
  assert.throws(() => assign({ max: { x: new BSONRegExp('a', '') } }), code(2, /not valid for storage/));
});

test('a range of a namespace that is not sharded is stored as given, and min and max name the same fields', () => {
  const { range, alreadyAssigned } = assign({ min: { x: 0, y: 'a' }, max: { x: 10, y: 'a' } });
  assert.equal(alreadyAssigned, false);
  assert.deepEqual(range, { ns: 'db.c', min: { x: 0, y: 'a' }, max: { x: 10, y: 'a' }, tag: 'A' });
  assert.throws(() => assign({ min: { x: 0 }, max: { y: 10 } }), code(61));
  assert.throws(() => assign({ min: { x: 0 }, max: { x: 10, y: 1 } }), code(61));
});

test('a range of a sharded collection is a shard key prefix, extended to the full key with MinKey', () => {
  const collection = sharded({ x: 1, y: 1 });
  const { range } = assign({ collection, min: { x: 0 }, max: { x: 10, y: 5 } });
  assert.deepEqual(range.min, { x: 0, y: new MinKey() });
  assert.deepEqual(range.max, { x: 10, y: 5 });
  assert.throws(() => assign({ collection, min: { y: 0 }, max: { y: 10 } }), code(61, /is not a prefix of the shard key/));
  assert.throws(() => assign({ collection, min: { x: 0, z: 1 }, max: { x: 10 } }), code(61));
  assert.deepEqual(decideRemoveKeyRange({ ns: 'db.c', min: { x: 0 }, max: { x: 10 }, collection }), { ns: 'db.c', min: { x: 0, y: new MinKey() }, max: { x: 10, y: new MinKey() } });
  assert.throws(() => decideRemoveKeyRange({ ns: 'db.c', min: { y: 0 }, max: { y: 10 }, collection }), code(61));
});

test('a hashed field of the key takes only NumberLong, MinKey or MaxKey bounds (InvalidOptions)', () => {
  const collection = sharded({ x: 'hashed' });
  assign({ collection, min: { x: new MinKey() }, max: { x: Long.fromNumber(0) } });
  assert.throws(() => assign({ collection, min: { x: 0 }, max: { x: 10 } }), code(72));
});

test('overlapping ranges conflict unless they are the very same range of the same zone (RangeOverlapConflict)', () => {
  const existing: ZoneRangeType[] = [{ ns: 'db.c', tag: 'A', min: { x: 0 }, max: { x: 10 } }];
  assert.equal(assign({ existing }).alreadyAssigned, true);
  assert.throws(() => assign({ existing, zone: 'B' }), code(178, /is overlapping with existing/));
  assert.throws(() => assign({ existing, min: { x: 5 }, max: { x: 15 } }), code(178));
  assert.throws(() => assign({ existing, min: { x: -5 }, max: { x: 5 } }), code(178));
  assert.throws(() => assign({ existing, min: { x: 2 }, max: { x: 3 } }), code(178));
  assert.throws(() => assign({ existing, min: { x: -5 }, max: { x: 15 } }), code(178));
  assert.throws(() => assign({ existing, min: { x: 0 }, max: { x: 5 } }), code(178));
  // Adjacent ranges touch without overlapping: max is exclusive.
  assert.equal(assign({ existing, min: { x: 10 }, max: { x: 20 }, zone: 'B' }).alreadyAssigned, false);
  assert.equal(assign({ existing, min: { x: -10 }, max: { x: 0 } }).alreadyAssigned, false);
  assert.equal(findOverlappingRange([], { tag: 'A', min: { x: 0 }, max: { x: 1 } }), undefined);
});

test('stored ranges are extended to the key before comparing', () => {
  const existing: ZoneRangeType[] = [{ ns: 'db.c', tag: 'A', min: { x: 0, y: new MinKey() }, max: { x: 10, y: new MinKey() } }];
  assert.equal(assign({ collection: sharded({ x: 1, y: 1 }), existing }).alreadyAssigned, true);
  assert.deepEqual(extendRangeBound(['x', 'y', 'z'], { x: 1 }), { x: 1, y: new MinKey(), z: new MinKey() });
  assert.throws(() => extendRangeBound(['x'], { x: 1, y: 2 }), code(16649));
  assert.throws(() => extendRangeBound(['x', 'y'], { y: 2 }), code(16634));
});

test('shardCollection accepts zones naming exactly the proposed key fields (InvalidOptions otherwise)', () => {
  const zone = (min: Doc, max: Doc): ZoneRange => ({ tag: 'A', min, max });
  checkShardKeyAgainstZones({ x: 1, y: 1 }, [zone({ x: 0, y: 0 }, { x: 5, y: 0 })]);
  assert.throws(() => checkShardKeyAgainstZones({ x: 1, y: 1 }, [zone({ x: 0 }, { x: 5 })]), code(72, /does not match with the shard key of the existing zone/));
  assert.throws(() => checkShardKeyAgainstZones({ x: 1 }, [zone({ x: 0, y: 0 }, { x: 5, y: 0 })]), code(72));
  assert.throws(() => checkShardKeyAgainstZones({ y: 1 }, [zone({ x: 0 }, { x: 5 })]), code(72));
  assert.throws(() => checkShardKeyAgainstZones({ x: 1, y: 1 }, [zone({ x: 0, y: 0 }, { x: 5, z: 0 })]), code(72, /non-matching keys/));
  assert.throws(() => checkShardKeyAgainstZones({ x: 'hashed' }, [zone({ x: 0 }, { x: 5 })]), code(72, /cannot do hash sharding/));
  checkShardKeyAgainstZones({ x: 'hashed' }, [zone({ x: new MinKey() }, { x: Long.fromNumber(5) })]);
});

test('zones map to their shards by shard id', () => {
  assert.deepEqual([...shardsByZone({ s2: ['A'], s0: ['A', 'B'], s1: [] })], [['A', ['s0', 's2']], ['B', ['s0']]]);
});

// Initial chunks along zones (SingleChunkPerTagSplitPolicy, PresplitHashedZonesSplitPolicy).

function request(pattern: Doc, over: Partial<InitialChunksRequest> = {}): InitialChunksRequest {
  return {
    key: new ShardKeyPattern(pattern), uuid: new UUID(), primaryShard: 's1', shards: ['s2', 's0', 's1'], collectionIsEmpty: true,
    numInitialChunks: 0, presplitHashedZones: false, now, chunkIdFactory: () => new ObjectId(),
    shardZones: { s0: ['A'], s1: ['B'], s2: ['A'] }, ...over,
  };
}

function layout(chunks: { min: Doc; max: Doc; shard: string }[]): string[] {
  const show = (v: unknown): string => v instanceof MinKey ? 'MinKey' : v instanceof MaxKey ? 'MaxKey' : String(v);
  return chunks.map((c) => `[${Object.values(c.min).map(show).join(',')} ${Object.values(c.max).map(show).join(',')}) ${c.shard}`);
}

test('an empty collection with zones gets one chunk per zone range on its zone shards, gaps round-robin over all shards', () => {
  const zones: ZoneRange[] = [
    { tag: 'B', min: { x: 50 }, max: { x: 60 } },
    { tag: 'A', min: { x: 0 }, max: { x: 10 } },
    { tag: 'A', min: { x: 10 }, max: { x: 20 } },
    { tag: 'A', min: { x: 30 }, max: { x: 40 } },
  ];
  const chunks = initialChunks(request({ x: 1 }, { zones }));
  assert.deepEqual(layout(chunks), [
    '[MinKey 0) s0', '[0 10) s0', '[10 20) s2', '[20 30) s1', '[30 40) s0', '[40 50) s2', '[50 60) s1', '[60 MaxKey) s0',
  ]);
  assert.deepEqual(chunks.map((c) => c.lastmod.low), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.ok(chunks.every((c) => c.lastmod.high === 1 && c.history[0]!.shard === c.shard));
});

test('zones at the ends of the key space leave no gap chunks there', () => {
  const zones: ZoneRange[] = [{ tag: 'B', min: { x: new MinKey() }, max: { x: 0 } }, { tag: 'A', min: { x: 0 }, max: { x: new MaxKey() } }];
  assert.deepEqual(layout(initialChunks(request({ x: 1 }, { zones }))), ['[MinKey 0) s1', '[0 MaxKey) s0']);
});

test('a non-empty collection with zones starts as one chunk on the primary shard', () => {
  const zones: ZoneRange[] = [{ tag: 'A', min: { x: 0 }, max: { x: 10 } }];
  assert.deepEqual(layout(initialChunks(request({ x: 1 }, { zones, collectionIsEmpty: false }))), ['[MinKey MaxKey) s1']);
});

test('a zone without shards cannot lay out initial chunks (50973)', () => {
  const zones: ZoneRange[] = [{ tag: 'C', min: { x: 0 }, max: { x: 10 } }];
  assert.throws(() => initialChunks(request({ x: 1 }, { zones })), code(50973));
});

test('a hashed-prefix key with zones and no presplitHashedZones gets one chunk per zone range', () => {
  const zones: ZoneRange[] = [{ tag: 'B', min: { x: new MinKey() }, max: { x: Long.fromNumber(0) } }];
  assert.deepEqual(layout(initialChunks(request({ x: 'hashed' }, { zones }))), ['[MinKey 0) s1', '[0 MaxKey) s0']);
});

test('presplitHashedZones on a hashed-prefix key splits the one whole-range zone over its shards', () => {
  const zones: ZoneRange[] = [{ tag: 'A', min: { x: new MinKey() }, max: { x: new MaxKey() } }];
  const chunks = initialChunks(request({ x: 'hashed' }, { zones, presplitHashedZones: true }));
  assert.deepEqual(chunks.map((c) => c.shard), ['s0', 's0', 's2', 's2']);
  assert.deepEqual(chunks.map((c) => String(c.max.x)), ['-4611686018427387902', '0', '4611686018427387902', '[object Object]']);
  const numbered = initialChunks(request({ x: 'hashed' }, { zones, presplitHashedZones: true, numInitialChunks: 6 }));
  assert.deepEqual(numbered.map((c) => c.shard), ['s0', 's0', 's0', 's2', 's2', 's2']);
  assert.throws(() => initialChunks(request({ x: 'hashed' }, { zones: [{ tag: 'A', min: { x: new MinKey() }, max: { x: Long.fromNumber(0) } }], presplitHashedZones: true })), code(31412));
});

test('presplitHashedZones with a range prefix splits each zone by hash under its prefix', () => {
  const zones: ZoneRange[] = [
    { tag: 'A', min: { c: 'DE', x: new MinKey() }, max: { c: 'DF', x: new MinKey() } },
    { tag: 'B', min: { c: 'US', x: new MinKey() }, max: { c: 'UT', x: new MinKey() } },
  ];
  const chunks = initialChunks(request({ c: 1, x: 'hashed' }, { zones, presplitHashedZones: true }));
  assert.deepEqual(layout(chunks).map((l) => l.replace(/-?\d{6,}/g, 'h')), [
    '[MinKey,MinKey DE,MinKey) s0',
    '[DE,MinKey DE,h) s0', '[DE,h DE,0) s0', '[DE,0 DE,h) s2', '[DE,h DF,MinKey) s2',
    '[DF,MinKey US,MinKey) s1',
    '[US,MinKey US,0) s1', '[US,0 UT,MinKey) s1',
    '[UT,MinKey MaxKey,MaxKey) s2',
  ]);
  assert.ok(chunks.every((c) => c.min.x instanceof MinKey || c.min.x instanceof Long));
  const bad = (min: Doc, max: Doc) => initialChunks(request({ c: 1, x: 'hashed' }, { zones: [{ tag: 'A', min, max }], presplitHashedZones: true }));
  assert.throws(() => bad({ c: new MinKey(), x: new MinKey() }, { c: 'DE', x: new MinKey() }), code(31388));
  assert.throws(() => bad({ c: 'DE', x: new MinKey() }, { c: 'DE', x: new MaxKey() }), code(31390));
  assert.throws(() => bad({ c: 'DE', x: Long.fromNumber(5) }, { c: 'DF', x: new MinKey() }), code(31389));
  assert.throws(() => initialChunks(request({ c: 1, x: 'hashed' }, { zones, presplitHashedZones: true, collectionIsEmpty: false })), code(31387));
  assert.throws(() => initialChunks(request({ c: 1, x: 1 }, { zones, presplitHashedZones: true })), code(31387));
});

test('the translation and the commit check the zones against the key and lay out chunks along them', () => {
  const facts = { primaryShard: 's1', shards: ['s0', 's1', 's2'], collectionIsEmpty: true, zones: [{ tag: 'A', min: { x: 0 }, max: { x: 10 } }], shardZones: { s0: ['A'], s1: [], s2: [] } };
  const commit = {
    ns: 'db.c', unique: false, layout: facts, existing: undefined, knownShards: facts.shards, newEpoch: new ObjectId(), uuid: new UUID(), now,
    chunkIdFactory: () => new ObjectId(), log: { server: 'cfg', clientAddr: '', time: new Date(), newId: () => new ObjectId() },
  };
  assert.deepEqual(layout(decideShardCollection({ ...commit, key: { x: 1 } }).chunks), ['[MinKey 0) s0', '[0 10) s0', '[10 MaxKey) s1']);
  assert.throws(() => decideShardCollection({ ...commit, key: { x: 1, y: 1 } }), code(72));
  const translation = { ns: 'db.c', unique: false, layout: facts, options: {}, existingIndexes: [] };
  assert.deepEqual(translateShardCollection({ ...translation, key: { x: 1 } }).dataShards, ['s0']);
  assert.throws(() => translateShardCollection({ ...translation, key: { x: 1, y: 1 } }), code(72));
});
