import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeId, VersionHistory } from './version_history.js';

const key = (s: string) => Buffer.from(s);
const value = (s: string) => Buffer.from(s);
const limits = { windowMs: 60_000, maxBytes: 1 << 20 };

test('a prepared transaction\'s commit at a time later commits passed takes its place in time', () => {
  const h = new VersionHistory(0n, limits, () => 0);
  h.add(10n, [{ space: 's', key: key('a'), before: value('a0') }]);
  h.add(30n, [{ space: 's', key: key('c'), before: undefined }]);
  // Index built before the out-of-order record arrives, as a reader would have.
  assert.deepEqual(h.valueAt(changeId('s', key('b')), 25n, value('b1')), value('b1'));
  h.add(20n, [{ space: 's', key: key('b'), before: value('b0') }]);
  const b = changeId('s', key('b'));
  assert.deepEqual(h.valueAt(b, 15n, value('b1')), value('b0'), 'before the commit: the old value');
  assert.deepEqual(h.valueAt(b, 25n, value('b1')), value('b1'), 'after it: the latest');
  assert.equal(h.changedAfter(b, 15n), true);
  assert.equal(h.changedAfter(b, 20n), false);
  assert.deepEqual(h.keysChangedAfter('s', 15n).map(String).sort(), ['b', 'c']);
  assert.deepEqual(h.keysChangedAfter('s', 25n).map(String), ['c']);
});

test('a commit older than the kept history needs no record', () => {
  let now = 0;
  const h = new VersionHistory(0n, { windowMs: 10, maxBytes: 1 << 20 }, () => now);
  h.add(10n, [{ space: 's', key: key('a'), before: value('a0') }]);
  now = 100;
  h.add(50n, [{ space: 's', key: key('x'), before: undefined }]);
  assert.equal(h.coveredAfter, 10n);
  h.add(5n, [{ space: 's', key: key('b'), before: value('b0') }]);
  assert.deepEqual(h.valueAt(changeId('s', key('b')), 20n, value('b1')), value('b1'));
  assert.equal(h.coveredAfter, 10n);
});
