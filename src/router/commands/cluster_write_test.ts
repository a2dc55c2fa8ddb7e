import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oneShardWriteReply } from './cluster_write.js';

// A shard that stored a write but lost its write concern wait (a step-down) answers ok with a
// writeConcernError: the router passes it on, labels and all, so the client does not take the write
// for acknowledged (the sharded failover test lost such inserts when the router dropped it).
test('a shard\'s write concern error and its labels reach the client', () => {
  const writeConcernError = { code: 189, codeName: 'PrimarySteppedDown', errmsg: 'Primary stepped down while waiting for replication' };
  const reply = oneShardWriteReply('insert', 1, true, { ok: 1, n: 1, writeConcernError, errorLabels: ['RetryableWriteError'] });
  assert.deepEqual(reply, { n: 1, writeConcernError, errorLabels: ['RetryableWriteError'], ok: 1 });
});

test('a reply without one has none', () => {
  assert.deepEqual(oneShardWriteReply('update', 1, true, { ok: 1, n: 1, nModified: 1 }), { n: 1, nModified: 1, ok: 1 });
});
