import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { ChunkManager } from './chunk_manager.js';
import { chunksForQuery, shardForInsert, shardsForQuery, targetUpdateOrDelete } from './targeter.js';

const uuid = new Binary(Buffer.alloc(16, 3), 4);
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp: new Timestamp({ t: 1, i: 0 }), uuid, key: { x: 1 }, unique: false };
const ts = (t: number): Timestamp => new Timestamp({ t, i: 0 });

function chunk(min: unknown, max: unknown, lastmod: number, history: [number, string][]): ChunkType {
  return {
    _id: new ObjectId(), uuid, min: { x: min }, max: { x: max }, shard: history[0]![1], lastmod: new Timestamp({ t: lastmod, i: 0 }),
    onCurrentShardSince: ts(history[0]![0]), history: history.map(([t, shard]) => ({ validAfter: ts(t), shard })),
  };
}

// [MinKey, 0) on s1 since 10; [0, 100) on s1 from 10, moved to s2 at 50; [100, MaxKey) merged on s3 at 70.
function table(): ChunkManager {
  return ChunkManager.create(collection, [
    chunk(new MinKey(), 0, 1, [[10, 's1']]),
    chunk(0, 100, 2, [[50, 's2'], [10, 's1']]),
    chunk(100, new MaxKey(), 3, [[70, 's3']]),
  ]);
}

function failsWith(code: number, fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => err instanceof MongoError && err.code === code);
}

describe('the routing table as of a cluster time', () => {
  it('is the current table itself when nothing moved or merged after that time', () => {
    const cm = table();
    assert.equal(cm.atClusterTime(ts(70)), cm);
    assert.equal(cm.atClusterTime(ts(90)), cm);
    assert.equal(cm.atClusterTime(ts(70)).clusterTime, undefined);
  });

  it('targets each chunk at the shard its history names then, keeping current shard versions', () => {
    const cm = table();
    const at = cm.atClusterTime(ts(60));
    assert.equal(at.clusterTime?.t, 60);
    assert.equal(at.findIntersectingChunk({ x: 5 }).shard, 's2');
    const before = cm.atClusterTime(ts(40));
    assert.equal(before.findIntersectingChunk({ x: 5 }).shard, 's1');
    assert.equal(before.chunkForNumericKey(5)?.shard, 's1');
    assert.equal(before.shardForNumericKey(-5), 's1');
    assert.deepEqual([...shardsForQuery(before, { x: { $lt: 50 } })], ['s1']);
    assert.deepEqual(chunksForQuery(before, { x: { $gte: 0, $lt: 50 } }, 10).map((c) => c.shard), ['s1']);
    assert.equal(shardForInsert(before, { x: -1 }), 's1');
    assert.deepEqual(before.shardVersion('s1'), cm.shardVersion('s1'));
    assert.deepEqual(before.shardVersion('s2'), cm.shardVersion('s2'));
    assert.equal(cm.findIntersectingChunk({ x: 5 }).shard, 's2', 'the current table is untouched');
  });

  it('answers StaleChunkHistory (250) for a chunk whose history does not reach back to the time', () => {
    const before = table().atClusterTime(ts(40));
    failsWith(250, () => before.findIntersectingChunk({ x: 200 }));
    failsWith(250, () => shardsForQuery(before, {}));
    failsWith(250, () => before.getAllShardIds());
    failsWith(250, () => shardsForQuery(before, { x: { $gte: 50 } }));
    assert.deepEqual([...before.getShardIdsForRange({ x: new MinKey() }, { x: 50 })], ['s1'], 'a range that avoids it is fine');
  });

  it('lists the shards owning chunks at the time', () => {
    // [MinKey, 0) on s1 since 10; [0, MaxKey) on s1 from 10, moved to s2 at 50.
    const cm = ChunkManager.create(collection, [chunk(new MinKey(), 0, 1, [[10, 's1']]), chunk(0, new MaxKey(), 2, [[50, 's2'], [10, 's1']])]);
    assert.deepEqual([...cm.getAllShardIds()].sort(), ['s1', 's2']);
    assert.deepEqual([...cm.atClusterTime(ts(40)).getAllShardIds()], ['s1']);
    assert.deepEqual([...cm.atClusterTime(ts(40)).getAllShardIds()], ['s1'], 'asked again');
    assert.deepEqual([...shardsForQuery(cm.atClusterTime(ts(40)), {})], ['s1']);
  });

  it('is the same table for the same time, asked again', () => {
    const cm = table();
    assert.equal(cm.atClusterTime(ts(40)), cm.atClusterTime(ts(40)));
    assert.equal(cm.atClusterTime(ts(40)).atClusterTime(ts(40)), cm.atClusterTime(ts(40)));
    assert.equal(cm.atClusterTime(ts(40)).atClusterTime(ts(80)), cm, 'from a table at a time, a later one is the current');
  });

  it('refuses writes to a chunk that moved since the time (MigrationConflict, 272), and takes the others', () => {
    const before = table().atClusterTime(ts(40));
    failsWith(272, () => shardForInsert(before, { x: 5 }));
    failsWith(272, () => targetUpdateOrDelete(before, { x: 5 }, false));
    failsWith(272, () => targetUpdateOrDelete(before, { x: { $gte: -10, $lt: 10 } }, true));
    assert.deepEqual([...targetUpdateOrDelete(before, { x: -5 }, false).shards], ['s1']);
    assert.deepEqual([...targetUpdateOrDelete(before, { x: { $lt: -1 } }, true).shards], ['s1']);
    assert.equal(shardForInsert(before, { x: -1 }), 's1');
  });

  it('keeps the history through an incremental refresh', () => {
    const cm = table();
    assert.equal(cm.atClusterTime(ts(60)).findIntersectingChunk({ x: 5 }).shard, 's2');
    // [0, 100) moves back to s1 at 80.
    const next = cm.applyChunkChanges([chunk(0, 100, 4, [[80, 's1'], [50, 's2'], [10, 's1']])]);
    assert.equal(next.atClusterTime(ts(60)).findIntersectingChunk({ x: 5 }).shard, 's2');
    assert.equal(next.atClusterTime(ts(40)).findIntersectingChunk({ x: 5 }).shard, 's1');
    assert.equal(next.atClusterTime(ts(85)), next);
    assert.equal(next.findIntersectingChunk({ x: 5 }).shard, 's1');
  });
});
