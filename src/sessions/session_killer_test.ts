import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary } from 'bson';
import { KILL_ALL, SessionKillerMatcher } from './kill_sessions.js';
import { SessionKiller } from './session_killer.js';
import { ANONYMOUS_UID, type LogicalSessionId } from './session_id.js';

const lsid = (byte: number): LogicalSessionId => ({ id: new Binary(Buffer.alloc(16, byte), 4), uid: ANONYMOUS_UID });
const only = (byte: number) => new SessionKillerMatcher([{ ...KILL_ALL, lsid: lsid(byte) }]);
const never = new Promise<never>(() => undefined);

describe('SessionKiller', () => {
  it('knows the sessions of the operations in progress', () => {
    const killer = new SessionKiller({ cursors: () => 0 });
    const a = killer.begin(lsid(1));
    killer.begin(lsid(2));
    a.end();
    assert.deepEqual(killer.activeSessions().map((l) => l.id.buffer[0]), [2]);
  });

  it("interrupts the matching sessions' waits with Interrupted, before it closes their cursors", async () => {
    const order: string[] = [];
    const killer = new SessionKiller({ cursors: (m) => { order.push(`cursors of 1: ${m.match(lsid(1))}`); return 1; } });
    const one = killer.begin(lsid(1));
    const two = killer.begin(lsid(2));
    const waiting = one.interruptible(never).catch((err: { code: number; message: string }) => { order.push(`${err.code} ${err.message}`); });
    let twoDone = false;
    void two.interruptible(never).finally(() => { twoDone = true; });
    await killer.kill(only(1));
    await waiting;
    assert.deepEqual(order, ['cursors of 1: true', '11601 operation was interrupted']);
    assert.equal(twoDone, false, 'another session goes on');
    await assert.rejects(one.interruptible(Promise.resolve(1)), { code: 11601 }, 'a killed operation waits for nothing more');
  });

  it('lets a wait that ends first answer as it would', async () => {
    const killer = new SessionKiller({ cursors: () => 0 });
    const op = killer.begin(lsid(1));
    assert.equal(await op.interruptible(Promise.resolve('done')), 'done');
    await assert.rejects(op.interruptible(Promise.reject(new Error('failed'))), /failed/);
  });

  it('answers HostUnreachable when a shard could not be reached, after killing what it could', async () => {
    let cursorsKilled = false;
    const killer = new SessionKiller({ cursors: () => { cursorsKilled = true; return 0; }, remote: () => Promise.resolve(['host:1']) });
    await assert.rejects(killer.kill(only(1)), { code: 6, message: 'Failed to kill sessions on some hosts' });
    assert.ok(cursorsKilled);
  });
});
