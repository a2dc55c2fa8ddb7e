import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes } from '../base/error_codes.js';
import { SnapshotView } from './snapshot_view.js';
import { VersionHistory } from './version_history.js';
import type { KvLatest } from './lmdb/kv_store.js';

const b = (s: string): Buffer => Buffer.from(s);

// One space's latest values, as LMDB would hold them after the commits below.
function space(latest: Record<string, string>): KvLatest {
  const entries = Object.entries(latest).map(([k, v]) => ({ key: b(k), value: b(v) })).sort((x, y) => Buffer.compare(x.key, y.key));
  return { name: 's', latestGet: (key) => entries.find((e) => e.key.equals(key))?.value, latestRange: () => entries };
}

test('a view whose history went over the byte budget answers SnapshotTooOld, not the latest values', () => {
  const h = new VersionHistory(0n, { windowMs: 60_000, maxBytes: 300 }, () => 0);
  h.add(10n, [{ space: 's', key: b('a'), before: undefined }]);
  const view = new SnapshotView(h, 10n, h.pin(10n));
  h.add(20n, [{ space: 's', key: b('a'), before: b('a0') }]);
  const s = space({ a: 'a1' });
  assert.deepEqual(view.get(s, b('a')), b('a0'), 'within the budget: the value at 10');
  assert.deepEqual([...view.range(s, b(''), b(''), {})].map((e) => String(e.value)), ['a0']);
  // Past the budget the oldest records go whatever pins them, the one after 10 among them.
  h.add(30n, [{ space: 's', key: b('b'), before: b('x'.repeat(400)) }]);
  assert.ok(h.coveredAfter > 10n);
  assert.throws(() => view.get(s, b('a')), { code: ErrorCodes.SnapshotTooOld });
  assert.throws(() => [...view.range(s, b(''), b(''), {})], { code: ErrorCodes.SnapshotTooOld });
  view.release();
});
