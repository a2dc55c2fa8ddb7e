import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNKNOWN_MEMBER, type MemberData } from './member_data.js';
import type { OpTime } from './op_time.js';
import { chooseNewSyncSource, shouldChangeSyncSource, type SyncSourceView } from './sync_source.js';
import { configOf, memberConfig } from './topology_test_util.js';

const NOW = 100_000;
const config = configOf([0, 1, 2, 3].map((i) => memberConfig(i)));

function up(applied: OpTime, pingMs: number, state: MemberData['state'] = 'SECONDARY'): MemberData {
  return { ...UNKNOWN_MEMBER, state, term: applied.t, appliedOpTime: applied, durableOpTime: applied, lastHeartbeatOkMs: NOW - 1000, lastUpdateMs: NOW - 1000, pingMs };
}

function view(members: MemberData[], lastApplied: OpTime): SyncSourceView {
  return { config, selfIndex: 0, members: [UNKNOWN_MEMBER, ...members], lastAppliedOpTime: lastApplied, nowMs: NOW, denylist: {} };
}

test('the nearest member ahead of us is chosen', () => {
  const v = view([up({ ts: 90_000_000, t: 2 }, 30), up({ ts: 90_000_000, t: 2 }, 5), up({ ts: 95_000_000, t: 2 }, 10)], { ts: 80_000_000, t: 2 });
  assert.equal(chooseNewSyncSource(v), 2);
});

test('ahead means by the full optime: a larger timestamp of an older term is behind, a newer term is ahead', () => {
  const v = view([up({ ts: 99_000_000, t: 1 }, 1), up({ ts: 50_000_000, t: 3 }, 50), UNKNOWN_MEMBER], { ts: 60_000_000, t: 2 });
  assert.equal(chooseNewSyncSource(v), 2);
});

test('members behind us, down, not readable, arbiters or hidden are never chosen', () => {
  const down = { ...up({ ts: 90_000_000, t: 2 }, 1), lastHeartbeatOkMs: NOW - 20_000 };
  const v = view([down, up({ ts: 90_000_000, t: 2 }, 1, 'ROLLBACK'), up({ ts: 70_000_000, t: 2 }, 1)], { ts: 80_000_000, t: 2 });
  assert.equal(chooseNewSyncSource(v), null);
  const hidden = { ...v, config: configOf([memberConfig(0), memberConfig(1, { hidden: true, priority: 0 }), memberConfig(2), memberConfig(3)]) };
  assert.equal(chooseNewSyncSource({ ...hidden, members: [UNKNOWN_MEMBER, up({ ts: 90_000_000, t: 2 }, 1), UNKNOWN_MEMBER, UNKNOWN_MEMBER] }), null);
});

test('a denylisted member is not chosen until its time is up', () => {
  const v = view([up({ ts: 90_000_000, t: 2 }, 1), up({ ts: 90_000_000, t: 2 }, 9), UNKNOWN_MEMBER], { ts: 80_000_000, t: 2 });
  assert.equal(chooseNewSyncSource({ ...v, denylist: { 1: NOW + 1 } }), 2);
  assert.equal(chooseNewSyncSource({ ...v, denylist: { 1: NOW } }), 1);
});

test('a member more than maxSyncSourceLagSecs behind the freshest is chosen only when nothing fresher answers', () => {
  const v = view([up({ ts: 40_000_000, t: 2 }, 1), up({ ts: 99_000_000, t: 2 }, 80), UNKNOWN_MEMBER], { ts: 30_000_000, t: 2 });
  assert.equal(chooseNewSyncSource(v), 2);
  assert.equal(chooseNewSyncSource(view([up({ ts: 40_000_000, t: 2 }, 1), UNKNOWN_MEMBER, UNKNOWN_MEMBER], { ts: 30_000_000, t: 2 })), 1);
});

test('a source that falls behind us, goes down or stops being readable is left', () => {
  const v = view([up({ ts: 90_000_000, t: 2 }, 1), UNKNOWN_MEMBER, UNKNOWN_MEMBER], { ts: 80_000_000, t: 2 });
  assert.equal(shouldChangeSyncSource(v, 1, { ts: 90_000_000, t: 2 }), null);
  assert.equal(shouldChangeSyncSource(v, 1, { ts: 99_000_000, t: 1 }), 'sync source is behind us');
  assert.equal(shouldChangeSyncSource(view([up({ ts: 90_000_000, t: 2 }, 1, 'RECOVERING'), UNKNOWN_MEMBER, UNKNOWN_MEMBER], { ts: 80_000_000, t: 2 }), 1, { ts: 90_000_000, t: 2 }), 'sync source is RECOVERING');
  const down = view([{ ...up({ ts: 90_000_000, t: 2 }, 1), lastHeartbeatOkMs: NOW - 20_000 }, UNKNOWN_MEMBER, UNKNOWN_MEMBER], { ts: 80_000_000, t: 2 });
  assert.equal(shouldChangeSyncSource(down, 1, { ts: 90_000_000, t: 2 }), 'sync source is down');
});

test('a member that syncs from us is not chosen, and a source that does is left unless replSetSyncFrom asked for it', () => {
  const cyclic = { ...up({ ts: 90_000_000, t: 2 }, 1), syncSourceIndex: 0 };
  const v = view([cyclic, UNKNOWN_MEMBER, UNKNOWN_MEMBER], { ts: 80_000_000, t: 2 });
  assert.equal(chooseNewSyncSource(v), null);
  assert.equal(shouldChangeSyncSource(v, 1, cyclic.appliedOpTime), 'sync source syncs from us');
  assert.equal(shouldChangeSyncSource({ ...v, requested: 1 }, 1, cyclic.appliedOpTime), null);
});
