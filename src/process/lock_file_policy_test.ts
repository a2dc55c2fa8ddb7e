import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatLockHolder, judgeLockFile, parseLockHolder, type LockHolder } from './lock_file_policy.js';

const alive = (pids: number[]) => (holder: LockHolder): boolean => pids.includes(holder.pid);

describe('a lock file', () => {
  it('reads back the holder it was written with, the pid alone on the first line', () => {
    assert.equal(formatLockHolder({ pid: 4242 }), '4242\n');
    assert.equal(formatLockHolder({ pid: 4242, startTicks: '987654' }), '4242\n987654\n');
    for (const holder of [{ pid: 4242 }, { pid: 4242, startTicks: '987654' }]) {
      assert.deepEqual(parseLockHolder(formatLockHolder(holder)), holder);
    }
  });

  it('is not a lock when it names no single process', () => {
    for (const text of ['0\n', '-1\n', 'abc\n', '12 13\n', '12\nx\n', '12\n34\n56\n', '1'.repeat(11)]) {
      assert.equal(parseLockHolder(text), undefined, JSON.stringify(text));
    }
  });

  it('is free when empty, held while its holder lives, and stale once it is dead or unreadable', () => {
    assert.deepEqual(judgeLockFile('', alive([])), { kind: 'free' });
    assert.deepEqual(judgeLockFile(' \n', alive([])), { kind: 'free' });
    assert.deepEqual(judgeLockFile('77\n5\n', alive([77])), { kind: 'held', holder: { pid: 77, startTicks: '5' } });
    assert.deepEqual(judgeLockFile('77\n5\n', alive([78])), { kind: 'stale', holder: { pid: 77, startTicks: '5' } });
    assert.deepEqual(judgeLockFile('not a pid\n', alive([77])), { kind: 'stale' });
  });

  it('asks the liveness probe about the holder as written, start time included', () => {
    const asked: LockHolder[] = [];
    judgeLockFile('77\n5\n', (holder) => { asked.push(holder); return true; });
    assert.deepEqual(asked, [{ pid: 77, startTicks: '5' }]);
  });
});
