import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { decideFromVotes, nextCoordinatorStep, type CoordinatorDocument, type CoordinatorProgress } from './transaction_coordinator.js';

const ts = (t: number, i = 1) => new Timestamp({ t, i });
const doc: CoordinatorDocument = { lsid: { id: 'x' }, txnNumber: 3, participants: ['shard0', 'shard1'] };
const fresh = (over: Partial<CoordinatorProgress> = {}): CoordinatorProgress => ({ persisted: undefined, votes: undefined, delivered: false, recovered: false, deleted: false, ...over });

test('commits at the latest prepareTimestamp when every participant prepared', () => {
  assert.deepEqual(decideFromVotes([{ shardId: 'shard0', prepareTimestamp: ts(5, 2) }, { shardId: 'shard1', prepareTimestamp: ts(7) }, { shardId: 'shard2', prepareTimestamp: ts(5, 9) }]), { decision: 'commit', commitTimestamp: ts(7) });
});

test('aborts with NoSuchTransaction naming the first participant that refused', () => {
  const d = decideFromVotes([{ shardId: 'shard0', prepareTimestamp: ts(5) }, { shardId: 'shard1', code: 112, errmsg: 'Write conflict' }]);
  assert.equal(d.decision, 'abort');
  assert.ok(d.decision === 'abort' && d.abortStatus.code === 251 && /shard1.*112.*Write conflict/.test(d.abortStatus.errmsg));
});

test('a live coordinator persists its participants, collects votes, persists the decision, delivers it, then deletes its document', () => {
  const p = fresh();
  assert.equal(nextCoordinatorStep(p).type, 'writeParticipantList');
  p.persisted = doc;
  assert.equal(nextCoordinatorStep(p).type, 'sendPrepare');
  p.votes = [{ shardId: 'shard0', prepareTimestamp: ts(4) }, { shardId: 'shard1', prepareTimestamp: ts(6) }];
  assert.deepEqual(nextCoordinatorStep(p), { type: 'writeDecision', decision: { decision: 'commit', commitTimestamp: ts(6) } });
  p.persisted = { ...doc, decision: { decision: 'commit', commitTimestamp: ts(6) } };
  assert.equal(nextCoordinatorStep(p).type, 'sendDecision');
  p.delivered = true;
  assert.equal(nextCoordinatorStep(p).type, 'deleteCoordinatorDoc');
  p.deleted = true;
  assert.deepEqual(nextCoordinatorStep(p), { type: 'done', decision: { decision: 'commit', commitTimestamp: ts(6) } });
});

test('a recovered coordinator without a decision aborts, and one with a decision delivers it again', () => {
  const undecided = nextCoordinatorStep(fresh({ persisted: doc, recovered: true }));
  assert.equal(undecided.type, 'writeDecision');
  assert.equal(undecided.type === 'writeDecision' && undecided.decision.decision, 'abort');
  const decided = { ...doc, decision: { decision: 'commit' as const, commitTimestamp: ts(9) } };
  assert.deepEqual(nextCoordinatorStep(fresh({ persisted: decided, recovered: true })), { type: 'sendDecision', decision: decided.decision });
});
