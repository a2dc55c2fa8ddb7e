import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock } from '../base/clock.js';
import { ManualClock } from '../base/manual_clock_test_util.js';
import { steadyClock } from './steady_clock.js';

// A wall clock that a test can step, its timers left to the ManualClock underneath.
function steppable(): { wall: Clock; step: (ms: number) => void; manual: ManualClock } {
  const manual = new ManualClock();
  let offset = 0;
  const wall: Clock = { now: () => manual.now() + offset, sleep: (ms) => manual.sleep(ms), setTimer: (ms, fn) => manual.setTimer(ms, fn), setRepeatingTimer: () => manual.setRepeatingTimer() };
  return { wall, step: (ms) => { offset += ms; }, manual };
}

describe('steadyClock', () => {
  it('takes up a step back of the wall clock and goes on at its rate from where it was', () => {
    const { wall, step, manual } = steppable();
    const steady = steadyClock(wall);
    const start = steady.now();
    manual.advance(1000);
    assert.equal(steady.now(), start + 1000);
    step(-12 * 60_000);
    assert.equal(steady.now(), start + 1000);
    manual.advance(2000);
    assert.equal(steady.now(), start + 3000);
  });

  it('passes a step forward through, as MongoDB sees one', () => {
    const { wall, step } = steppable();
    const steady = steadyClock(wall);
    const start = steady.now();
    step(9 * 60_000);
    assert.equal(steady.now(), start + 9 * 60_000);
  });

  it('runs timers on the clock underneath', () => {
    const { wall, manual } = steppable();
    let fired = false;
    steadyClock(wall).setTimer(500, () => { fired = true; });
    manual.advance(499);
    assert.equal(fired, false);
    manual.advance(1);
    assert.equal(fired, true);
  });
});
