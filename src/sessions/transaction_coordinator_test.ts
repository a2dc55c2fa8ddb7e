import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { decideFromVotes, decisionAcknowledged } from './transaction_coordinator.js';

const ts = (t: number, i = 1) => new Timestamp({ t, i });

test('commits at the latest prepareTimestamp when every participant prepared', () => {
  assert.deepEqual(decideFromVotes([{ shardId: 'shard0', prepareTimestamp: ts(5, 2) }, { shardId: 'shard1', prepareTimestamp: ts(7) }, { shardId: 'shard2', prepareTimestamp: ts(5, 9) }]), { decision: 'commit', commitTimestamp: ts(7) });
});

test('aborts with NoSuchTransaction naming the first participant that refused', () => {
  const d = decideFromVotes([{ shardId: 'shard0', prepareTimestamp: ts(5) }, { shardId: 'shard1', code: 112, errmsg: 'Write conflict' }]);
  assert.equal(d.decision, 'abort');
  assert.ok(d.decision === 'abort' && d.abortStatus.code === 251 && /shard1.*112.*Write conflict/.test(d.abortStatus.errmsg));
});

test("takes a participant's NoSuchTransaction or TransactionTooOld as having the decision, as MongoDB's coordinator does", () => {
  // A participant that committed, lost its answer, and has since begun a newer transaction.
  assert.equal(decisionAcknowledged({ ok: 0, code: 225, codeName: 'TransactionTooOld', errmsg: 'a newer transaction 581 has already started' }), true);
  assert.equal(decisionAcknowledged({ ok: 0, code: 251, codeName: 'NoSuchTransaction', errmsg: 'no such transaction' }), true);
  assert.equal(decisionAcknowledged({ ok: 1 }), true);
  assert.equal(decisionAcknowledged({ ok: 0, code: 91, codeName: 'ShutdownInProgress', errmsg: 'shutting down' }), false);
});
