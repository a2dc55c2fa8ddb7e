import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { BSONRegExp, MinKey, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { chunkVersion, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { chunkHistoryWindowSecs, decideCommitChunkMigration, DEFAULT_CHUNK_HISTORY_WINDOW_SECS, type CommitMigrationRequest } from './commit_chunk_migration.js';

const epoch = new ObjectId('65a000000000000000000001');
const collTs = new Timestamp({ t: 50, i: 0 });
const uuid = new UUID();
const collection: CollectionType = { _id: 'db.c', lastmodEpoch: epoch, lastmod: new Date(0), timestamp: collTs, uuid, key: { a: 1 }, unique: false };
const early = new Timestamp({ t: 1000, i: 0 });
const now = new Timestamp({ t: 2000, i: 3 });
const log = { server: 's0:27018', clientAddr: '', time: new Date('2024-01-01T00:00:00Z'), newId: () => new ObjectId() };
const shards: ShardType[] = ['s0', 's1', 's2'].map((id) => ({ _id: id, host: `${id}:27018`, state: 1, topologyTime: early }));
const counts = { cloned: 10, clonedBytes: 100, catchup: 0, steady: 0 };

function ts(major: number, minor: number): Timestamp {
  return new Timestamp({ t: major, i: minor });
}

function chunk(min: unknown, max: unknown, shard: string, major: number, minor: number, extra: Partial<ChunkType> = {}): ChunkType {
  return { _id: new ObjectId(), uuid, min: { a: min }, max: { a: max }, shard, lastmod: ts(major, minor), onCurrentShardSince: early, history: [{ validAfter: early, shard }], ...extra };
}

// s0 owns [MinKey, 0) and [10, 20); s1 owns [0, 10) and [20, MaxKey). Collection version 5|2.
const c1 = chunk(new MinKey(), 0, 's0', 3, 0, { estimatedDataSizeBytes: 7 });
const c2 = chunk(0, 10, 's1', 5, 2);
const c3 = chunk(10, 20, 's0', 4, 1);
const c4 = chunk(20, new MaxKey(), 's1', 5, 1);
const chunks = [c4, c3, c2, c1];

function request(moved: ChunkType, over: Partial<CommitMigrationRequest> = {}): CommitMigrationRequest {
  let n = 0;
  return {
    collection, chunks, shards,
    migratedChunk: { min: moved.min, max: moved.max, lastmod: moved.lastmod },
    fromShardCollectionVersion: chunkVersion(epoch, collTs, 5, 2),
    fromShard: moved.shard, toShard: 's2', validAfter: now, counts,
    chunkIdFactory: () => new ObjectId(`65b0000000000000000000${String(++n).padStart(2, '0')}`),
    log, ...over,
  };
}

function vers(v: ChunkVersion): [number, number] {
  return [v.major, v.minor];
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

function apply(list: readonly ChunkType[], d: { updated: ChunkType[]; inserted: ChunkType[] }): ChunkType[] {
  const byId = new Map(d.updated.map((c) => [c._id.toHexString(), c]));
  return [...list.map((c) => byId.get(c._id.toHexString()) ?? c), ...d.inserted];
}

test('the moved chunk keeps its id and takes the collection major + 1, minor 0, on the recipient', () => {
  const d = decideCommitChunkMigration(request(c1));
  const moved = d.updated[0]!;
  assert.equal(moved._id, c1._id);
  assert.equal(moved.shard, 's2');
  assert.deepEqual(moved.lastmod, ts(6, 0));
  assert.deepEqual([moved.min, moved.max], [c1.min, c1.max]);
  assert.equal(moved.estimatedDataSizeBytes, 100, 'the recipient\'s clonedBytes become its size estimate');
  assert.equal(d.alreadyCommitted, false);
  assert.deepEqual(d.inserted, []);
});

test('history gets the recipient first and onCurrentShardSince is the commit time', () => {
  const moved = decideCommitChunkMigration(request(c1)).updated[0]!;
  assert.deepEqual(moved.history, [{ validAfter: now, shard: 's2' }, { validAfter: early, shard: 's0' }]);
  assert.equal(moved.onCurrentShardSince, now);
});

test('the donor control chunk takes the same major and minor 1, so both shard versions move', () => {
  const d = decideCommitChunkMigration(request(c1));
  assert.equal(d.updated.length, 2);
  const control = d.updated[1]!;
  assert.equal(control._id, c3._id);
  assert.equal(control.shard, 's0');
  assert.deepEqual(control.lastmod, ts(6, 1));
  assert.deepEqual(control.history, c3.history);
  assert.deepEqual(vers(d.collectionVersion), [6, 1]);
  assert.deepEqual(vers(d.shardVersions.donor), [6, 1]);
  assert.deepEqual(vers(d.shardVersions.recipient), [6, 0]);
  assert.ok(d.collectionVersion.epoch.equals(epoch) && d.collectionVersion.timestamp.equals(collTs));
});

test('the control chunk is the donor chunk with the lowest min other than the moved one', () => {
  const extra = chunk(-100, -50, 's1', 1, 0);
  const lower = [chunk(new MinKey(), -100, 's1', 1, 1), extra, chunk(-50, 0, 's0', 1, 2), chunk(0, new MaxKey(), 's1', 2, 0)];
  const d = decideCommitChunkMigration(request(lower[3]!, { chunks: lower, fromShardCollectionVersion: chunkVersion(epoch, collTs, 2, 0) }));
  assert.equal(d.updated[1]!._id, lower[0]!._id);
});

test('moving the donor\'s last chunk bumps no control chunk and leaves the donor at 0|0', () => {
  const d = decideCommitChunkMigration(request(c2, { chunks: [c1, c2, c3, { ...c4, shard: 's0' }] }));
  assert.equal(d.updated.length, 1);
  assert.deepEqual(vers(d.shardVersions.donor), [0, 0]);
  assert.ok(d.shardVersions.donor.epoch.equals(epoch));
  assert.deepEqual(vers(d.collectionVersion), [6, 0]);
});

test('a sub-range (moveRange) leaves pieces on the donor at the new major, then the control chunk', () => {
  const d = decideCommitChunkMigration(request(c3, { migratedChunk: { min: { a: 12 }, max: { a: 15 }, lastmod: c3.lastmod } }));
  const [moved, control] = d.updated;
  assert.equal(moved!._id, c3._id);
  assert.deepEqual([moved!.min, moved!.max, moved!.lastmod], [{ a: 12 }, { a: 15 }, ts(6, 0)]);
  assert.deepEqual(d.inserted.map((c) => [c.min, c.max, c.shard, c.lastmod]), [
    [{ a: 10 }, { a: 12 }, 's0', ts(6, 1)],
    [{ a: 15 }, { a: 20 }, 's0', ts(6, 2)],
  ]);
  assert.deepEqual(d.inserted.map((c) => c._id.toHexString()), ['65b000000000000000000001', '65b000000000000000000002']);
  assert.deepEqual(d.inserted[0]!.history, c3.history);
  assert.deepEqual([control!._id, control!.lastmod], [c1._id, ts(6, 3)]);
  assert.deepEqual(vers(d.shardVersions.donor), [6, 3]);
  assert.deepEqual(vers(d.collectionVersion), [6, 3]);
});

test('a range at the chunk\'s min leaves only a right piece', () => {
  const d = decideCommitChunkMigration(request(c3, { migratedChunk: { min: { a: 10 }, max: { a: 15 }, lastmod: c3.lastmod } }));
  assert.deepEqual(d.inserted.map((c) => [c.min, c.max, c.lastmod]), [[{ a: 15 }, { a: 20 }, ts(6, 1)]]);
  assert.deepEqual(d.updated[1]!.lastmod, ts(6, 2));
});

test('a retried commit (range already on the recipient) writes nothing and reports the versions', () => {
  const first = decideCommitChunkMigration(request(c1));
  const after = apply(chunks, first);
  const retry = decideCommitChunkMigration(request(c1, { chunks: after, fromShardCollectionVersion: chunkVersion(epoch, collTs, 6, 1) }));
  assert.equal(retry.alreadyCommitted, true);
  assert.deepEqual([retry.updated, retry.inserted, retry.changelog], [[], [], []]);
  assert.deepEqual(vers(retry.collectionVersion), vers(first.collectionVersion));
  assert.deepEqual(vers(retry.shardVersions.donor), vers(first.shardVersions.donor));
  assert.deepEqual(vers(retry.shardVersions.recipient), vers(first.shardVersions.recipient));
});

test('the commit logs moveChunk.commit as the donor with range, shards and counts', () => {
  const [entry] = decideCommitChunkMigration(request(c1)).changelog;
  assert.equal(entry!.what, 'moveChunk.commit');
  assert.equal(entry!.shard, 's0');
  assert.equal(entry!.ns, 'db.c');
  assert.deepEqual(entry!.details, { min: c1.min, max: c1.max, from: 's0', to: 's2', counts });
});

test('old history entries beyond the window are dropped, keeping at least one', () => {
  const old = new Timestamp({ t: now.t - DEFAULT_CHUNK_HISTORY_WINDOW_SECS - 1, i: 0 });
  const recent = new Timestamp({ t: now.t - 10, i: 0 });
  const c = chunk(new MinKey(), new MaxKey(), 's0', 1, 0, { history: [{ validAfter: recent, shard: 's0' }, { validAfter: old, shard: 's1' }] });
  const only = { ...c, history: [{ validAfter: old, shard: 's0' }] };
  const req = (x: ChunkType) => request(x, { chunks: [x], fromShardCollectionVersion: chunkVersion(epoch, collTs, 1, 0) });
  assert.deepEqual(decideCommitChunkMigration(req(c)).updated[0]!.history.map((h) => h.shard), ['s2', 's0']);
  assert.deepEqual(decideCommitChunkMigration(req(only)).updated[0]!.history.map((h) => h.shard), ['s2', 's0']);
});

test('the history window follows minSnapshotHistoryWindowInSeconds and transactionLifetimeLimitSeconds, never under 10 seconds', () => {
  assert.equal(DEFAULT_CHUNK_HISTORY_WINDOW_SECS, 300);
  assert.equal(chunkHistoryWindowSecs({ minSnapshotHistoryWindowInSeconds: 5, transactionLifetimeLimitSeconds: 60 }), 60);
  assert.equal(chunkHistoryWindowSecs({ minSnapshotHistoryWindowInSeconds: 1, transactionLifetimeLimitSeconds: 1 }), 10);
  const at = (secsAgo: number): Timestamp => new Timestamp({ t: now.t - secsAgo, i: 0 });
  const c = chunk(new MinKey(), new MaxKey(), 's0', 1, 0, { history: [{ validAfter: at(20), shard: 's0' }, { validAfter: at(40), shard: 's1' }, { validAfter: at(70), shard: 's0' }] });
  const req = (historyWindowSecs: number) => request(c, { chunks: [c], fromShardCollectionVersion: chunkVersion(epoch, collTs, 1, 0), historyWindowSecs });
  const kept = (historyWindowSecs: number) => decideCommitChunkMigration(req(historyWindowSecs)).updated[0]!.history.map((h) => now.t - h.validAfter.t);
  assert.deepEqual(kept(60), [0, 20, 40], 'the entry from 70 s ago goes');
  assert.deepEqual(kept(30), [0, 20], 'and with a shorter window the one from 40 s ago too');
  assert.deepEqual(kept(10), [0, 20], 'the last entry before the commit always stays');
  assert.deepEqual(kept(300), [0, 20, 40, 70]);
});

const table: [string, Partial<CommitMigrationRequest>, ChunkType, (e: unknown) => boolean][] = [
  ['an unknown recipient', { toShard: 's9' }, c1, code(70, /^Shard s9 does not exist$/)],
  ['a draining recipient', { shards: shards.map((s) => (s._id === 's2' ? { ...s, draining: true } : s)) }, c1, code(70, /^Shard s2 is currently draining$/)],
  ['a bound that cannot be stored', { migratedChunk: { min: { a: new BSONRegExp('x', '') }, max: { a: 0 }, lastmod: ts(3, 0) } }, c1, code(2, /^Shard key element a: \/x\/ is not valid for storage$/)],
  ['a collection without chunks', { chunks: [] }, c1, code(105, /^Tried to find max chunk version for collection 'db.c, but found no chunks$/)],
  ['a dropped and recreated collection', { fromShardCollectionVersion: chunkVersion(new ObjectId(), collTs, 5, 2) }, c1, code(150, /^The epoch of collection 'db.c' has changed since the migration began\. .*Aborting migration commit for chunk \(\[\{ a: MinKey \}, \{ a: 0 \}\)\)\.$/)],
  ['a refined shard key (new timestamp)', { fromShardCollectionVersion: chunkVersion(epoch, new Timestamp({ t: 49, i: 0 }), 5, 2) }, c1, code(150)],
  ['a request without the chunk version', { migratedChunk: { min: c1.min, max: c1.max } }, c1, code(4683300, /^Config server rejecting commitChunkMigration request that does not have a ChunkVersion$/)],
  ['a range spanning two chunks', { migratedChunk: { min: { a: 5 }, max: { a: 15 }, lastmod: ts(5, 2) } }, c2, code(40165, /^Could not find a chunk including bounds \[\{ a: 5 \}, \{ a: 15 \}\)\. Cannot execute the migration commit with invalid chunks\.$/)],
  ['a chunk owned by a third shard', { fromShard: 's1', toShard: 's2' }, c1, code(4914702, /^Migrated  chunk .* from ns: db\.c not owned by donor s1 neither by recipient s2$/)],
  ['a version older than the chunk\'s (it was split meanwhile)', { migratedChunk: { min: c1.min, max: c1.max, lastmod: ts(2, 9) } }, c1, code(117, /^Rejecting migration request because the version of the requested chunk .*\(2\|9\|\|.*\) is older than the version of the current chunk .*\(3\|0\|\|.*\) on shard s0$/)],
  ['a history newer than the commit time', { validAfter: new Timestamp({ t: 999, i: 0 }) }, c1, code(105, /^The chunk history for chunk with namespace db\.c and min key \{ a: MinKey \} is corrupted\. The last validAfter Timestamp\(1000, 0\) is greater or equal to the new validAfter Timestamp\(999, 0\)$/)],
];

for (const [name, over, moved, check] of table) {
  test(`a commit is refused for ${name}`, () => {
    assert.throws(() => decideCommitChunkMigration(request(moved, over)), check);
  });
}

test('versions across several migrations in a row', () => {
  let list: ChunkType[] = [...chunks];
  let clock = now.t;
  const move = (min: Doc, from: string, to: string) => {
    const c = list.find((x) => x.min.a === min.a)!;
    const before = Math.max(...list.map((x) => x.lastmod.t * 1000 + x.lastmod.i));
    const d = decideCommitChunkMigration(request(c, {
      chunks: list, fromShard: from, toShard: to, validAfter: new Timestamp({ t: ++clock, i: 0 }),
      fromShardCollectionVersion: chunkVersion(epoch, collTs, Math.floor(before / 1000), before % 1000),
    }));
    list = apply(list, d);
    return d;
  };
  // 5|2 → c1 s0→s2: 6|0 (moved), 6|1 (control c3)
  let d = move(c1.min, 's0', 's2');
  assert.deepEqual([vers(d.shardVersions.donor), vers(d.shardVersions.recipient)], [[6, 1], [6, 0]]);
  // c2 s1→s0: 7|0, control c4 7|1
  d = move(c2.min, 's1', 's0');
  assert.deepEqual([vers(d.shardVersions.donor), vers(d.shardVersions.recipient), vers(d.collectionVersion)], [[7, 1], [7, 0], [7, 1]]);
  // c1 back s2→s0: s2 loses its only chunk
  d = move(c1.min, 's2', 's0');
  assert.deepEqual([vers(d.shardVersions.donor), vers(d.shardVersions.recipient), vers(d.collectionVersion)], [[0, 0], [8, 0], [8, 0]]);
  // The original s0 entry (t=1000) is older than the window at t=2003 and is dropped.
  assert.deepEqual(list.find((x) => x._id.equals(c1._id))!.history.map((h) => [h.shard, h.validAfter.t]), [['s0', 2003], ['s2', 2001]]);
  // c4 s1→s2: s1 had only c4 left
  d = move(c4.min, 's1', 's2');
  assert.deepEqual([vers(d.shardVersions.donor), vers(d.shardVersions.recipient)], [[0, 0], [9, 0]]);
  assert.deepEqual(list.map((c) => c.shard).sort(), ['s0', 's0', 's0', 's2']);
});
