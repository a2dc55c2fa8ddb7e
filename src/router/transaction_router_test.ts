import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { commitPlan, RouterTransaction } from './transaction_router.js';

function transaction(...requests: [string, string][]): RouterTransaction {
  const txn = new RouterTransaction({ id: 1 }, 1, 1, { level: 'snapshot' }, () => new Timestamp({ t: 1, i: 1 }));
  for (const [shard, command] of requests) txn.fieldsFor(shard, { [command]: 'c' });
  return txn;
}

test('no participant: nothing to send', () => {
  assert.deepEqual(commitPlan(transaction()), { type: 'noShards' });
});

test('one writer: the read-only participants first, then the writer', () => {
  assert.deepEqual(commitPlan(transaction(['shard0', 'find'], ['shard1', 'insert'], ['shard2', 'find'])), { type: 'direct', readOnly: ['shard0', 'shard2'], writer: 'shard1' });
  assert.deepEqual(commitPlan(transaction(['shard0', 'find'], ['shard1', 'find'])), { type: 'direct', readOnly: ['shard0', 'shard1'], writer: undefined });
});

test('two writers: a two-phase commit coordinated by the first participant, read-only ones included', () => {
  const txn = transaction(['shard2', 'find'], ['shard0', 'update'], ['shard1', 'find'], ['shard1', 'delete']);
  assert.deepEqual(commitPlan(txn), { type: 'twoPhase', coordinator: 'shard2', participants: ['shard2', 'shard0', 'shard1'] });
  assert.equal(txn.recoveryShard(), 'shard0', 'the recovery token names the first writer, prepared until the decision');
});
