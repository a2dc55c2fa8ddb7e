import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { promiseTime, type CommitOutlook } from './commit_horizon.js';

const ts = (t: number, i: number): Timestamp => new Timestamp({ t, i });

const idlePrimary: CommitOutlook = {
  committed: ts(100, 3), uncommitted: undefined, speaksForSet: true, clock: ts(105, 7), oldestUncommitted: undefined, oldestPrepared: undefined,
};

test('an idle primary that answers for its set promises the tick after its clock, with no write', () => {
  assert.ok(promiseTime(idlePrimary).equals(ts(105, 8)));
});

test('a transaction prepared and not decided holds the promise below its prepareTimestamp, where its commit may still land', () => {
  assert.ok(promiseTime({ ...idlePrimary, oldestPrepared: ts(102, 5) }).equals(ts(102, 5)), 'nothing before the prepare time is still to come');
  assert.ok(promiseTime({ ...idlePrimary, oldestPrepared: ts(103, 0) }).equals(ts(103, 0)));
  // Prepared before the last committed entry: the commit point stands, never going back.
  assert.ok(promiseTime({ ...idlePrimary, oldestPrepared: ts(99, 1) }).equals(ts(100, 3)));
});

test('a commit that took its time and has not landed holds the promise at it', () => {
  assert.ok(promiseTime({ ...idlePrimary, oldestUncommitted: ts(104, 2) }).equals(ts(104, 2)));
  assert.ok(promiseTime({ ...idlePrimary, oldestUncommitted: ts(104, 2), oldestPrepared: ts(103, 9) }).equals(ts(103, 9)), 'the earlier of the two');
});

test('only majority-committed history is promised: an entry past the commit point, a secondary, a set with other voters', () => {
  assert.ok(promiseTime({ ...idlePrimary, uncommitted: ts(101, 1) }).equals(ts(100, 3)));
  assert.ok(promiseTime({ ...idlePrimary, speaksForSet: false }).equals(ts(100, 3)));
});
