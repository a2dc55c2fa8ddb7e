import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, BSON } from 'bson';
import type { Doc } from '../bson/values.js';
import { LogicalSessionCache, type ServiceLiaison } from './logical_session_cache.js';
import type { SessionKillerMatcher } from './kill_sessions.js';
import { ANONYMOUS_UID, sessionKey, type LogicalSessionId } from './session_id.js';
import type { SessionsCollection } from './sessions_collection.js';

const lsid = (byte: number): LogicalSessionId => ({ id: new Binary(Buffer.alloc(16, byte), 4), uid: ANONYMOUS_UID });
const fromClient = (byte: number) => ({ id: lsid(byte).id });
const idByte = (s: Doc): number => ((s._id as { id: Binary }).id.buffer[0])!;

// config.system.sessions in memory: session key -> lastUse.
class FakeSessionsCollection implements SessionsCollection {
  readonly records = new Map<string, number>();
  failRefresh = false;
  refreshSessions(lsids: readonly LogicalSessionId[]): Promise<void> {
    if (this.failRefresh) return Promise.reject(new Error('config server unreachable'));
    for (const l of lsids) this.records.set(sessionKey(l), 1);
    return Promise.resolve();
  }
  removeRecords(lsids: readonly LogicalSessionId[]): Promise<void> {
    for (const l of lsids) this.records.delete(sessionKey(l));
    return Promise.resolve();
  }
  findRemovedSessions(lsids: readonly LogicalSessionId[]): Promise<LogicalSessionId[]> {
    return Promise.resolve(lsids.filter((l) => !this.records.has(sessionKey(l))));
  }
}

// A process with cursors in some sessions and operations running in others.
function service(cursorSessions: LogicalSessionId[], opSessions: LogicalSessionId[] = []): ServiceLiaison & { killed: number[] } {
  const killed: number[] = [];
  return {
    killed,
    openCursorSessions: () => cursorSessions,
    activeOpSessions: () => opSessions,
    killCursorsWithMatchingSessions(matcher: SessionKillerMatcher) {
      const matching = cursorSessions.filter((l) => matcher.match(l));
      killed.push(...matching.map((l) => l.id.buffer[0]!));
      return matching.length;
    },
  };
}

describe('LogicalSessionCache', () => {
  it('keeps one entry per session id, with the time it was last used, and lists them as $listLocalSessions', () => {
    const cache = new LogicalSessionCache();
    cache.touch(fromClient(1), 1_000);
    cache.touch(fromClient(2), 2_000);
    cache.touch(fromClient(1), 3_000);
    cache.touch({ id: 'not a binary' }, 3_000);
    cache.touch(undefined, 3_000);
    assert.equal(cache.size, 2);
    const listed = cache.list();
    assert.deepEqual(listed.map((s) => [idByte(s), (s.lastUse as Date).getTime()]), [[1, 3_000], [2, 2_000]]);
    assert.deepEqual(Object.keys(listed[0]!._id as Doc), ['id', 'uid']);
  });

  it('touches a session from its lsid bytes as from the decoded lsid', () => {
    const cache = new LogicalSessionCache();
    cache.touchBytes(Buffer.from(BSON.serialize(fromClient(1))), 1_000);
    cache.touch(fromClient(2), 2_000);
    cache.touchBytes(Buffer.from(BSON.serialize(fromClient(2))), 3_000);
    cache.touchBytes(Buffer.from(BSON.serialize({ other: 1, id: lsid(3).id })), 4_000);
    cache.touchBytes(Buffer.from(BSON.serialize({ id: 'not a binary' })), 4_000);
    assert.deepEqual(cache.list().map((s) => [idByte(s), (s.lastUse as Date).getTime()]), [[1, 1_000], [2, 3_000], [3, 4_000]]);
  });

  it('starts sessions of the anonymous user', () => {
    const cache = new LogicalSessionCache();
    const started = cache.startSession(5);
    assert.equal(started.id.sub_type, 4);
    assert.ok(cache.isActive(started));
  });

  it('refreshes the sessions used since the last refresh and those of running operations, then starts afresh', async () => {
    const cache = new LogicalSessionCache();
    const sessions = new FakeSessionsCollection();
    cache.vivify(lsid(1), 0);
    const result = await cache.refresh(sessions, service([], [lsid(2)]));
    assert.deepEqual([...sessions.records.keys()].sort(), [sessionKey(lsid(1)), sessionKey(lsid(2))].sort());
    assert.deepEqual(result, { refreshed: 2, ended: 0, cursorsClosed: 0 });
    assert.equal(cache.size, 0, 'what was written is no longer pending');
  });

  it('closes the cursors of sessions gone from config.system.sessions, unless used again since', async () => {
    const cache = new LogicalSessionCache();
    const sessions = new FakeSessionsCollection();
    await sessions.refreshSessions([lsid(1), lsid(2), lsid(3)]);
    sessions.records.delete(sessionKey(lsid(2)));
    sessions.records.delete(sessionKey(lsid(3)));
    const process = service([lsid(1), lsid(2), lsid(3)]);
    // Session 3 is used while the refresh writes, after the cache was swapped out.
    const write = sessions.refreshSessions.bind(sessions);
    sessions.refreshSessions = (lsids) => {
      cache.vivify(lsid(3), 10);
      return write(lsids);
    };
    const result = await cache.refresh(sessions, process);
    assert.deepEqual(process.killed, [2]);
    assert.equal(result.cursorsClosed, 1);
  });

  it('removes ended sessions from config.system.sessions and closes their cursors', async () => {
    const cache = new LogicalSessionCache();
    const sessions = new FakeSessionsCollection();
    cache.vivify(lsid(1), 0);
    cache.vivify(lsid(2), 0);
    await cache.refresh(sessions, service([]));
    cache.vivify(lsid(1), 5);
    cache.end([lsid(1)]);
    const process = service([lsid(1), lsid(2)], [lsid(1)]);
    const result = await cache.refresh(sessions, process);
    assert.deepEqual([...sessions.records.keys()], [sessionKey(lsid(2))]);
    assert.deepEqual(process.killed, [1]);
    assert.deepEqual(result, { refreshed: 0, ended: 1, cursorsClosed: 1 });
  });

  it('keeps what a failed refresh took for the next one, and closes nothing', async () => {
    const cache = new LogicalSessionCache();
    const sessions = new FakeSessionsCollection();
    sessions.failRefresh = true;
    cache.vivify(lsid(1), 0);
    cache.end([lsid(2)]);
    const process = service([lsid(2)]);
    await assert.rejects(cache.refresh(sessions, process), /unreachable/);
    assert.deepEqual(process.killed, []);
    assert.ok(cache.isActive(lsid(1)));
    sessions.failRefresh = false;
    await cache.refresh(sessions, process);
    assert.deepEqual([...sessions.records.keys()], [sessionKey(lsid(1))]);
    assert.deepEqual(process.killed, [2], 'the ending session was kept for the next refresh');
  });
});
