import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Incarnation, Scheduler } from './scheduler.js';

test("a process's virtual clock reads the epoch plus the virtual time, and its repeating timer fires each interval until cancelled or the process dies", async () => {
  const scheduler = new Scheduler();
  const owner = new Incarnation('n');
  const clock = scheduler.clockOf(owner, 1_000_000);
  const fired: number[] = [];
  const timer = clock.setRepeatingTimer(10, () => {
    fired.push(clock.now());
    if (fired.length === 3) timer.cancel();
  });
  await scheduler.run(100);
  assert.deepEqual(fired, [1_000_010, 1_000_020, 1_000_030]);

  const dying = new Incarnation('d');
  const ticks: number[] = [];
  scheduler.clockOf(dying).setRepeatingTimer(5, () => {
    ticks.push(scheduler.nowMs);
    if (ticks.length === 2) scheduler.kill(dying);
  });
  await scheduler.run(100);
  assert.deepEqual(ticks, [35, 40]);
});
