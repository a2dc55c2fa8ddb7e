import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exploreReplicaSet, type ExplorerResult } from './replica_set_explorer_test_util.js';

// A fixed budget of seeds; REPL_EXPLORER_SEEDS=from:count explores others, REPL_EXPLORER_SEED=n
// replays one with its trace.
function seeds(): number[] {
  const one = process.env.REPL_EXPLORER_SEED;
  if (one !== undefined) return [Number(one)];
  const [from, count] = (process.env.REPL_EXPLORER_SEEDS ?? '1:40').split(':').map(Number);
  return Array.from({ length: count! }, (_, i) => from! + i);
}

function explain(r: ExplorerResult): string {
  return `seed ${r.seed} (replay: REPL_EXPLORER_SEED=${r.seed}):\n${r.violations.join('\n')}\nlast steps:\n${r.trace.slice(-80).join('\n')}`;
}

test('under loss, duplication, delay, reordering, partitions, clock jumps and crashes, no seed breaks a safety invariant, and every healed set commits writes again', () => {
  const results = seeds().map((seed) => exploreReplicaSet({ seed }));
  for (const r of results) {
    if (r.violations.length > 0) assert.fail(explain(exploreReplicaSet({ seed: r.seed, trace: true })));
    assert.ok(r.committedAtEnd > r.committedWhenHealed, `seed ${r.seed}: the healed set committed nothing more (${r.committedWhenHealed} then ${r.committedAtEnd})`);
  }
  if (results.length === 1) return;
  // The faults must exercise the protocol, or the checks above hold for nothing.
  const sum = (f: (r: ExplorerResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  assert.ok(sum((r) => r.primaries) > results.length * 2, 'few elections were won');
  assert.ok(sum((r) => r.rollbacks) > 0, 'no member ever rolled back');
  assert.ok(sum((r) => r.resyncs) > 0, 'no member ever found its sources too stale and resynced');
  assert.ok(sum((r) => r.elections.priorityTakeover) > 0, 'no priority takeover was tried');
  assert.ok(sum((r) => r.writesAccepted) > sum((r) => r.committedAtEnd) / 2, 'few writes were accepted');
});

// Messages slow enough that candidates often overlap.
const SLOW_NETWORK = [50, 500] as const;

test('on a slow network too, no seed breaks a safety invariant', () => {
  for (let seed = 1; seed <= 10; seed++) {
    const r = exploreReplicaSet({ seed, messageDelayMs: SLOW_NETWORK });
    if (r.violations.length > 0) assert.fail(explain(exploreReplicaSet({ seed, messageDelayMs: SLOW_NETWORK, trace: true })));
  }
});

test('a seed replays exactly', () => {
  const a = exploreReplicaSet({ seed: 7, trace: true });
  const b = exploreReplicaSet({ seed: 7, trace: true });
  assert.deepEqual(b, a);
});

test('the checks catch a planted bug: a voter that grants two votes in one term makes two primaries in a term', () => {
  const knobs = { plantBugGrantTwoVotesPerTerm: true };
  let found: ExplorerResult | null = null;
  for (let seed = 1; seed <= 100 && found === null; seed++) {
    const r = exploreReplicaSet({ seed, knobs, messageDelayMs: SLOW_NETWORK });
    if (r.violations.length > 0) found = r;
  }
  assert.ok(found !== null, 'no seed out of 100 found the planted bug');
  assert.match(found.violations[0]!, /second primary in term/);
  assert.deepEqual(exploreReplicaSet({ seed: found.seed, knobs, messageDelayMs: SLOW_NETWORK }).violations, found.violations);
  assert.deepEqual(exploreReplicaSet({ seed: found.seed, messageDelayMs: SLOW_NETWORK }).violations, []);
});
