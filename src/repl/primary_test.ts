import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deliver, electedPrimary, heartbeatResponse, started, THREE, tick } from './topology_test_util.js';
import { topologyStep } from './topology_coordinator.js';

test('a primary that hears from no majority within the election timeout steps down; one that does stays', () => {
  const p = electedPrimary();
  const heard = deliver(p, 1, heartbeatResponse(p, { applied: p.oplog.at(-1)! }), p.nowMs + 9000).state;
  const stays = tick(heard, heard.nowMs + 2000).state;
  assert.equal(stays.memberState, 'PRIMARY');
  const alone = tick(stays, heard.nowMs + 10_500);
  assert.equal(alone.state.memberState, 'SECONDARY');
  assert.equal(alone.state.role, 'follower');
  assert.deepEqual(alone.effects.find((e) => e.type === 'memberStateChanged'), { type: 'memberStateChanged', state: 'SECONDARY', term: 1, writable: false });
});

test('a primary that sees a newer term in a heartbeat answer steps down', () => {
  const p = electedPrimary();
  const step = deliver(p, 2, heartbeatResponse(p, { term: 4, state: 'PRIMARY' }));
  assert.equal(step.state.memberState, 'SECONDARY');
  assert.equal(step.state.term, 4);
});

test('writes: accepted on a writable primary as entries of its term, NotWritablePrimary elsewhere', () => {
  const p = electedPrimary();
  const ok = topologyStep(p, { type: 'clientWrite', nowMs: p.nowMs, o: { x: 1 } });
  assert.deepEqual(ok.effects.map((e) => e.type), ['appendOplog', 'writeAccepted']);
  assert.equal(ok.state.oplog.at(-1)!.t, 1);
  const no = topologyStep(started(THREE, 1), { type: 'clientWrite', nowMs: 0, o: { x: 1 } });
  assert.deepEqual(no.effects, [{ type: 'writeRejected', code: 10107, codeName: 'NotWritablePrimary' }]);
});

test('the commit point moves when a majority reports the primary\'s entries durable through replSetUpdatePosition', () => {
  const p = topologyStep(electedPrimary(), { type: 'clientWrite', nowMs: 20_000, o: { x: 1 } }).state;
  const last = p.oplog.at(-1)!;
  const step = deliver(p, 2, { kind: 'replSetUpdatePosition', term: 1, configVersion: 1, optimes: [{ memberIndex: 2, appliedOpTime: last, durableOpTime: { ts: last.ts, t: last.t } }] });
  assert.deepEqual(step.effects, [{ type: 'commitPointAdvanced', opTime: { ts: last.ts, t: last.t } }]);
  assert.deepEqual(step.state.lastCommittedOpTime, { ts: last.ts, t: last.t });
});

test('catch-up: a new primary behind a member waits to reach it before its no-op, and gives up at catchUpTimeoutMillis', () => {
  let s = electedPrimary();
  assert.equal(s.leader!.writable, true, 'nobody ahead: no wait');
  s = started(THREE, 0);
  const ready = deliver(deliver(s, 1, heartbeatResponse(s), 9000).state, 2, heartbeatResponse(s), 9000).state;
  const asked = tick(ready, ready.electionTimeoutAtMs!).state;
  const vote = (dryRun: boolean) => ({ kind: 'replSetRequestVotesResponse', term: asked.term, voteGranted: true, reason: '', dryRun, requestTerm: dryRun ? 0 : 1 }) as const;
  const won = deliver(deliver(asked, 1, vote(true)).state, 1, vote(false)).state;
  const behind = deliver(won, 2, heartbeatResponse(won, { applied: { ts: 5000, t: 0 } })).state;
  assert.equal(behind.leader!.writable, false);
  assert.deepEqual(behind.leader!.catchUp!.targetOpTime, { ts: 5000, t: 0 });
  const timedOut = tick(behind, behind.leader!.catchUp!.deadlineMs);
  assert.equal(timedOut.state.leader!.writable, true);
  assert.equal(timedOut.state.oplog.at(-1)!.t, 1);
});
