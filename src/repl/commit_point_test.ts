import { test } from 'node:test';
import assert from 'node:assert/strict';
import { learnedCommitPoint, majorityCommitPoint } from './commit_point.js';
import { NULL_OP_TIME } from './op_time.js';
import { configOf, entry, memberConfig, THREE } from './topology_test_util.js';

test('the primary commits the newest optime a majority holds durably', () => {
  const durable = [{ ts: 30, t: 2 }, { ts: 20, t: 2 }, { ts: 10, t: 2 }];
  assert.deepEqual(majorityCommitPoint(THREE, durable, { ts: 5, t: 2 }), { ts: 20, t: 2 });
});

test('entries of an older term held by a majority are not committed until the primary\'s own term is', () => {
  const durable = [{ ts: 30, t: 2 }, { ts: 20, t: 1 }, { ts: 20, t: 1 }];
  assert.equal(majorityCommitPoint(THREE, durable, { ts: 30, t: 2 }), null);
  assert.equal(majorityCommitPoint(THREE, durable, null), null);
  assert.deepEqual(majorityCommitPoint(THREE, [{ ts: 30, t: 2 }, { ts: 30, t: 2 }, { ts: 20, t: 1 }], { ts: 30, t: 2 }), { ts: 30, t: 2 });
});

test('arbiters and non-voters do not count toward the majority', () => {
  const withArbiter = configOf([memberConfig(0), memberConfig(1), memberConfig(2, { arbiterOnly: true })]);
  assert.equal(majorityCommitPoint(withArbiter, [{ ts: 30, t: 2 }, NULL_OP_TIME, { ts: 30, t: 2 }], { ts: 30, t: 2 }), null);
  const withNonVoter = configOf([memberConfig(0), memberConfig(1), memberConfig(2), memberConfig(3, { votes: 0, priority: 0 })]);
  assert.equal(majorityCommitPoint(withNonVoter, [{ ts: 30, t: 2 }, NULL_OP_TIME, NULL_OP_TIME, { ts: 30, t: 2 }], { ts: 30, t: 2 }), null);
});

test('a secondary takes a learned commit point only where it holds that very entry', () => {
  const oplog = [entry(1, 0), entry(10, 1), entry(20, 1)];
  assert.deepEqual(learnedCommitPoint(NULL_OP_TIME, { ts: 10, t: 1 }, oplog), { ts: 10, t: 1 });
  assert.deepEqual(learnedCommitPoint(NULL_OP_TIME, { ts: 15, t: 1 }, oplog), NULL_OP_TIME, 'an optime within its range that it does not hold');
  assert.deepEqual(learnedCommitPoint(NULL_OP_TIME, { ts: 5, t: 1 }, oplog), NULL_OP_TIME, 'nor one before its entries of that term');
  assert.deepEqual(learnedCommitPoint({ ts: 20, t: 1 }, { ts: 10, t: 1 }, oplog), { ts: 20, t: 1 }, 'never backwards');
});

test('past its last entry, a secondary goes only to that entry, and only when it is of the commit point\'s term', () => {
  const oplog = [entry(1, 0), entry(10, 1), entry(20, 1)];
  assert.deepEqual(learnedCommitPoint(NULL_OP_TIME, { ts: 50, t: 1 }, oplog), { ts: 20, t: 1 });
  assert.deepEqual(learnedCommitPoint(NULL_OP_TIME, { ts: 50, t: 2 }, oplog), NULL_OP_TIME);
});
