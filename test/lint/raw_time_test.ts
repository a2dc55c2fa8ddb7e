import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawTimeUses } from './raw_time.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('protocol code reads the time and sets timers only through its Clock', () => {
  assert.deepEqual(rawTimeUses(ROOT), []);
});

test('a raw time read or timer outside the edges is reported; the edges, tests and comments are not', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-raw-time-'));
  try {
    const file = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    };
    file('src/balancer/loop.ts', [
      'export const started = Date.now();',
      '// Date.now() in a comment, setTimeout too',
      'export const stamp = new Date();',
      'export const at = new Date(0);',
      'export function later(f: () => void) { setTimeout(f, 10); return setInterval(f, 10); }',
      'export const fine = { setTimeout: 1 }.setTimeout + clock.now();',
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'export const wall = systemClock.now();',
    ].join('\n'));
    file('src/balancer/loop_test.ts', 'export const t = Date.now();\n');
    file('src/balancer/test_support.ts', 'export const clock = systemClock; export const t = Date.now();\n');
    file('src/process/node.ts', 'export const clock = systemClock;\n');
    file('src/process/main.ts', 'export const t = Date.now(); setTimeout(() => {}, 1);\n');
    file('src/wire/socket.ts', 'export const t = new Date();\n');
    file('src/storage/lmdb/env.ts', 'setInterval(() => {}, 1);\n');
    file('src/storage/engine.ts', 'export const t = Date.now();\n');
    file('src/base/clock.ts', 'export const now = () => Date.now();\n');
    assert.deepEqual(rawTimeUses(dir).sort(), [
      'src/balancer/loop.ts:1: Date.now()',
      'src/balancer/loop.ts:3: new Date()',
      'src/balancer/loop.ts:5: setInterval',
      'src/balancer/loop.ts:5: setTimeout',
      'src/balancer/loop.ts:7: node:timers',
      'src/balancer/loop.ts:7: setTimeout',
      'src/balancer/loop.ts:8: systemClock',
      'src/storage/engine.ts:1: Date.now()',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
