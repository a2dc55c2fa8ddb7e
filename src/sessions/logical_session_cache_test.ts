import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, BSON } from 'bson';
import { LogicalSessionCache } from './logical_session_cache.js';

const lsid = (byte: number) => ({ id: new Binary(Buffer.alloc(16, byte), 4) });

describe('LogicalSessionCache', () => {
  it('keeps one entry per session id, with the time it was last used', () => {
    const cache = new LogicalSessionCache();
    cache.touch(lsid(1), 1_000);
    cache.touch(lsid(2), 2_000);
    cache.touch(lsid(1), 3_000);
    cache.touch({ id: 'not a binary' }, 3_000);
    cache.touch(undefined, 3_000);
    assert.equal(cache.size, 2);
    const listed = cache.list(new Date(4_000));
    assert.deepEqual(listed.map((s) => [((s._id as { id: Binary }).id.buffer[0]), (s.lastUse as Date).getTime()]), [[1, 3_000], [2, 2_000]]);
  });

  it('forgets ended sessions and those idle past the timeout', () => {
    const cache = new LogicalSessionCache();
    cache.touch(lsid(1), 0);
    cache.touch(lsid(2), 0);
    cache.touch(lsid(3), 29 * 60_000);
    cache.end([lsid(2), 'junk']);
    assert.deepEqual(cache.list(new Date(31 * 60_000)).map((s) => (s._id as { id: Binary }).id.buffer[0]), [3]);
    assert.equal(cache.size, 1);
  });

  it('touches a session from its lsid bytes as from the decoded lsid', () => {
    const cache = new LogicalSessionCache();
    cache.touchBytes(Buffer.from(BSON.serialize(lsid(1))), 1_000);
    cache.touch(lsid(2), 2_000);
    cache.touchBytes(Buffer.from(BSON.serialize(lsid(2))), 3_000);
    cache.touchBytes(Buffer.from(BSON.serialize({ other: 1, id: lsid(3).id })), 4_000);
    cache.touchBytes(Buffer.from(BSON.serialize({ id: 'not a binary' })), 4_000);
    assert.deepEqual(cache.list(new Date(5_000)).map((s) => [((s._id as { id: Binary }).id.buffer[0]), (s.lastUse as Date).getTime()]), [[1, 1_000], [2, 3_000], [3, 4_000]]);
  });
});
