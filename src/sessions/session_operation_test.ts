import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, UUID } from 'bson';
import type { Doc } from '../bson/values.js';
import { MONGOD_CURSOR_SESSION_CODES } from './cursor_session.js';
import { KILL_ALL, SessionKillerMatcher } from './kill_sessions.js';
import { SessionKiller } from './session_killer.js';
import { runInSession, type SessionCursors } from './session_operation.js';
import { sameSession, sessionIdOf, type LogicalSessionId } from './session_id.js';

// Cursors by id, each with the session it was given.
class Cursors implements SessionCursors {
  readonly open = new Map<string, LogicalSessionId | null>();
  sessionOf(id: Long): LogicalSessionId | null | undefined {
    return this.open.get(id.toString());
  }
  attachSession(id: Long, lsid: LogicalSessionId): void {
    if (this.open.has(id.toString())) this.open.set(id.toString(), lsid);
  }
}

const cursorReply = (id: number): Doc => ({ cursor: { firstBatch: [], id: Long.fromNumber(id), ns: 'db.c' }, ok: 1 });

describe('running a command under its session', () => {
  const killer = new SessionKiller({ cursors: () => 0 });
  const run = (cursors: Cursors, name: string, cmd: Doc, reply: (interruptible: <T>(w: Promise<T>) => Promise<T>) => Doc | Promise<Doc>) =>
    runInSession(killer, cursors, MONGOD_CURSOR_SESSION_CODES, name, cmd, reply);

  it('gives a cursor the session of the command that opened it, and none to a cursor opened without one', () => {
    const cursors = new Cursors();
    cursors.open.set('7', null).set('8', null);
    const lsid = { id: new UUID() };
    run(cursors, 'find', { find: 'c', lsid }, () => cursorReply(7));
    run(cursors, 'find', { find: 'c' }, () => cursorReply(8));
    assert.ok(sameSession(cursors.open.get('7')!, sessionIdOf(lsid)));
    assert.equal(cursors.open.get('8'), null);
  });

  it("refuses a getMore outside its cursor's session before it runs", () => {
    const cursors = new Cursors();
    const lsid = { id: new UUID() };
    cursors.open.set('7', sessionIdOf(lsid));
    let ran = 0;
    const getMore = (cmd: Doc) => run(cursors, 'getMore', { getMore: Long.fromNumber(7), collection: 'c', ...cmd }, () => { ran += 1; return { ok: 1 }; });
    assert.throws(() => getMore({}), { code: 50737 });
    assert.throws(() => getMore({ lsid: { id: new UUID() } }), { code: 50738 });
    getMore({ lsid });
    assert.equal(ran, 1);
    run(cursors, 'getMore', { getMore: Long.fromNumber(99), collection: 'c' }, () => { ran += 1; return { ok: 1 }; });
    assert.equal(ran, 2, 'an unknown cursor is the getMore\'s to refuse');
  });

  it('registers the command while it runs, and interrupts its waits and a waiting getMore when the session is killed', async () => {
    const cursors = new Cursors();
    const lsid = { id: new UUID() };
    cursors.open.set('7', sessionIdOf(lsid));
    const admission = run(cursors, 'insert', { insert: 'c', lsid }, (interruptible) => interruptible(new Promise<void>(() => undefined)).then(() => ({ ok: 1 })));
    const getMore = run(cursors, 'getMore', { getMore: Long.fromNumber(7), collection: 'c', lsid }, () => new Promise<Doc>(() => undefined));
    assert.equal(killer.activeSessions().length, 2);
    await killer.kill(new SessionKillerMatcher([KILL_ALL]));
    await assert.rejects(Promise.resolve(admission), { code: 11601 });
    await assert.rejects(Promise.resolve(getMore), { code: 11601 });
    assert.equal(killer.activeSessions().length, 0, 'both ended');
  });

  it('leaves the lsid of the kill commands aside, so that they never interrupt themselves', () => {
    run(new Cursors(), 'killSessions', { killSessions: [], lsid: { id: new UUID() } }, () => {
      assert.equal(killer.activeSessions().length, 0);
      return { ok: 1 };
    });
  });

  it('refuses an lsid that is not {id: UUID}', () => {
    assert.throws(() => run(new Cursors(), 'find', { find: 'c', lsid: { id: 'x' } }, () => ({ ok: 1 })), { code: 14 });
  });
});
