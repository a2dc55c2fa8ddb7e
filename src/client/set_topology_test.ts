import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';
import { SetTopology } from './set_topology.js';

const T = 1_000;
const PROCESS_A = new ObjectId();
const PROCESS_B = new ObjectId();
const HOSTS = ['a:1', 'b:1', 'c:1'];

function electionId(term: number): ObjectId {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(0x7fffffff, 0);
  bytes.writeBigUInt64BE(BigInt(term), 4);
  return new ObjectId(bytes);
}

function hello(me: string, role: 'primary' | 'secondary', more: Doc = {}): Doc {
  return {
    ok: 1, setName: 'rs0', setVersion: 1, hosts: HOSTS, me, isWritablePrimary: role === 'primary', secondary: role === 'secondary',
    topologyVersion: { processId: PROCESS_A, counter: Long.fromNumber(1) },
    ...(role === 'primary' ? { electionId: electionId(1), primary: me } : {}),
    ...more,
  };
}

const types = (t: SetTopology): Record<string, string> => Object.fromEntries(t.descriptions().map((s) => [s.address, s.type]));

test('members are discovered from a member while no primary is known, then the primary\'s lists rule', () => {
  const t = new SetTopology('rs0', ['a:1'], T);
  t.onHello('a:1', hello('a:1', 'secondary'), T, 3);
  assert.deepEqual(types(t), { 'a:1': 'RSSecondary', 'b:1': 'Unknown', 'c:1': 'Unknown' });
  assert.equal(t.server('a:1')?.rttMs, 3);
  t.onHello('b:1', hello('b:1', 'primary', { hosts: ['a:1', 'b:1', 'd:1'], arbiters: ['e:1'] }), T);
  assert.deepEqual(types(t), { 'a:1': 'RSSecondary', 'b:1': 'RSPrimary', 'd:1': 'Unknown', 'e:1': 'Unknown' });
  assert.equal(t.primary()?.address, 'b:1');
});

test('a reply of another set, from a standalone, or naming another `me` removes its server', () => {
  const t = new SetTopology('rs0', HOSTS, T);
  t.onHello('a:1', hello('a:1', 'secondary', { setName: 'other' }), T);
  t.onHello('b:1', { ok: 1, isWritablePrimary: true }, T);
  t.onHello('c:1', hello('elsewhere:1', 'secondary'), T);
  assert.deepEqual(t.addresses(), []);
});

test('a newer primary deposes the old; a primary of an older election is not believed', () => {
  const t = new SetTopology('rs0', HOSTS, T);
  t.onHello('a:1', hello('a:1', 'primary', { electionId: electionId(2) }), T);
  t.onHello('b:1', hello('b:1', 'primary', { electionId: electionId(3) }), T);
  assert.deepEqual(types(t), { 'a:1': 'Unknown', 'b:1': 'RSPrimary', 'c:1': 'Unknown' });
  t.onHello('a:1', hello('a:1', 'primary', { electionId: electionId(2) }), T);
  assert.equal(t.server('a:1')?.type, 'Unknown');
  assert.equal(t.primary()?.address, 'b:1');
  // Same election, older config: stale too.
  t.onHello('c:1', hello('c:1', 'primary', { electionId: electionId(3), setVersion: 0 }), T);
  assert.equal(t.primary()?.address, 'b:1');
});

test('topologyVersion orders news: an older reply or error changes nothing, a restart\'s always counts', () => {
  const t = new SetTopology('rs0', HOSTS, T);
  const tv = (processId: ObjectId, counter: number): Doc => ({ processId, counter: Long.fromNumber(counter) });
  t.onHello('a:1', hello('a:1', 'primary', { topologyVersion: tv(PROCESS_A, 5) }), T);
  // A reply sent before the last one, arriving after it.
  t.onHello('a:1', hello('a:1', 'secondary', { topologyVersion: tv(PROCESS_A, 4) }), T);
  assert.equal(t.server('a:1')?.type, 'RSPrimary');
  // An error no newer than the description is old news.
  assert.equal(t.markNotPrimary('a:1', T, { processId: PROCESS_A.toHexString(), counter: 5 }), false);
  assert.equal(t.server('a:1')?.type, 'RSPrimary');
  assert.equal(t.markNotPrimary('a:1', T, { processId: PROCESS_A.toHexString(), counter: 6 }), true);
  assert.equal(t.server('a:1')?.type, 'Unknown');
  // The primary's reply from before the step-down, late: ignored; the one after it: taken.
  t.onHello('a:1', hello('a:1', 'primary', { topologyVersion: tv(PROCESS_A, 5) }), T);
  assert.equal(t.server('a:1')?.type, 'Unknown');
  t.onHello('a:1', hello('a:1', 'secondary', { topologyVersion: tv(PROCESS_A, 6) }), T);
  assert.equal(t.server('a:1')?.type, 'RSSecondary');
  t.onHello('a:1', hello('a:1', 'secondary', { topologyVersion: tv(PROCESS_B, 1) }), T);
  assert.equal(t.server('a:1')?.topologyVersion?.processId, PROCESS_B.toHexString());
});

test('a failed check or a network error makes a member Unknown; hidden members are RSOther', () => {
  const t = new SetTopology('rs0', HOSTS, T);
  t.onHello('a:1', hello('a:1', 'primary'), T, 1);
  t.onHello('b:1', hello('b:1', 'secondary', { hidden: true }), T);
  t.onHello('c:1', hello('c:1', 'secondary'), T);
  assert.equal(t.server('b:1')?.type, 'RSOther');
  assert.equal(t.markUnreachable('a:1', T, 'connection refused'), true);
  assert.equal(t.primary(), undefined);
  assert.equal(t.server('a:1')?.error, 'connection refused');
  assert.equal(t.server('a:1')?.rttMs, undefined);
  t.onCheckFailed('c:1', T, 'timed out');
  assert.equal(t.server('c:1')?.type, 'Unknown');
});

test('round trips are a moving average', () => {
  const t = new SetTopology('rs0', ['a:1'], T);
  t.onHello('a:1', hello('a:1', 'secondary'), T, 10);
  t.onRtt('a:1', 20);
  assert.equal(t.server('a:1')?.rttMs, 12);
});
