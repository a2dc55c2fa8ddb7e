import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OplogFetchResponse, SourceMetadata } from './messages.js';
import type { OplogEntry } from './oplog_entry.js';
import { NULL_OP_TIME } from './op_time.js';
import { deliver, entry, heartbeatResponse, sent, started, THREE } from './topology_test_util.js';
import type { TopologyState } from './topology_state.js';
import { topologyStep } from './topology_coordinator.js';

const meta = (over: Partial<SourceMetadata> = {}): SourceMetadata => ({ term: 2, lastOpCommitted: NULL_OP_TIME, lastOpApplied: { ts: 300, t: 2 }, isPrimary: true, ...over });

// Member 1 with `oplog`, member 0 a PRIMARY of term 2 at {300, 2}: member 1 picks it and asks.
function fetchingFrom0(oplog: OplogEntry[], committed = NULL_OP_TIME): TopologyState {
  const s = started(THREE, 1, { oplog });
  return deliver({ ...s, lastCommittedOpTime: committed }, 0, heartbeatResponse(s, { state: 'PRIMARY', term: 2, applied: { ts: 300, t: 2 } }), 1000).state;
}

test('a secondary picks a source ahead of it and asks for what follows its last entry; the entries are persisted and reported upstream', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1)]);
  assert.equal(s.fetch.syncSourceIndex, 0);
  const reply: OplogFetchResponse = { kind: 'oplogFetchResponse', status: 'ok', entries: [entry(200, 2), entry(300, 2)], metadata: meta({ lastOpCommitted: { ts: 200, t: 2 } }) };
  const step = deliver(s, 0, reply, 1010);
  assert.deepEqual(step.effects.map((e) => e.type === 'send' ? e.message.kind : e.type), ['appendOplog', 'commitPointAdvanced', 'replSetUpdatePosition', 'oplogFetch']);
  assert.deepEqual(step.state.lastCommittedOpTime, { ts: 200, t: 2 });
  assert.equal(sent(step.effects, 'replSetUpdatePosition')[0]!.to, 0);
  assert.deepEqual(sent(step.effects, 'oplogFetch')[0]!.message, { kind: 'oplogFetch', lastFetched: { ts: 300, t: 2 }, term: 2 });
});

test('a source whose own last entry is behind ours is left', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1)]);
  const step = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'ok', entries: [], metadata: meta({ lastOpApplied: { ts: 50, t: 1 }, isPrimary: false }) }, 1010);
  assert.equal(step.state.fetch.syncSourceIndex, null);
});

test('a batch out of order is not applied and the source is denylisted', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1)]);
  const step = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'ok', entries: [entry(300, 2), entry(200, 2)], metadata: meta() }, 1010);
  assert.ok(!step.effects.some((e) => e.type === 'appendOplog'));
  assert.equal(step.state.fetch.syncSourceIndex, null);
});

test('replSetSyncFrom: the current source is left and the requested member, up and readable, is asked next; one in ROLLBACK is not taken', () => {
  const s = fetchingFrom0([entry(1, 0, 'n'), entry(100, 1)]);
  const answered = deliver(s, 0, { kind: 'oplogFetchResponse', status: 'ok', entries: [], metadata: meta() }, 1010).state;
  const heard = deliver(answered, 2, heartbeatResponse(answered, { state: 'SECONDARY', term: 2, applied: { ts: 300, t: 2 } }), 1020).state;
  assert.equal(heard.fetch.syncSourceIndex, 0, 'the primary is nearer by ping, so it stays the source');
  const step = topologyStep(heard, { type: 'syncFrom', nowMs: 1030, memberIndex: 2 });
  assert.equal(step.state.fetch.syncSourceIndex, 2);
  assert.equal(step.state.fetch.requestedSourceIndex, 2, 'kept while it is the source');
  assert.deepEqual(sent(step.effects, 'oplogFetch').map((e) => e.to), [2]);

  const down = deliver(answered, 2, heartbeatResponse(answered, { state: 'ROLLBACK', term: 2, applied: { ts: 300, t: 2 } }), 1020).state;
  const refused = topologyStep(down, { type: 'syncFrom', nowMs: 1030, memberIndex: 2 });
  assert.equal(refused.state.fetch.syncSourceIndex, 0, 'a member that serves no reads is not taken');
});
