import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configCommitted, reconfigRefusal } from './reconfig.js';
import { topologyStep } from './topology_coordinator.js';
import type { TopologyState } from './topology_state.js';
import { configOf, deliver, electedPrimary, heartbeatResponse, memberConfig, sent, started, THREE } from './topology_test_util.js';
import type { ReplSetConfig } from './repl_set_config.js';

const version = (config: ReplSetConfig, v: number): ReplSetConfig => ({ ...config, version: v });
const FOUR = version(configOf([...THREE.members, memberConfig(3)]), 2);

function install(s: TopologyState, config: ReplSetConfig, selfIndex: number | null): ReturnType<typeof topologyStep> {
  return topologyStep(s, { type: 'installConfig', nowMs: s.nowMs, config, selfIndex });
}

// A primary whose commit point is its own no-op, with both others holding it and `configVersion`.
function committedPrimary(configVersion = 1): TopologyState {
  let p = electedPrimary();
  const last = p.oplog.at(-1)!;
  for (const i of [1, 2]) p = deliver(p, i, { ...heartbeatResponse(p, { applied: last }), configVersion }).state;
  return p;
}

test('a new config must have a greater version, the same set name, and keep each host\'s _id and arbiter flag (103)', () => {
  assert.equal(reconfigRefusal(THREE, THREE, false)?.code, 103);
  assert.equal(reconfigRefusal(THREE, { ...version(THREE, 2), _id: 'other' }, false)?.code, 103);
  assert.equal(reconfigRefusal(THREE, version(configOf([memberConfig(0), memberConfig(1), memberConfig(7, { host: 'm2:27017' })]), 2), false)?.code, 103);
  assert.equal(reconfigRefusal(THREE, version(configOf([memberConfig(0), memberConfig(1), memberConfig(2, { arbiterOnly: true, priority: 0 })]), 2), false)?.code, 103);
  assert.equal(reconfigRefusal(THREE, FOUR, false), null);
});

test('without force, at most one voting member is added or removed (93); force may change more', () => {
  const five = version(configOf([...THREE.members, memberConfig(3), memberConfig(4)]), 2);
  assert.deepEqual(reconfigRefusal(THREE, five, false), { code: 93, codeName: 'InvalidReplicaSetConfig', message: 'Non force replica set reconfig can only add or remove at most 1 voting member.' });
  assert.equal(reconfigRefusal(THREE, five, true), null);
  const nonVoters = version(configOf([...THREE.members, memberConfig(3, { votes: 0, priority: 0 }), memberConfig(4, { votes: 0, priority: 0 })]), 2);
  assert.equal(reconfigRefusal(THREE, nonVoters, false), null);
  const one = version(configOf([memberConfig(0)]), 2);
  assert.equal(reconfigRefusal(THREE, one, false)?.code, 93);
});

test('the config is committed once a majority of its voters report it and the commit point is of the primary\'s term', () => {
  assert.equal(configCommitted(electedPrimary()), false, 'no member has reported the config yet');
  assert.equal(configCommitted(committedPrimary()), true);
  assert.equal(configCommitted(started(THREE, 1)), false, 'only a primary commits a config');
  const installed = install(committedPrimary(), FOUR, 0).state;
  assert.equal(configCommitted(installed), false, 'members have not reported version 2 yet');
  let p = installed;
  for (const i of [1, 2]) p = deliver(p, i, { ...heartbeatResponse(p, { applied: p.oplog.at(-1)! }), configVersion: 2 }).state;
  assert.equal(configCommitted(p), true, 'three of four voters hold version 2');
});

test('a primary installing a config keeps what it knew of each host, heartbeats the new member at once and stays primary', () => {
  const p = committedPrimary();
  const step = install(p, FOUR, 0);
  assert.equal(step.state.memberState, 'PRIMARY');
  assert.equal(step.state.members.length, 4);
  assert.equal(step.state.members[1]!.lastHeartbeatOkMs, p.members[1]!.lastHeartbeatOkMs);
  assert.equal(step.state.members[3]!.lastHeartbeatOkMs, null);
  const beat = tick0(step.state);
  assert.deepEqual(sent(beat.effects, 'replSetHeartbeat').map((e) => e.to), [1, 2, 3]);
});

function tick0(s: TopologyState): ReturnType<typeof topologyStep> {
  return topologyStep(s, { type: 'tick', nowMs: s.nowMs });
}

test('a member left out of the new config is REMOVED: it fetches nothing and stands for no election; added back it is SECONDARY again', () => {
  const s = started(THREE, 2);
  const removed = install(s, version(configOf([memberConfig(0), memberConfig(1)]), 2), null);
  assert.equal(removed.state.memberState, 'REMOVED');
  assert.deepEqual(removed.effects.filter((e) => e.type === 'memberStateChanged'), [{ type: 'memberStateChanged', state: 'REMOVED', term: 0, writable: false }]);
  assert.equal(removed.state.electionTimeoutAtMs, null);
  const later = deliver(removed.state, 0, heartbeatResponse(removed.state, { state: 'PRIMARY', applied: { ts: 5, t: 1 }, term: 1 }));
  assert.deepEqual(sent(later.effects, 'oplogFetch'), []);
  const back = install(later.state, version(THREE, 3), 2);
  assert.equal(back.state.memberState, 'SECONDARY');
});

test('a primary removed from the config, or made unelectable by it, steps down', () => {
  const p = committedPrimary();
  assert.equal(install(p, version(configOf([memberConfig(1), memberConfig(2)]), 2), null).state.memberState, 'REMOVED');
  const unelectable = install(p, version(configOf([memberConfig(0, { priority: 0 }), memberConfig(1), memberConfig(2)]), 2), 0);
  assert.equal(unelectable.state.memberState, 'SECONDARY');
  assert.equal(unelectable.state.role, 'follower');
});
