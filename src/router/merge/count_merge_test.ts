import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, type Doc } from '../../bson/values.js';
import { mergeCountReplies, shardCountCommand } from './count_merge.js';

test('shards count without skip, and up to limit+skip when there is a limit', () => {
  assert.deepEqual(shardCountCommand({ count: 'c', query: { a: 1 }, skip: 3, limit: 5 }), { count: 'c', query: { a: 1 }, limit: 8 });
  assert.deepEqual(shardCountCommand({ count: 'c', skip: 3 }), { count: 'c' });
  assert.deepEqual(shardCountCommand({ count: 'c', limit: -5, skip: 2 }), { count: 'c', limit: 7 });
});

test('the count is the sum of the shard counts, then skipped and limited', () => {
  const replies: Doc[] = [{ n: 4, ok: 1 }, { n: Long.fromNumber(6), ok: 1 }, { n: 0, ok: 1 }];
  assert.deepEqual(mergeCountReplies({ count: 'c' }, replies), { n: 10, ok: 1 });
  assert.deepEqual(mergeCountReplies({ count: 'c', skip: 3 }, replies), { n: 7, ok: 1 });
  assert.deepEqual(mergeCountReplies({ count: 'c', skip: 30 }, replies), { n: 0, ok: 1 });
  assert.deepEqual(mergeCountReplies({ count: 'c', skip: 3, limit: 5 }, replies), { n: 5, ok: 1 });
  assert.deepEqual(mergeCountReplies({ count: 'c', limit: -4 }, replies), { n: 4, ok: 1 });
  assert.deepEqual(mergeCountReplies({ count: 'c' }, []), { n: 0, ok: 1 });
});

test('a count beyond int32 is reported as a long', () => {
  const reply = mergeCountReplies({ count: 'c' }, [{ n: 2147483647 }, { n: 1 }]);
  assert.deepEqual(reply.n, Long.fromNumber(2147483648));
});

test('a shard reply without a count is an internal error', () => {
  assert.throws(() => mergeCountReplies({ count: 'c' }, [{ ok: 1 }]), { code: 1 });
});
