import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId } from 'bson';
import { MongoError } from '../base/errors.js';
import { moveChunkCommitEntry, moveChunkErrorEntry, moveChunkFromEntry, moveChunkStartEntry } from './migration_changelog.js';

const log = { server: 'h:27018', clientAddr: '10.0.0.1:5000', time: new Date('2024-01-01T00:00:00Z'), newId: () => new ObjectId('65c000000000000000000001') };
const r = { ns: 'db.c', min: { a: 0 }, max: { a: 10 }, from: 's0', to: 's1' };

test('moveChunk.start, .commit and .error carry the range and both shards', () => {
  const start = moveChunkStartEntry(log, 's0', r);
  assert.equal(start._id, 'h:27018-2024-01-01T00:00:00.000+00:00-65c000000000000000000001');
  assert.deepEqual([start.what, start.shard, start.ns], ['moveChunk.start', 's0', 'db.c']);
  assert.deepEqual(start.details, { min: r.min, max: r.max, from: 's0', to: 's1' });
  const counts = { cloned: 3, clonedBytes: 90, catchup: 1, steady: 0 };
  assert.deepEqual(moveChunkCommitEntry(log, 's0', r, counts).details, { min: r.min, max: r.max, from: 's0', to: 's1', counts });
  assert.equal(moveChunkErrorEntry(log, 's0', r).what, 'moveChunk.error');
});

test('moveChunk.from lists the step times first, then the range, shards and a success note', () => {
  const entry = moveChunkFromEntry(log, 's0', r, [1, 2, 3, 4, 5, 6]);
  assert.equal(entry.what, 'moveChunk.from');
  assert.deepEqual(Object.keys(entry.details as object), ['step 1 of 6', 'step 2 of 6', 'step 3 of 6', 'step 4 of 6', 'step 5 of 6', 'step 6 of 6', 'min', 'max', 'to', 'from', 'note']);
  assert.equal((entry.details as { note: string }).note, 'success');
});

test('moveChunk.from with fewer than 6 steps is an aborted migration, with its error message', () => {
  const entry = moveChunkFromEntry(log, 's0', r, [5, 6], 'cloning failed');
  assert.deepEqual(entry.details, { 'step 1 of 6': 5, 'step 2 of 6': 6, min: r.min, max: r.max, to: 's1', from: 's0', note: 'aborted', errmsg: 'cloning failed' });
  assert.throws(() => moveChunkFromEntry(log, 's0', r, [1, 2, 3, 4, 5, 6, 7]), MongoError);
});
