import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VersionHistory } from './version_history.js';

const key = (s: string) => Buffer.from(s);
const value = (s: string) => Buffer.from(s);
const limits = { windowMs: 60_000, maxBytes: 1 << 20 };

test('a prepared transaction\'s commit at a time later commits passed takes its place in time', () => {
  const h = new VersionHistory(0n, limits, () => 0);
  h.add(10n, [{ space: 's', key: key('a'), before: value('a0') }]);
  h.add(30n, [{ space: 's', key: key('c'), before: undefined }]);
  // Index built before the out-of-order record arrives, as a reader would have.
  assert.deepEqual(h.valueAt('s', key('b'), 25n, value('b1')), value('b1'));
  h.add(20n, [{ space: 's', key: key('b'), before: value('b0') }]);
  const b = key('b');
  assert.deepEqual(h.valueAt('s', b, 15n, value('b1')), value('b0'), 'before the commit: the old value');
  assert.deepEqual(h.valueAt('s', b, 25n, value('b1')), value('b1'), 'after it: the latest');
  assert.equal(h.changedAfter('s', b, 15n), true);
  assert.equal(h.changedAfter('s', b, 20n), false);
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
  assert.deepEqual(h.valueAt('s', key('b'), 20n, value('b1')), value('b1'));
  assert.equal(h.coveredAfter, 10n);
});

test('each space is indexed on its own: a record out of time order, a retraction and the window reach the spaces already read and those read later', () => {
  let now = 0;
  const h = new VersionHistory(0n, { windowMs: 10, maxBytes: 1 << 20 }, () => now);
  h.add(10n, [{ space: 's', key: key('a'), before: value('a0') }, { space: 't', key: key('a'), before: value('ta0') }]);
  h.add(30n, [{ space: 't', key: key('c'), before: undefined }]);
  assert.deepEqual(h.keysChangedAfter('s', 0n).map(String), ['a'], 'only s is indexed');
  h.add(20n, [{ space: 's', key: key('b'), before: value('b0') }, { space: 't', key: key('b'), before: value('tb0') }]);
  const late = h.add(40n, [{ space: 's', key: key('a'), before: value('a1') }]);
  assert.deepEqual(h.keysChangedAfter('s', 15n).map(String).sort(), ['a', 'b']);
  assert.deepEqual(h.keysChangedAfter('t', 15n).map(String).sort(), ['b', 'c'], 't built from the log, out-of-order record in place');
  assert.deepEqual(h.valueAt('t', key('a'), 5n, value('ta1')), value('ta0'));
  assert.deepEqual(h.valueAt('s', key('a'), 35n, value('a2')), value('a1'));
  h.retract(late);
  assert.deepEqual(h.valueAt('s', key('a'), 35n, value('a2')), value('a2'), 'the retracted commit is gone from the index');
  now = 100;
  h.add(50n, [{ space: 'u', key: key('x'), before: undefined }]);
  assert.deepEqual(h.keysChangedAfter('s', 0n).map(String), [], 'records out of the window leave the index');
  assert.equal(h.changedAfter('t', key('c'), 0n), false);
});

test('records leaving the window cost no copy of a long index: 100,000 changes of one space and of one key expire in well under a second', () => {
  let now = 0;
  const h = new VersionHistory(0n, { windowMs: 10, maxBytes: 1 << 30 }, () => now);
  for (let i = 1; i <= 100_000; i++) h.add(BigInt(i), [{ space: 's', key: Buffer.from(String(i)), before: undefined }, { space: 't', key: key('hot'), before: value(String(i - 1)) }]);
  assert.equal(h.keysChangedAfter('s', 0n).length, 100_000);
  assert.deepEqual(h.valueAt('t', key('hot'), 50_000n, value('now')), value('50000'));
  now = 100;
  const began = performance.now();
  h.add(100_001n, [{ space: 'u', key: key('x'), before: undefined }]);
  const took = performance.now() - began;
  assert.ok(took < 1000, `expiring took ${Math.round(took)} ms`);
  assert.deepEqual(h.keysChangedAfter('s', 0n), []);
  assert.equal(h.changedAfter('t', key('hot'), 0n), false);
  assert.deepEqual(h.valueAt('t', key('hot'), 100_000n, value('now')), value('now'));
});
