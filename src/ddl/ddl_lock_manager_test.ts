import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock } from '../base/clock.js';
import { FailPoints } from '../base/fail_points.js';
import { MongoError } from '../base/errors.js';
import { DDLLockManager } from './ddl_lock_manager.js';

// Time moves only when the test says so; timers fire in deadline order.
class ManualClock implements Clock {
  private nowMs = 0;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.nowMs;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  setTimer(ms: number, fn: () => void) {
    const timer = { at: this.nowMs + ms, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  setRepeatingTimer(): never {
    throw new Error('the lock manager sets no repeating timer');
  }

  advance(ms: number): void {
    this.nowMs += ms;
    const due = this.timers.filter((t) => t.at <= this.nowMs && !t.cancelled).sort((a, b) => a.at - b.at);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}

// Lets every settled promise run its continuations.
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

// A lock holder the test releases when it wants.
function holder(): { release: () => void; body: () => Promise<void> } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  return { release: () => release(), body: () => released };
}

function manager(failPoints = new FailPoints()): { locks: DDLLockManager; clock: ManualClock } {
  const clock = new ManualClock();
  return { locks: new DDLLockManager(clock, failPoints), clock };
}

describe('DDLLockManager', () => {
  it('runs two operations on one namespace one after the other, in arrival order', async () => {
    const { locks } = manager();
    const order: string[] = [];
    const first = holder();
    const a = locks.withLocks({ db: 'app', collections: ['app.c'] }, 'first', async () => { order.push('first in'); await first.body(); order.push('first out'); });
    const b = locks.withLocks({ db: 'app', collections: ['app.c'] }, 'second', async () => { order.push('second'); });
    const c = locks.withLocks({ db: 'app', collections: ['app.c'] }, 'third', async () => { order.push('third'); });
    await settle();
    assert.deepEqual(order, ['first in']);
    first.release();
    await Promise.all([a, b, c]);
    assert.deepEqual(order, ['first in', 'first out', 'second', 'third']);
  });

  it('lets operations on different databases run at once', async () => {
    const { locks } = manager();
    const first = holder();
    const a = locks.withLocks({ db: 'one' }, 'first', first.body);
    let ran = false;
    await locks.withLocks({ db: 'two' }, 'second', async () => { ran = true; });
    assert.ok(ran);
    first.release();
    await a;
  });

  it('releases every lock when the operation fails, and passes its error on', async () => {
    const { locks } = manager();
    await assert.rejects(locks.withLocks({ db: 'app', collections: ['app.c'] }, 'failing', async () => { throw new Error('boom'); }), /boom/);
    let ran = false;
    await locks.withLocks({ db: 'app', collections: ['app.c'] }, 'next', async () => { ran = true; });
    assert.ok(ran);
  });

  it('answers LockBusy naming the holder\'s reason after five minutes, and the holder keeps the lock', async () => {
    const { locks, clock } = manager();
    const first = holder();
    const a = locks.withLocks({ db: 'app' }, 'shardCollection', first.body);
    const b = locks.withLocks({ db: 'app' }, 'dropDatabase', async () => undefined);
    await settle();
    clock.advance(5 * 60_000 - 1);
    await settle();
    clock.advance(1);
    await assert.rejects(b, (err: unknown) => {
      assert.ok(err instanceof MongoError);
      assert.equal(err.code, 46);
      assert.equal(err.codeName, 'LockBusy');
      assert.equal(err.message, "Failed to acquire DDL lock for namespace 'app' after 300000ms that is currently locked with reason 'shardCollection'");
      return true;
    });
    const c = locks.withLocks({ db: 'app' }, 'later', async () => 'ran');
    first.release();
    await a;
    assert.equal(await c, 'ran', 'the request that timed out left no waiter behind');
  });

  it('a request that times out on a collection releases its database lock', async () => {
    const { locks, clock } = manager();
    const first = holder();
    // Holds only the collection, as a participant that never needs the database would.
    const a = locks.withLocks({ db: 'other', collections: ['app.c'] }, 'holder', first.body);
    const b = locks.withLocks({ db: 'app', collections: ['app.c'] }, 'waiter', async () => undefined);
    await settle();
    clock.advance(5 * 60_000);
    await assert.rejects(b, /currently locked with reason 'holder'/);
    let ran = false;
    await locks.withLocks({ db: 'app' }, 'database only', async () => { ran = true; });
    assert.ok(ran);
    first.release();
    await a;
  });

  it('two operations over the same two databases, named crosswise, take them in name order and run one after the other', async () => {
    const { locks } = manager();
    const order: string[] = [];
    const first = holder();
    const a = locks.withLocks({ db: 'zeta', databases: ['alpha'], collections: ['alpha.t', 'zeta.s'] }, 'zeta to alpha', async () => { order.push('a'); await first.body(); });
    await settle();
    const b = locks.withLocks({ db: 'alpha', databases: ['zeta'], collections: ['alpha.s', 'zeta.t'] }, 'alpha to zeta', async () => { order.push('b'); });
    const single = locks.withLocks({ db: 'zeta' }, 'zeta alone', async () => { order.push('single'); });
    await settle();
    assert.deepEqual(order, ['a'], 'both wait for the first, whose databases are both held');
    first.release();
    await Promise.all([a, b, single]);
    assert.deepEqual(order, ['a', 'single', 'b'], 'each waiter in turn, none deadlocked');
  });

  it('takes its timeout from the overrideDDLLockTimeout fail point', async () => {
    const failPoints = new FailPoints();
    failPoints.configure('overrideDDLLockTimeout', 'alwaysOn', { timeoutMillisecs: 500 });
    const { locks, clock } = manager(failPoints);
    const first = holder();
    const a = locks.withLocks({ db: 'app' }, 'holder', first.body);
    const b = locks.withLocks({ db: 'app' }, 'waiter', async () => undefined);
    await settle();
    clock.advance(500);
    await assert.rejects(b, /after 500ms that is currently locked with reason 'holder'/);
    first.release();
    await a;
  });
});
