import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deliver, entry, heartbeatResponse, sent, started, THREE, tick } from './topology_test_util.js';

test('heartbeats go to every other member every 2 s, and an answer gives the member\'s ping', () => {
  const s = started(THREE, 0, { nowMs: 500 });
  const first = tick(s, 500);
  assert.deepEqual(sent(first.effects, 'replSetHeartbeat').map((e) => e.to), [1, 2]);
  assert.equal(first.state.nextHeartbeatAtMs, 2500);
  assert.equal(sent(tick(first.state, 2499).effects, 'replSetHeartbeat').length, 0);
  assert.equal(sent(tick(first.state, 2500).effects, 'replSetHeartbeat').length, 2);
  const answered = deliver(first.state, 1, heartbeatResponse(first.state), 530).state;
  assert.equal(answered.members[1]!.pingMs, 30);
});

test('a heartbeat is answered with the member\'s state, term, last applied optime and commit point', () => {
  const s = { ...started(THREE, 1, { oplog: [entry(1, 0, 'n'), entry(50, 1)] }), lastCommittedOpTime: { ts: 1, t: 0 } };
  const step = deliver(s, 0, { kind: 'replSetHeartbeat', setName: 'rs0', term: 1, configVersion: 1, sentAtMs: 7 });
  const answer = sent(step.effects, 'replSetHeartbeatResponse')[0]!;
  assert.equal(answer.to, 0);
  assert.deepEqual(answer.message, {
    kind: 'replSetHeartbeatResponse', setName: 'rs0', term: 1, state: 'SECONDARY', appliedOpTime: { ts: 50, t: 1 }, durableOpTime: { ts: 50, t: 1 },
    configVersion: 1, syncSourceIndex: null, lastOpCommitted: { ts: 1, t: 0 }, sentAtMs: 7,
  });
});

test('an answer from the primary of the member\'s term puts off its election; one from a secondary does not', () => {
  const s = started(THREE, 1, { oplog: [entry(1, 0, 'n'), entry(50, 1)] });
  const before = s.electionTimeoutAtMs!;
  const fromSecondary = deliver(s, 2, heartbeatResponse(s, { term: 1 }), 5000).state;
  assert.equal(fromSecondary.electionTimeoutAtMs, before);
  const fromPrimary = deliver(s, 0, heartbeatResponse(s, { state: 'PRIMARY', term: 1 }), 5000).state;
  assert.ok(fromPrimary.electionTimeoutAtMs! >= 15_000);
});

test('a newer term in an answer is adopted; the commit point it carries is taken only within what the member holds', () => {
  const s = started(THREE, 1, { oplog: [entry(1, 0, 'n'), entry(50, 1)] });
  const step = deliver(s, 0, heartbeatResponse(s, { state: 'PRIMARY', term: 2, committed: { ts: 90, t: 1 } }), 100);
  assert.equal(step.state.term, 2);
  assert.deepEqual(step.state.lastCommittedOpTime, { ts: 50, t: 1 });
  assert.deepEqual(step.effects.filter((e) => e.type === 'commitPointAdvanced'), [{ type: 'commitPointAdvanced', opTime: { ts: 50, t: 1 } }]);
});
