import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OplogFetchResponse, SourceMetadata } from './messages.js';
import type { OplogEntry } from './oplog_entry.js';
import { NULL_OP_TIME } from './op_time.js';
import { deliver, entry, heartbeatResponse, sent, started, THREE } from './topology_test_util.js';
import type { TopologyState } from './topology_state.js';

const meta = (over: Partial<SourceMetadata> = {}): SourceMetadata => ({ term: 2, lastOpCommitted: NULL_OP_TIME, lastOpApplied: { ts: 300, t: 2 }, isPrimary: true, ...over });

// Member 1 with `oplog`, member 0 a PRIMARY of term 2 at {300, 2}: member 1 picks it and asks.
function fetchingFrom0(oplog: OplogEntry[], committed = NULL_OP_TIME): TopologyState {
  const s = started(THREE, 1, { oplog });
  return deliver({ ...s, lastCommittedOpTime: committed }, 0, heartbeatResponse(s, { state: 'PRIMARY', term: 2, applied: { ts: 300, t: 2 } }), 1000).state;
}

test('the source answers OplogStartMissing when it lacks the fetcher\'s last entry', () => {
  const source = started(THREE, 0, { oplog: [entry(1, 0, 'n'), entry(200, 2)] });
  const step = deliver(source, 1, { kind: 'oplogFetch', lastFetched: { ts: 100, t: 1 }, term: 1 });
  assert.equal((sent(step.effects, 'oplogFetchResponse')[0]!.message as OplogFetchResponse).status, 'OplogStartMissing');
});

test('OplogStartMissing: ROLLBACK to the newest entry both hold, the divergent tail truncated and the source\'s entries taken', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)]);
  const missing = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta() }, 1010);
  assert.equal(missing.state.memberState, 'ROLLBACK');
  assert.deepEqual(sent(missing.effects, 'rollbackFetch')[0]!.message, { kind: 'rollbackFetch', from: NULL_OP_TIME });
  const back = deliver(missing.state, 0, { kind: 'rollbackFetchResponse', entries: [entry(1, 0, 'n'), entry(100, 1), entry(200, 2)], metadata: meta() }, 1020);
  assert.deepEqual(back.effects.filter((e) => e.type !== 'send' && e.type !== 'memberStateChanged'), [
    { type: 'truncateOplogAfter', opTime: { ts: 100, t: 1 } },
    { type: 'appendOplog', entries: [entry(200, 2)] },
  ]);
  assert.deepEqual(back.state.oplog, [entry(1, 0, 'n'), entry(100, 1), entry(200, 2)]);
  assert.equal(back.state.memberState, 'SECONDARY');
});

test('a rollback whose common point lies below the commit point is refused and nothing is truncated', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)], { ts: 150, t: 1 });
  const missing = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta() }, 1010).state;
  const back = deliver(missing, 0, { kind: 'rollbackFetchResponse', entries: [entry(1, 0, 'n'), entry(100, 1), entry(200, 2)], metadata: meta() }, 1020);
  assert.ok(back.effects.some((e) => e.type === 'rollbackRefused'));
  assert.ok(!back.effects.some((e) => e.type === 'truncateOplogAfter'));
  assert.equal(back.state.oplog.length, 3);
});

test('no rollback to a source whose last entry is of an older term than ours: it may lack what a newer primary committed', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)]);
  const step = deliver({ ...s, term: 3 }, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta() }, 1010);
  assert.equal(step.state.memberState, 'SECONDARY');
  assert.equal(sent(step.effects, 'rollbackFetch').length, 0);
  assert.equal(step.state.fetch.syncSourceIndex, null);
  assert.ok(step.state.fetch.denylist[0]! > 1010);
});

test('OplogStartMissing from a source that is not ahead of us is no divergence: the source is left, nothing rolled back', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 2)]);
  const step = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta({ lastOpApplied: { ts: 120, t: 2 } }), oldestOpTime: { ts: 1, t: 0 } }, 1010);
  assert.equal(step.state.memberState, 'SECONDARY');
  assert.equal(sent(step.effects, 'rollbackFetch').length, 0);
  assert.ok(step.state.fetch.denylist[0]! > 1010);
  assert.ok(!step.effects.some((e) => e.type === 'resyncNeeded'));
});

test('a source whose oplog begins after our commit point is too stale to roll back to: another source is tried first', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)], { ts: 100, t: 1 });
  const withOther = deliver(s, 2, heartbeatResponse(s, { state: 'SECONDARY', term: 2, applied: { ts: 250, t: 2 } }), 1005).state;
  const step = deliver(withOther, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta(), oldestOpTime: { ts: 200, t: 2 } }, 1010);
  assert.equal(sent(step.effects, 'rollbackFetch').length, 0);
  assert.ok(!step.effects.some((e) => e.type === 'resyncNeeded' || e.type === 'rollbackRefused'));
  assert.ok(step.state.fetch.denylist[0]! > 1010);
  assert.equal(step.state.fetch.syncSourceIndex, 2);
});

test('when no source\'s oplog reaches back to ours, the member resyncs instead of rolling back or refusing', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)], { ts: 100, t: 1 });
  const step = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta(), oldestOpTime: { ts: 200, t: 2 } }, 1010);
  assert.equal(sent(step.effects, 'rollbackFetch').length, 0);
  assert.ok(!step.effects.some((e) => e.type === 'rollbackRefused'));
  assert.equal(step.effects.filter((e) => e.type === 'resyncNeeded').length, 1);
});

test('a rollback read that does not reach back to the commit point is a source too stale, not a refusal', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1), entry(150, 1)], { ts: 100, t: 1 });
  const missing = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'OplogStartMissing', entries: [], metadata: meta() }, 1010).state;
  assert.equal(missing.memberState, 'ROLLBACK');
  const back = deliver(missing, 0, { kind: 'rollbackFetchResponse', entries: [entry(200, 2), entry(300, 2)], metadata: meta(), oldestOpTime: { ts: 200, t: 2 } }, 1020);
  assert.ok(!back.effects.some((e) => e.type === 'rollbackRefused' || e.type === 'truncateOplogAfter'));
  assert.equal(back.effects.filter((e) => e.type === 'resyncNeeded').length, 1);
  assert.equal(back.state.memberState, 'SECONDARY');
});
