import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exploreReplicaSet } from './replica_set_explorer_test_util.js';

test('one seed, explored', () => {
  const r = exploreReplicaSet({ seed: Number(process.env.SEED ?? 1), trace: true });
  console.log(r.violations, r.steps, r.primaries, r.committedWhenHealed, r.committedAtEnd, r.writesAccepted);
  if (r.violations.length > 0) console.log(r.trace.slice(-60).join('\n'));
  assert.deepEqual(r.violations, []);
});
