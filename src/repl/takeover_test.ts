import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configOf, deliver, entry, heartbeatResponse, memberConfig, sent, started, tick } from './topology_test_util.js';
import type { ReplSetRequestVotes } from './messages.js';

const PRIORITIES = configOf([memberConfig(0, { priority: 3 }), memberConfig(1, { priority: 2 }), memberConfig(2)]);

test('a member of higher priority than a caught-up primary stands after (rank + 1) election timeouts plus the offset, with a dry run', () => {
  let s = started(PRIORITIES, 0, { oplog: [entry(1, 0, 'n'), entry(9_000_000, 1)] });
  s = deliver(s, 1, heartbeatResponse(s, { applied: { ts: 9_000_000, t: 1 } }), 1000).state;
  s = deliver(s, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 1, applied: { ts: 10_500_000, t: 1 } }), 1000).state;
  const at = s.priorityTakeoverAtMs!;
  assert.ok(at >= 11_000 && at < 12_500, `${at}`);
  // The primary and the other member keep answering, so the majority stays in sight.
  const fresh = deliver(deliver(s, 1, heartbeatResponse(s, { applied: { ts: 9_000_000, t: 1 } }), at - 100).state, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 1, applied: { ts: 10_500_000, t: 1 } }), at - 100).state;
  const step = tick(fresh, at);
  assert.equal(step.state.election?.reason, 'priorityTakeover');
  assert.ok(sent(step.effects, 'replSetRequestVotes').every((e) => (e.message as ReplSetRequestVotes).dryRun));
});

test('no priority takeover from a member more than 2 s behind the primary, nor from one of lower priority', () => {
  let s = started(PRIORITIES, 0, { oplog: [entry(1, 0, 'n'), entry(7_000_000, 1)] });
  s = deliver(s, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 1, applied: { ts: 10_500_000, t: 1 } }), 1000).state;
  assert.equal(s.priorityTakeoverAtMs, null);
  let low = started(PRIORITIES, 2, { oplog: [entry(1, 0, 'n'), entry(9_000_000, 1)] });
  low = deliver(low, 1, heartbeatResponse(low, { state: 'PRIMARY', term: 1, applied: { ts: 9_000_000, t: 1 } }), 1000).state;
  assert.equal(low.priorityTakeoverAtMs, null);
});

test('catch-up takeover: a member ahead of a primary that has not yet written in its term, and of everyone, stands after catchUpTakeoverDelayMillis', () => {
  const equal = configOf([memberConfig(0), memberConfig(1), memberConfig(2)]);
  let s = started(equal, 0, { oplog: [entry(1, 0, 'n'), entry(5_000_000, 1)] });
  s = deliver(s, 1, heartbeatResponse(s, { applied: { ts: 4_000_000, t: 1 } }), 1000).state;
  s = deliver(s, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 2, applied: { ts: 4_000_000, t: 1 } }), 1000).state;
  assert.equal(s.catchupTakeoverAtMs, 31_000);
  const kept = deliver(deliver(s, 1, heartbeatResponse(s, { term: 2, applied: { ts: 4_000_000, t: 1 } }), 30_500).state, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 2, applied: { ts: 4_000_000, t: 1 } }), 30_500).state;
  const standing = tick(kept, 31_000).state;
  assert.equal(standing.election?.reason, 'catchupTakeover');
  const dryRunNo = { kind: 'replSetRequestVotesResponse', term: 2, voteGranted: false, reason: 'no', dryRun: true, requestTerm: 2 } as const;
  const dryRunYes = { ...dryRunNo, voteGranted: true, reason: '' } as const;
  assert.equal(deliver(standing, 2, dryRunNo, 31_010).state.role, 'follower', 'the primary said no: the takeover is off');
  assert.equal(deliver(standing, 1, dryRunYes, 31_010).state.role, 'candidate', 'a majority without the primary\'s yes is not enough');
  assert.equal(deliver(deliver(standing, 1, dryRunYes, 31_010).state, 2, dryRunYes, 31_020).state.election?.dryRun, false);
  const wrote = deliver(s, 2, heartbeatResponse(s, { state: 'PRIMARY', term: 2, applied: { ts: 6_000_000, t: 2 } }), 30_500).state;
  assert.equal(tick(wrote, 31_000).state.election, null, 'the primary has written in its term: no takeover');
});
