import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { LastOp, withLastOp } from './commit_timestamps.js';
import { withClockedEngine } from './test_support.js';

const pair = (ts: Timestamp | undefined): [number, number] | undefined => (ts === undefined ? undefined : [ts.t, ts.i]);

describe('commit timestamps', () => {
  it('stamp a write unit once, at its first document change, whatever it changes after', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('t.c');
    const stamps = engine.write((unit) => {
      const before = unit.timestamp;
      const rid = unit.insert(coll, { _id: 1, v: 1 });
      unit.insert(coll, { _id: 2 });
      unit.update(coll, rid, { _id: 1, v: 1 }, engine.getRecord(coll, rid)!.length, { _id: 1, v: 2 });
      return [before, unit.timestamp, unit.commitTimestamp()];
    });
    assert.deepEqual(stamps.map(pair), [undefined, [100, 1], [100, 1]]);
    assert.equal(clock.ticks, 1);
  }));

  it('leave a unit that changes no document unstamped, unless a caller asks for its time', withClockedEngine((engine, clock) => {
    engine.createCollection('t.c');
    assert.equal(engine.write((unit) => unit.timestamp), undefined);
    assert.equal(clock.ticks, 0);
    assert.deepEqual(pair(engine.write((unit) => unit.commitTimestamp())), [100, 1]);
  }));

  it("give grouped units times in commit order, and each operation its own unit's time", withClockedEngine(async (engine) => {
    const coll = engine.createCollection('t.c');
    const ops = [new LastOp(), new LastOp(), new LastOp()];
    const writes = ops.map((op, i) => withLastOp(op, () => engine.writeGrouped(() => engine.write((unit) => {
      unit.insert(coll, { _id: i });
      return unit.timestamp;
    }))));
    const stamps = await Promise.all(writes);
    assert.deepEqual(stamps.map(pair), [[100, 1], [100, 2], [100, 3]]);
    assert.deepEqual(ops.map((op) => pair(op.ts)), [[100, 1], [100, 2], [100, 3]], "each operation's last op is its own write");
  }));

  it('make a read after an asynchronous commit wait for it', withClockedEngine(async (engine) => {
    const coll = engine.createCollection('t.c');
    let stamp: Timestamp | undefined;
    let seenAfterWait: Promise<number> | undefined;
    const committed = engine.writeAsync((unit) => {
      unit.insert(coll, { _id: 1 });
      stamp = unit.timestamp!;
      // Once the unit has run and before its commit has landed (that comes in a later turn).
      queueMicrotask(() => {
        seenAfterWait = engine.committedThrough(stamp!)?.then(() => [...engine.scanRecords(coll)].length);
        assert.equal(engine.committedThrough(new Timestamp({ t: 99, i: 0 })), undefined, 'nothing to wait for before the unit');
      });
    });
    await committed;
    assert.ok(seenAfterWait !== undefined, 'a read after the unit had to wait');
    assert.equal(await seenAfterWait, 1, 'and saw the unit once it waited');
    assert.equal(engine.committedThrough(stamp!), undefined);
  }));
});
