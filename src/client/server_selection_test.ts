import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../base/errors.js';
import { parseReadPreference, type ReadPreference } from './read_preference.js';
import { unknownServer, type ServerDescription } from './server_description.js';
import { selectServers } from './server_selection.js';

const NOW = 1_000_000_000;
const HEARTBEAT = 10_000;

function member(address: string, type: ServerDescription['type'], more: Partial<ServerDescription> = {}): ServerDescription {
  return { ...unknownServer(address, NOW), type, setName: 'rs0', rttMs: 5, lastWriteDateMs: NOW, ...more };
}

function select(servers: ServerDescription[], rp: ReadPreference | string): string[] {
  return selectServers(servers, typeof rp === 'string' ? parseReadPreference(rp) : rp, { heartbeatFrequencyMs: HEARTBEAT }).map((s) => s.address).sort();
}

const P = member('p:1', 'RSPrimary');
const S1 = member('s1:1', 'RSSecondary', { tags: { dc: 'east' } });
const S2 = member('s2:1', 'RSSecondary', { tags: { dc: 'west', rack: 'a' } });
const GONE = member('g:1', 'Unknown');
const ARB = member('arb:1', 'RSArbiter');

test('each mode picks its members, and the preferred modes fall back', () => {
  const all = [P, S1, S2, GONE, ARB];
  assert.deepEqual(select(all, 'primary'), ['p:1']);
  assert.deepEqual(select(all, 'primaryPreferred'), ['p:1']);
  assert.deepEqual(select(all, 'secondary'), ['s1:1', 's2:1']);
  assert.deepEqual(select(all, 'secondaryPreferred'), ['s1:1', 's2:1']);
  assert.deepEqual(select(all, 'nearest'), ['p:1', 's1:1', 's2:1']);
  const noPrimary = [S1, S2, GONE];
  assert.deepEqual(select(noPrimary, 'primary'), []);
  assert.deepEqual(select(noPrimary, 'primaryPreferred'), ['s1:1', 's2:1']);
  const onlyPrimary = [P, GONE];
  assert.deepEqual(select(onlyPrimary, 'secondary'), []);
  assert.deepEqual(select(onlyPrimary, 'secondaryPreferred'), ['p:1']);
});

test('the first tag set that some member matches wins; none matching leaves none', () => {
  const all = [P, S1, S2];
  assert.deepEqual(select(all, { mode: 'secondary', tags: [{ dc: 'west' }] }), ['s2:1']);
  assert.deepEqual(select(all, { mode: 'secondary', tags: [{ dc: 'north' }, { dc: 'east' }, {}] }), ['s1:1']);
  assert.deepEqual(select(all, { mode: 'secondary', tags: [{ dc: 'west', rack: 'b' }] }), []);
  assert.deepEqual(select(all, { mode: 'secondary', tags: [{ dc: 'north' }, {}] }), ['s1:1', 's2:1']);
  assert.deepEqual(select(all, { mode: 'secondaryPreferred', tags: [{ dc: 'north' }] }), ['p:1']);
});

test('the latency window keeps members within 15 ms of the fastest', () => {
  const fast = member('s1:1', 'RSSecondary', { rttMs: 2 });
  const near = member('s2:1', 'RSSecondary', { rttMs: 17 });
  const slow = member('s3:1', 'RSSecondary', { rttMs: 17.5 });
  assert.deepEqual(select([P, fast, near, slow], 'secondary'), ['s1:1', 's2:1']);
  assert.deepEqual(select([member('p:1', 'RSPrimary', { rttMs: 40 }), fast], 'nearest'), ['s1:1']);
});

test('maxStalenessSeconds drops secondaries behind the primary, or behind the freshest secondary', () => {
  const behind = (ms: number, address: string): ServerDescription => member(address, 'RSSecondary', { lastWriteDateMs: NOW - ms });
  const rp: ReadPreference = { mode: 'secondary', maxStalenessSeconds: 90 };
  // Staleness = lag + the heartbeat: 80 s + 10 s is just within 90 s, 81 s + 10 s is not.
  assert.deepEqual(select([P, behind(80_000, 'ok:1'), behind(81_000, 'late:1')], rp), ['ok:1']);
  assert.deepEqual(select([behind(0, 'first:1'), behind(80_000, 'ok:1'), behind(81_000, 'late:1')], rp), ['first:1', 'ok:1']);
  assert.deepEqual(select([P, behind(200_000, 'late:1')], { mode: 'nearest', maxStalenessSeconds: 90 }), ['p:1']);
});

test('a read preference is checked as mongos checks it', () => {
  const code = (value: unknown): string | undefined => {
    try {
      parseReadPreference(value);
      return undefined;
    } catch (err) {
      return (err as MongoError).codeName;
    }
  };
  assert.equal(code({ mode: 'secondary', maxStalenessSeconds: 89 }), 'MaxStalenessOutOfRange');
  assert.equal(code({ mode: 'secondary', maxStalenessSeconds: 90 }), undefined);
  assert.equal(code({ mode: 'secondary', maxStalenessSeconds: -1 }), undefined);
  assert.equal(code({ mode: 'primary', maxStalenessSeconds: 100 }), 'BadValue');
  assert.equal(code({ mode: 'primary', tags: [{ dc: 'east' }] }), 'BadValue');
  assert.equal(code({ mode: 'primary', tags: [{}] }), undefined);
  assert.equal(code({ mode: 'fastest' }), 'FailedToParse');
  assert.equal(code({ mode: 1 }), 'TypeMismatch');
  assert.deepEqual(parseReadPreference('nearest'), { mode: 'nearest' });
});
