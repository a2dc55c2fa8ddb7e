import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { encodeKey } from '../bson/key_string.js';
import { indexEntryKey } from '../storage/key_layout.js';
import {
  afterBatch, afterRound, batchLimit, DEFAULT_TTL_LIMITS, expirationDate, expiredRange, rangeAfter, ttlIndexes, ttlTarget, type ScanRange,
} from './ttl_policy.js';

const limits = { targetDocs: 100, targetTimeMs: 1000, subPassTargetMs: 60_000, batchEntries: 10 };

// Whether an index entry of `value` (record id 7) falls in the range, as the store would read it.
function inRange(range: ScanRange, value: unknown, direction: 1 | -1): boolean {
  const key = indexEntryKey(encodeKey([value], [direction]), 7);
  return Buffer.compare(key, range.start) >= 0 && Buffer.compare(key, range.end) < 0;
}

describe('the TTL policy', () => {
  it('lists TTL indexes, and those it must skip', () => {
    const { targets, invalid } = ttlIndexes([
      { ns: 'a.b', specs: [{ key: { _id: 1 }, name: '_id_' }, { key: { at: 1 }, name: 'at_1', expireAfterSeconds: 30 }, { key: { x: 1 }, name: 'x_1' }] },
      { ns: 'a.c', specs: [{ key: { at: -1 }, name: 'at_-1', expireAfterSeconds: 1.9 }, { key: { a: 1, b: 1 }, name: 'ab', expireAfterSeconds: 5 }, { key: { h: 'hashed' }, name: 'h', expireAfterSeconds: 5 }] },
    ]);
    assert.deepEqual(targets, [
      { ns: 'a.b', index: 'at_1', direction: 1, expireAfterSeconds: 30 },
      { ns: 'a.c', index: 'at_-1', direction: -1, expireAfterSeconds: 1 },
    ]);
    assert.deepEqual(invalid.map((i) => i.index), ['ab', 'h']);
    assert.match(invalid[0]!.reason, /single-field/);
    assert.match(invalid[1]!.reason, /special index/);
    assert.equal(typeof ttlTarget('a.b', { key: { at: 1 }, name: 'at_1', expireAfterSeconds: 'x' }), 'string');
  });

  it('expires what is at least expireAfterSeconds old, within the dates JavaScript holds', () => {
    assert.equal(expirationDate(100_000, 30).getTime(), 70_000);
    assert.equal(expirationDate(0, 2147483647).getTime(), -2147483647000);
    assert.equal(expirationDate(-8.64e15, 10).getTime(), -8.64e15);
  });

  for (const direction of [1, -1] as const) {
    it(`reads the dates at or before the expiration, and nothing else, on a ${direction === 1 ? 'an ascending' : 'a descending'} index`, () => {
      const cutoff = new Date(1_000_000);
      const range = expiredRange(direction, cutoff);
      assert.equal(range.reverse, direction === -1, 'oldest first');
      for (const expired of [new Date(-5e15), new Date(0), new Date(999_999), cutoff]) assert.ok(inRange(range, expired, direction), String(expired.getTime()));
      for (const kept of [new Date(1_000_001), new Date(8e15), 5, 'text', null, { d: cutoff }, true, new Timestamp({ t: 1, i: 1 })]) {
        assert.ok(!inRange(range, kept, direction), String(kept));
      }
    });
  }

  it('resumes strictly after the last entry read, in either direction', () => {
    const key = (ms: number, rid: number) => indexEntryKey(encodeKey([new Date(ms)]), rid);
    const forward = rangeAfter(expiredRange(1, new Date(1000)), key(500, 3));
    assert.ok(Buffer.compare(key(500, 3), forward.start) < 0);
    assert.ok(Buffer.compare(key(500, 4), forward.start) >= 0);
    assert.ok(Buffer.compare(key(501, 1), forward.start) >= 0);
    const back = expiredRange(-1, new Date(1000));
    const last = indexEntryKey(encodeKey([new Date(500)], [-1]), 3);
    const rest = rangeAfter(back, last);
    assert.equal(rest.start, back.start);
    assert.deepEqual(rest.end, last, 'the end is exclusive: the entry read is left out');
  });

  it('sizes write units by the entries they read and the visit target', () => {
    assert.equal(batchLimit(0, limits), 10);
    assert.equal(batchLimit(95, limits), 5);
    assert.equal(batchLimit(100, limits), 1);
    assert.ok(DEFAULT_TTL_LIMITS.batchEntries <= 1000, 'one write unit stays short');
  });

  it('ends a visit when the range is read, or when it met a target with more left', () => {
    assert.equal(afterBatch({ deleted: 3, elapsedMs: 5, entriesRead: 4, limit: 10 }, limits), 'exhausted');
    assert.equal(afterBatch({ deleted: 10, elapsedMs: 5, entriesRead: 10, limit: 10 }, limits), 'nextBatch');
    assert.equal(afterBatch({ deleted: 100, elapsedMs: 5, entriesRead: 10, limit: 10 }, limits), 'targetMet');
    assert.equal(afterBatch({ deleted: 0, elapsedMs: 1000, entriesRead: 10, limit: 10 }, limits), 'targetMet', 'entries kept (orphans) count in time');
  });

  it('revisits indexes with more left while the sub-pass has time, then starts another', () => {
    assert.equal(afterRound(0, 0, limits), 'passDone');
    assert.equal(afterRound(2, 59_999, limits), 'round');
    assert.equal(afterRound(2, 60_000, limits), 'subPass');
  });
});
