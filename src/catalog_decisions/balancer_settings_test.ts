import { test } from 'node:test';
import { DEFAULT_CHUNK_SIZE_BYTES } from '../catalog/chunk_size.js';
import assert from 'node:assert/strict';
import { inBalancingWindow, parseBalancerSettings, shouldBalance } from './balancer_settings.js';

function at(h: number, m: number): Date {
  const d = new Date(2026, 0, 1, h, m, 0);
  return d;
}

test('no settings documents: balancer on, data-size policy, 128 MB chunks, automerge on', () => {
  const s = parseBalancerSettings(undefined, undefined, undefined);
  assert.equal(s.mode, 'full');
  assert.equal(s.policy, 'dataSize');
  assert.equal(s.chunkSizeBytes, DEFAULT_CHUNK_SIZE_BYTES);
  assert.equal(s.autoMerge, true);
  assert.equal(shouldBalance(s, at(3, 0)), true);
});

test('stopped or mode off turns the balancer off', () => {
  assert.equal(parseBalancerSettings({ _id: 'balancer', stopped: true }, undefined, undefined).mode, 'off');
  assert.equal(parseBalancerSettings({ _id: 'balancer', mode: 'off', stopped: false }, undefined, undefined).mode, 'off');
  assert.equal(parseBalancerSettings({ _id: 'balancer', mode: 'full', stopped: false }, undefined, undefined).mode, 'full');
});

test('chunk size in MB within 1..1024, otherwise the default', () => {
  assert.equal(parseBalancerSettings(undefined, { _id: 'chunksize', value: 1 }, undefined).chunkSizeBytes, 1024 * 1024);
  assert.equal(parseBalancerSettings(undefined, { _id: 'chunksize', value: 0 }, undefined).chunkSizeBytes, DEFAULT_CHUNK_SIZE_BYTES);
  assert.equal(parseBalancerSettings(undefined, { _id: 'chunksize', value: 2048 }, undefined).chunkSizeBytes, DEFAULT_CHUNK_SIZE_BYTES);
});

test('policy, waitForDelete, jumbo and automerge switches', () => {
  const s = parseBalancerSettings({ _id: 'balancer', policy: 'chunkCount', _waitForDelete: true, attemptToBalanceJumboChunks: true }, undefined, { _id: 'automerge', enabled: false });
  assert.equal(s.policy, 'chunkCount');
  assert.equal(s.waitForDelete, true);
  assert.equal(s.attemptToBalanceJumboChunks, true);
  assert.equal(s.autoMerge, false);
});

const windows: [string, string, number, number, boolean][] = [
  ['09:00', '17:00', 8, 59, false],
  ['09:00', '17:00', 9, 0, true],
  ['09:00', '17:00', 17, 0, true],
  ['09:00', '17:00', 17, 1, false],
  ['23:00', '06:00', 23, 30, true],
  ['23:00', '06:00', 3, 0, true],
  ['23:00', '06:00', 12, 0, false],
];
for (const [start, stop, h, m, expected] of windows) {
  test(`window ${start}-${stop} at ${h}:${String(m).padStart(2, '0')} -> ${expected}`, () => {
    const s = parseBalancerSettings({ _id: 'balancer', activeWindow: { start, stop } }, undefined, undefined);
    assert.equal(inBalancingWindow(s.activeWindow, at(h, m)), expected);
  });
}

test('an unreadable window stops balancing', () => {
  for (const activeWindow of [{ start: '25:00', stop: '01:00' }, { start: '9', stop: '10:00' }, 'always', { start: '10:00', stop: '10:00' }]) {
    const s = parseBalancerSettings({ _id: 'balancer', activeWindow }, undefined, undefined);
    assert.equal(shouldBalance(s, at(10, 0)), false);
  }
});
