import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { BSONRegExp, MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { decideSplit, type SplitRequest } from './split_chunk.js';

const epoch = new ObjectId('65a000000000000000000001');
const collTs = new Timestamp({ t: 50, i: 0 });
const uuid = new UUID('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: epoch, lastmod: new Date(0), timestamp: collTs, uuid, key: { a: 1 }, unique: false };
const early = new Timestamp({ t: 40, i: 0 });
const log = { server: 'cfg:27019', clientAddr: '', time: new Date('2024-01-01T00:00:00Z'), newId: () => new ObjectId() };

function chunk(min: unknown, max: unknown, shard: string, major: number, minor: number, extra: Partial<ChunkType> = {}): ChunkType {
  return { _id: new ObjectId(), uuid, min: { a: min }, max: { a: max }, shard, lastmod: new Timestamp({ t: major, i: minor }), onCurrentShardSince: early, history: [{ validAfter: early, shard }], ...extra };
}

const left = chunk(new MinKey(), 0, 's0', 2, 1, { jumbo: true, estimatedDataSizeBytes: 1234 });
const right = chunk(0, new MaxKey(), 's1', 3, 0);
const chunks = [left, right];

function request(splitPoints: Doc[], over: Partial<SplitRequest> = {}): SplitRequest {
  let n = 0;
  return { collection, chunks, chunkRange: { min: left.min, max: left.max }, splitPoints, shard: 's0', chunkIdFactory: () => new ObjectId(`65b0000000000000000000${String(++n).padStart(2, '0')}`), log, ...over };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

test('a split keeps the original chunk as the first piece and inserts the rest', () => {
  const d = decideSplit(request([{ a: -10 }]));
  assert.equal(d.updated.length, 1);
  assert.equal(d.updated[0]!._id, left._id);
  assert.deepEqual(d.updated[0]!.max, { a: -10 });
  assert.equal(d.inserted.length, 1);
  assert.deepEqual(d.inserted[0]!._id, new ObjectId('65b000000000000000000001'));
  assert.deepEqual([d.inserted[0]!.min, d.inserted[0]!.max], [{ a: -10 }, { a: 0 }]);
});

test('the pieces take the collection major and the minors after the collection version', () => {
  const d = decideSplit(request([{ a: -10 }, { a: -5 }]));
  const pieces = [...d.updated, ...d.inserted];
  assert.deepEqual(pieces.map((c) => [c.lastmod.high, c.lastmod.low]), [[3, 1], [3, 2], [3, 3]]);
  assert.deepEqual([d.collectionVersion.major, d.collectionVersion.minor], [3, 3]);
  assert.ok(d.collectionVersion.epoch.equals(epoch));
});

test('the pieces keep shard, history and jumbo but lose the size estimate', () => {
  const [first, second] = [...decideSplit(request([{ a: -10 }])).updated, ...decideSplit(request([{ a: -10 }])).inserted];
  for (const piece of [first!, second!]) {
    assert.equal(piece.shard, 's0');
    assert.deepEqual(piece.history, left.history);
    assert.equal(piece.onCurrentShardSince, early);
    assert.equal(piece.jumbo, true);
    assert.equal('estimatedDataSizeBytes' in piece, false);
  }
  assert.deepEqual(Object.keys(first!), ['_id', 'uuid', 'min', 'max', 'shard', 'lastmod', 'jumbo', 'onCurrentShardSince', 'history']);
});

test('a two-way split logs one split entry with before, left and right', () => {
  const [entry, ...rest] = decideSplit(request([{ a: -10 }])).changelog;
  assert.equal(rest.length, 0);
  assert.equal(entry!.what, 'split');
  assert.equal(entry!.shard, 'config');
  assert.equal(entry!.ns, 'db.c');
  const details = entry!.details as Doc;
  assert.deepEqual(Object.keys(details), ['before', 'left', 'right', 'owningShard']);
  assert.deepEqual(details.before, { min: left.min, max: left.max, lastmod: { e: epoch, t: collTs, v: new Timestamp({ t: 3, i: 0 }) } });
  assert.deepEqual(details.left, { min: left.min, max: { a: -10 }, lastmod: { e: epoch, t: collTs, v: new Timestamp({ t: 3, i: 1 }) } });
  assert.equal(details.owningShard, 's0');
});

test('a multi-way split logs one multi-split entry per piece', () => {
  const entries = decideSplit(request([{ a: -10 }, { a: -5 }])).changelog;
  assert.deepEqual(entries.map((e) => e.what), ['multi-split', 'multi-split', 'multi-split']);
  assert.deepEqual(entries.map((e) => [(e.details as Doc).number, (e.details as Doc).of]), [[1, 3], [2, 3], [3, 3]]);
  assert.deepEqual(((entries[2]!.details as Doc).chunk as Doc).max, { a: 0 });
});

test('the range must start at an existing chunk', () => {
  assert.throws(() => decideSplit(request([{ a: 5 }], { chunkRange: { min: { a: 1 }, max: { a: 10 } } })), code(105, /and min key \{ a: 1 \}, but found no chunks$/));
});

test('the range must match that chunk exactly, on the requesting shard', () => {
  assert.throws(() => decideSplit(request([{ a: -10 }], { chunkRange: { min: left.min, max: { a: 5 } } })), code(2, /expected chunk with range \[\{ a: MinKey \}, \{ a: 5 \}\) in shard s0 but no chunk was found/));
  assert.throws(() => decideSplit(request([{ a: -10 }], { shard: 's1' })), code(2, /in shard s1/));
});

test('split points must lie strictly inside the chunk, in increasing order', () => {
  assert.throws(() => decideSplit(request([{ a: 5 }])), code(72, /^Split key \{ a: 5 \} not contained within chunk/));
  assert.throws(() => decideSplit(request([{ a: -5 }, { a: -10 }])), code(72, /strictly increasing order. Key \{ a: -10 \} was specified after \{ a: -5 \}\.$/));
  assert.throws(() => decideSplit(request([{ a: -5 }, { a: -5 }])), code(72, /^Split on lower bound of chunk/));
  assert.throws(() => decideSplit(request([{ a: new MinKey() }])), code(72, /^Split on lower bound of chunk/));
  assert.throws(() => decideSplit(request([{ a: 0 }])), code(72, /^Split on lower bound of chunk/));
});

test('split points must be shard keys that can be stored', () => {
  assert.throws(() => decideSplit(request([{ a: -5, b: 1 }])), code(72, /is not valid for shard key pattern/));
  assert.throws(() => decideSplit(request([{ a: new BSONRegExp('x', '') }], { chunkRange: { min: right.min, max: right.max }, shard: 's1' })), code(2, /is not valid for storage/));
});

test('at least one split point is required', () => {
  assert.throws(() => decideSplit(request([])), code(72));
});

test('a collection without chunks is IncompatibleShardingMetadata', () => {
  assert.throws(() => decideSplit(request([{ a: -5 }], { chunks: [] })), code(105, /found no chunks/));
});
