import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { decideMerge, type MergeRequest } from './merge_chunks.js';

const epoch = new ObjectId('65a000000000000000000001');
const collTs = new Timestamp({ t: 50, i: 0 });
const uuid = new UUID();
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: epoch, lastmod: new Date(0), timestamp: collTs, uuid, key: { a: 1 }, unique: false };
const early = new Timestamp({ t: 40, i: 0 });
const now = new Timestamp({ t: 60, i: 7 });
const log = { server: 'cfg:27019', clientAddr: '', time: new Date('2024-01-01T00:00:00Z'), newId: () => new ObjectId() };

function chunk(min: unknown, max: unknown, shard: string, major: number, minor: number, extra: Partial<ChunkType> = {}): ChunkType {
  return { _id: new ObjectId(), uuid, min: { a: min }, max: { a: max }, shard, lastmod: new Timestamp({ t: major, i: minor }), onCurrentShardSince: early, history: [{ validAfter: early, shard }, { validAfter: new Timestamp({ t: 1, i: 0 }), shard: 'old' }], ...extra };
}

// s0 owns [MinKey, 0), [0, 10), [10, 20); s1 owns [20, 30); s0 owns [30, MaxKey).
const c1 = chunk(new MinKey(), 0, 's0', 2, 0, { estimatedDataSizeBytes: 5 });
const c2 = chunk(0, 10, 's0', 2, 1);
const c3 = chunk(10, 20, 's0', 4, 2);
const c4 = chunk(20, 30, 's1', 3, 0);
const c5 = chunk(30, new MaxKey(), 's0', 1, 9);
const chunks = [c5, c3, c1, c4, c2];

function request(min: unknown, max: unknown, over: Partial<MergeRequest> = {}): MergeRequest {
  return { collection, chunks, range: { min: { a: min }, max: { a: max } }, shard: 's0', now, log, ...over };
}

function illegal(err: unknown): boolean {
  return err instanceof MongoError && err.code === 20 && /^could not merge chunks, shard s0 does not contain a sequence of chunks that exactly fills the range \[/.test(err.message);
}

test('contiguous chunks on one shard merge into one that keeps the first chunk id', () => {
  const d = decideMerge(request(new MinKey(), 20));
  assert.equal(d.alreadyMerged, false);
  assert.deepEqual(d.removed.map((c) => c._id), [c1._id, c2._id, c3._id]);
  assert.equal(d.merged!._id, c1._id);
  assert.deepEqual([d.merged!.min, d.merged!.max], [c1.min, c3.max]);
  assert.equal(d.merged!.shard, 's0');
});

test('the merged chunk takes the collection version with the minor bumped', () => {
  const d = decideMerge(request(0, 20));
  assert.deepEqual(d.merged!.lastmod, new Timestamp({ t: 4, i: 3 }));
  assert.deepEqual([d.collectionVersion.major, d.collectionVersion.minor], [4, 3]);
});

test('the merged chunk starts a fresh history now and drops the size estimate', () => {
  const merged = decideMerge(request(new MinKey(), 10)).merged!;
  assert.deepEqual(merged.history, [{ validAfter: now, shard: 's0' }]);
  assert.equal(merged.onCurrentShardSince, now);
  assert.equal('estimatedDataSizeBytes' in merged, false);
});

test('a merge logs the merged chunks, both versions and the owning shard', () => {
  const [entry] = decideMerge(request(new MinKey(), 20)).changelog;
  assert.equal(entry!.what, 'merge');
  assert.equal(entry!.shard, 'config');
  const details = entry!.details as Doc;
  assert.equal((details.merged as ChunkType[]).length, 3);
  assert.deepEqual(details.prevShardVersion, { e: epoch, t: collTs, v: new Timestamp({ t: 4, i: 2 }) });
  assert.deepEqual(details.mergedVersion, { e: epoch, t: collTs, v: new Timestamp({ t: 4, i: 3 }) });
  assert.equal(details.owningShard, 's0');
});

test('a range already covered by exactly one chunk is an idempotent success', () => {
  const d = decideMerge(request(10, 20));
  assert.equal(d.alreadyMerged, true);
  assert.deepEqual(d.removed, []);
  assert.equal(d.merged, undefined);
  assert.deepEqual(d.changelog, []);
});

test('a range that does not start or end on a chunk boundary cannot be merged', () => {
  assert.throws(() => decideMerge(request(5, 20)), illegal);
  assert.throws(() => decideMerge(request(0, 15)), illegal);
  assert.throws(() => decideMerge(request(10, 15)), illegal);
});

test('a range crossing a chunk of another shard cannot be merged', () => {
  assert.throws(() => decideMerge(request(10, new MaxKey())), illegal);
});

test('a range with no chunks of the shard cannot be merged', () => {
  assert.throws(() => decideMerge(request(20, 30)), illegal);
});
