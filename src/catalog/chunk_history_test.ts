import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ownerAt, placedAt, shardIdAt, throwIfMovedSince } from './chunk_history.js';

const ts = (t: number): Timestamp => new Timestamp({ t, i: 0 });

// Created on a at 10, moved to b at 20, back to a at 30.
const moved = { shard: 'a', history: [{ validAfter: ts(30), shard: 'a' }, { validAfter: ts(20), shard: 'b' }, { validAfter: ts(10), shard: 'a' }] };

function failsWith(code: number, fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => err instanceof MongoError && err.code === code);
}

describe('a chunk at a cluster time', () => {
  it('is on the shard of its newest history entry valid at or before the time', () => {
    assert.equal(shardIdAt(moved, ts(10)), 'a');
    assert.equal(shardIdAt(moved, ts(19)), 'a');
    assert.equal(shardIdAt(moved, ts(20)), 'b', 'validAfter is inclusive');
    assert.equal(shardIdAt(moved, ts(29)), 'b');
    assert.equal(shardIdAt(moved, new Timestamp({ t: 30, i: 1 })), 'a');
    assert.equal(placedAt(moved)?.t, 30);
  });

  it('cannot say before its history begins: StaleChunkHistory (250), as MongoDB answers', () => {
    failsWith(250, () => shardIdAt(moved, ts(9)));
    assert.equal(ownerAt(moved, ts(9)), undefined);
    assert.throws(() => shardIdAt(moved, ts(9)), /Cannot find shardId the chunk belonged to at cluster time Timestamp\(9, 0\)/);
  });

  it('without history is where it is now', () => {
    assert.equal(shardIdAt({ shard: 'c', history: [] }, ts(1)), 'c');
  });

  it('takes a write at a time only if it has not moved since (MigrationConflict, 272), or StaleChunkHistory before its history', () => {
    throwIfMovedSince(moved, ts(30));
    throwIfMovedSince(moved, ts(31));
    failsWith(272, () => throwIfMovedSince(moved, ts(25)));
    failsWith(272, () => throwIfMovedSince(moved, ts(15)));
    failsWith(250, () => throwIfMovedSince(moved, ts(5)));
  });
});
