import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { afterClusterTimeOf, checkAfterClusterTime, checkAfterClusterTimeAllowed, snapshotReadOf } from './read_concern_args.js';

const time = new Timestamp({ t: 1_700_000_000, i: 5 });

function refusal(fn: () => unknown): [number, string] | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof MongoError);
    return [err.code, err.message];
  }
  return undefined;
}

describe("readConcern's afterClusterTime", () => {
  it('is read from a readConcern of any accepted level but available and linearizable', () => {
    assert.equal(afterClusterTimeOf(undefined), undefined);
    assert.equal(afterClusterTimeOf({ level: 'majority' }), undefined);
    assert.equal(afterClusterTimeOf('local'), undefined, 'what is accepted today stays so');
    for (const level of [undefined, 'local', 'majority', 'snapshot']) assert.deepEqual(afterClusterTimeOf({ level, afterClusterTime: time }), time);
    for (const level of ['available', 'linearizable']) {
      assert.deepEqual(refusal(() => afterClusterTimeOf({ level, afterClusterTime: time })), [72, 'afterClusterTime field can be set only if level is equal to majority, local, or snapshot']);
    }
  });

  it('is refused as MongoDB parses it', () => {
    assert.deepEqual(refusal(() => afterClusterTimeOf({ afterClusterTime: 5 })), [14, '"afterClusterTime" had the wrong type. Expected timestamp, found int']);
    assert.deepEqual(refusal(() => afterClusterTimeOf({ afterClusterTime: new Timestamp({ t: 0, i: 0 }) })), [72, 'afterClusterTime cannot be a null timestamp']);
    assert.equal(refusal(() => afterClusterTimeOf({ afterClusterTime: time, afterOpTime: { ts: time, t: 1 } }))?.[0], 72);
    assert.equal(refusal(() => afterClusterTimeOf({ level: 'snapshot', afterClusterTime: time, atClusterTime: time }))?.[0], 72);
  });

  it('must not be later than the clock, with MongoDB\'s message', () => {
    checkAfterClusterTime(time, time);
    checkAfterClusterTime(time, new Timestamp({ t: 1_700_000_000, i: 6 }));
    assert.deepEqual(refusal(() => checkAfterClusterTime(new Timestamp({ t: 1_700_000_000, i: 6 }), time)), [
      72,
      'readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: { ts: Timestamp(1700000000, 6) }; current clusterTime: { ts: Timestamp(1700000000, 5) }',
    ]);
  });

  it("is not allowed on getMore, which reads with its cursor's read concern", () => {
    assert.deepEqual(refusal(() => checkAfterClusterTimeAllowed('getMore')), [72, 'afterClusterTime is not allowed for this command']);
    for (const name of ['find', 'aggregate', 'count', 'distinct']) checkAfterClusterTimeAllowed(name);
  });
});

describe('readConcern snapshot outside a transaction', () => {
  const now = new Timestamp({ t: 1_700_000_000, i: 9 });
  it('reads at the atClusterTime given, or at the clock now; other levels are not snapshot reads', () => {
    assert.deepEqual(snapshotReadOf('find', { level: 'snapshot' }, now), { atClusterTime: now });
    assert.deepEqual(snapshotReadOf('aggregate', { level: 'snapshot', atClusterTime: time }, now), { atClusterTime: time });
    assert.deepEqual(snapshotReadOf('distinct', { level: 'snapshot', atClusterTime: time }, now), { atClusterTime: time });
    for (const rc of [undefined, {}, { level: 'local' }, { level: 'majority' }, { level: 'available' }, { level: 'linearizable' }]) assert.equal(snapshotReadOf('find', rc, now), undefined);
  });
  it('refuses what MongoDB refuses', () => {
    assert.deepEqual(refusal(() => snapshotReadOf('insert', { level: 'snapshot' }, now)), [72, 'Command insert does not support { readConcern: { level: "snapshot" } }']);
    assert.deepEqual(refusal(() => snapshotReadOf('find', { level: 'local', atClusterTime: time }, now)), [72, 'atClusterTime field can be set only if level is snapshot']);
    assert.deepEqual(refusal(() => snapshotReadOf('find', { level: 'snapshot', atClusterTime: 5 }, now)), [14, '"atClusterTime" had the wrong type. Expected timestamp, found int']);
    assert.deepEqual(refusal(() => snapshotReadOf('find', { level: 'snapshot', atClusterTime: new Timestamp({ t: 0, i: 0 }) }, now)), [72, 'atClusterTime cannot be a null timestamp']);
    const later = new Timestamp({ t: 1_700_000_001, i: 0 });
    assert.equal(refusal(() => snapshotReadOf('find', { level: 'snapshot', atClusterTime: later }, now))?.[0], 72);
  });
});
