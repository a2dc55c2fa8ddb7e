import { test } from 'node:test';
import assert from 'node:assert/strict';
import { electedPrimary, entry, hearFromAll, THREE, started, tick } from './topology_test_util.js';
import { topologyStep } from './topology_coordinator.js';

test('the new primary\'s no-op takes the driver\'s next timestamp, raised past its last entry', () => {
  const p = electedPrimary();
  const noop = p.oplog.at(-1)!;
  assert.equal(noop.op, 'n');
  assert.equal(noop.ts, p.nowMs * 1000, 'without a nextTs: the time at 1,000,000 per second');
  const s = started(THREE, 0, { oplog: [entry(1, 0, 'n')] });
  const step = topologyStep(s, { type: 'tick', nowMs: 0, nextTs: 42_000_007 });
  assert.equal(step.state.clockTs, 42_000_007);
});

test('writes the driver\'s storage committed join the view with no persist effect, only on a writable primary and in order', () => {
  const p = electedPrimary();
  const last = p.oplog.at(-1)!;
  const w = { ts: last.ts + 5, t: p.term, op: 'i' as const, o: { x: 1 } };
  const step = topologyStep(p, { type: 'localWritesCommitted', nowMs: p.nowMs, entries: [w] });
  assert.deepEqual(step.state.oplog.at(-1), w);
  assert.ok(step.effects.every((e) => e.type !== 'appendOplog'));
  assert.throws(() => topologyStep(step.state, { type: 'localWritesCommitted', nowMs: p.nowMs, entries: [w] }), /does not follow/);
  assert.throws(() => topologyStep(started(THREE, 1), { type: 'localWritesCommitted', nowMs: 0, entries: [w] }), /not a writable primary/);
});

test('trimOplog keeps the entries from the commit point on, and always the last one', () => {
  const s = { ...started(THREE, 1, { oplog: [entry(1, 0, 'n'), entry(10, 1), entry(20, 1), entry(30, 1)] }), lastCommittedOpTime: { ts: 20, t: 1 } };
  assert.deepEqual(topologyStep(s, { type: 'trimOplog', nowMs: 0 }).state.oplog.map((e) => e.ts), [20, 30]);
  const none = { ...s, lastCommittedOpTime: { ts: 99, t: 1 } };
  assert.deepEqual(topologyStep(none, { type: 'trimOplog', nowMs: 0 }).state.oplog.map((e) => e.ts), [30]);
});

test('initialSyncDone makes a STARTUP2 member SECONDARY holding the entry, and arms its election timer', () => {
  const s = started(THREE, 1, { oplog: [] });
  assert.equal(s.memberState, 'STARTUP2');
  const step = topologyStep(s, { type: 'initialSyncDone', nowMs: 5, lastEntry: entry(7, 0, 'n') });
  assert.equal(step.state.memberState, 'SECONDARY');
  assert.deepEqual(step.state.oplog, [entry(7, 0, 'n')]);
  assert.notEqual(step.state.electionTimeoutAtMs, null);
  assert.deepEqual(step.effects.map((e) => e.type), ['memberStateChanged']);
});

test('stepDown makes a primary SECONDARY and unelectable until frozenUntilMs; freeze does the same to a follower', () => {
  const p = electedPrimary();
  const down = topologyStep(p, { type: 'stepDown', nowMs: p.nowMs, frozenUntilMs: p.nowMs + 60_000 }).state;
  assert.equal(down.memberState, 'SECONDARY');
  const timeout = down.electionTimeoutAtMs!;
  const seen = hearFromAll(down, p.oplog.at(-1)!, 'SECONDARY', timeout - 100);
  assert.equal(tick(seen, timeout).state.election, null, 'frozen: no election');
  const thawed = hearFromAll(down, p.oplog.at(-1)!, 'SECONDARY', p.nowMs + 60_000);
  assert.notEqual(tick(thawed, Math.max(thawed.electionTimeoutAtMs!, p.nowMs + 60_000)).state.election, null, 'after frozenUntilMs it stands');
  const f = topologyStep(started(THREE, 1), { type: 'freeze', nowMs: 0, frozenUntilMs: 30_000 }).state;
  assert.equal(f.frozenUntilMs, 30_000);
});
