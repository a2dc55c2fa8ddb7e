import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StorageEngine } from '../storage/storage_engine.js';
import { isLater, LogicalClock } from './logical_clock.js';

// A wall clock the test moves: seconds since the epoch.
function wall(seconds: number): { now: () => number; set: (s: number) => void } {
  let ms = seconds * 1000;
  return { now: () => ms, set: (s) => (ms = s * 1000) };
}

const ts = (t: number, i: number): Timestamp => new Timestamp({ t, i });
const pair = (x: Timestamp): [number, number] => [x.t, x.i];

describe('LogicalClock', () => {
  it('ticks strictly later times, counting within a second of the wall clock and starting over in the next', () => {
    const w = wall(1000);
    const clock = new LogicalClock(w.now);
    assert.deepEqual([clock.tick(), clock.tick(), clock.tick()].map(pair), [[1000, 1], [1000, 2], [1000, 3]]);
    w.set(1001);
    assert.deepEqual(pair(clock.tick()), [1001, 1]);
  });

  it('answers as its time the latest issued or seen, or the wall clock second once that is later', () => {
    const w = wall(1000);
    const clock = new LogicalClock(w.now);
    assert.deepEqual(pair(clock.now()), [1000, 0]);
    clock.tick();
    assert.deepEqual(pair(clock.now()), [1000, 1]);
    w.set(1005);
    assert.deepEqual(pair(clock.now()), [1005, 0], 'a clock that issued nothing for a while still answers a current time');
    assert.deepEqual(pair(clock.tick()), [1005, 1], 'every tick is later than any time it answered');
  });

  it('never goes back, whatever the wall clock does', () => {
    const w = wall(1000);
    const clock = new LogicalClock(w.now);
    clock.tick();
    clock.tick();
    w.set(990);
    assert.deepEqual(pair(clock.now()), [1000, 2]);
    assert.deepEqual(pair(clock.tick()), [1000, 3]);
  });

  it('advances past a gossiped time, and ticks after it', () => {
    const w = wall(1000);
    const clock = new LogicalClock(w.now);
    clock.advance(ts(1500, 9));
    assert.deepEqual(pair(clock.now()), [1500, 9]);
    assert.deepEqual(pair(clock.tick()), [1500, 10]);
    clock.advance(ts(1200, 50));
    assert.deepEqual(pair(clock.now()), [1500, 10], 'an earlier time changes nothing');
  });

  it('refuses a time further ahead of its wall clock than maxAcceptableLogicalClockDriftSecs, as MongoDB does', () => {
    const w = wall(1000);
    const clock = new LogicalClock(w.now, 100);
    clock.advance(ts(1100, 5));
    assert.deepEqual(pair(clock.now()), [1100, 5], 'exactly the drift is accepted');
    assert.throws(() => clock.advance(ts(1101, 0)), (err: unknown) => {
      assert.ok(err instanceof MongoError);
      assert.equal(err.code, ErrorCodes.ClusterTimeFailsRateLimiter);
      assert.equal(err.codeName, 'ClusterTimeFailsRateLimiter');
      assert.equal(err.message, "New $clusterTime, 1101, is too far from this node's wall clock time, 1000.");
      return true;
    });
    assert.deepEqual(pair(clock.now()), [1100, 5], 'a refused time leaves the clock');
    w.set(1050);
    clock.advance(ts(1150, 0));
    assert.deepEqual(pair(clock.now()), [1150, 0], 'the limit moves with the wall clock');
  });

  it('allows a year of drift by default', () => {
    const clock = new LogicalClock(wall(1000).now);
    const year = 365 * 24 * 3600;
    clock.advance(ts(1000 + year, 1));
    assert.throws(() => clock.advance(ts(1000 + year + 1, 1)), MongoError);
  });

  it('orders times as Timestamps order: by seconds, then by counter', () => {
    assert.equal(isLater(2, 0, 1, 9), true);
    assert.equal(isLater(1, 2, 1, 1), true);
    assert.equal(isLater(1, 1, 1, 1), false);
    assert.equal(isLater(1, 9, 2, 0), false);
  });
});

describe('LogicalClock across a restart of its node', () => {
  it('starts past every commit the store kept, even within the same second of the wall clock', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-clock-'));
    const w = wall(1000);
    try {
      const clock = new LogicalClock(w.now);
      const first = StorageEngine.open(dir, { compilePartialFilter: () => () => true, clock });
      const coll = first.createCollection('t.c');
      const stamps: Timestamp[] = [];
      for (let i = 0; i < 3; i++) first.write((unit) => { unit.insert(coll, { _id: i }); stamps.push(unit.timestamp!); });
      assert.deepEqual(stamps.map(pair), [[1000, 1], [1000, 2], [1000, 3]]);
      await first.close();

      const restarted = new LogicalClock(w.now);
      const second = StorageEngine.open(dir, { compilePartialFilter: () => () => true, clock: restarted });
      try {
        assert.ok(isLater(restarted.now().t, restarted.now().i, 1000, 3), `the clock starts after (1000, 3), at ${String(pair(restarted.now()))}`);
        let stamp: Timestamp | undefined;
        second.write((unit) => { unit.insert(second.getCollection('t.c')!, { _id: 3 }); stamp = unit.timestamp; });
        assert.ok(isLater(stamp!.t, stamp!.i, 1000, 3), 'a commit after the restart is later than those before it');
        assert.throws(() => second.snapshotAt(ts(1000, 2)), (e: unknown) => e instanceof MongoError && e.code === ErrorCodes.SnapshotTooOld);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
