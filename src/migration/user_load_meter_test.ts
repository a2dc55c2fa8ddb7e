import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LOAD_SAMPLE_INTERVAL_MS, LOAD_WINDOW_MS, UserLoadMeter, userOps } from './user_load_meter.js';

// Counters with only inserts counting, as a node's commands would count them.
function countersAt(inserts: number) {
  return { insert: inserts, query: 0, update: 0, delete: 0, getmore: 0, command: 0 };
}

describe('the user load meter', () => {
  it('reads nothing before its first sample', () => {
    assert.equal(new UserLoadMeter(countersAt(100)).opsPerSecond(500), 0);
  });

  it('measures over the last window, not over the time since the last look', () => {
    const counters = countersAt(0);
    const meter = new UserLoadMeter(counters);
    // 10 ops every 100 ms for two seconds: 100 ops/s.
    for (let t = 0; t <= 2000; t += LOAD_SAMPLE_INTERVAL_MS) {
      counters.insert = t / 10;
      meter.sample(t);
    }
    // 20 ms later no operation finished (the donor was reading a clone batch): still loaded.
    assert.equal(Math.round(meter.opsPerSecond(2020)), 98);
  });

  it('forgets load older than its window', () => {
    const counters = countersAt(0);
    const meter = new UserLoadMeter(counters);
    meter.sample(0);
    counters.insert = 5000;
    for (let t = 100; t <= 100 + LOAD_WINDOW_MS + LOAD_SAMPLE_INTERVAL_MS; t += LOAD_SAMPLE_INTERVAL_MS) meter.sample(t);
    assert.equal(meter.opsPerSecond(1250), 0);
  });

  it('spans the whole gap when its timer was held up', () => {
    const counters = countersAt(0);
    const meter = new UserLoadMeter(counters);
    meter.sample(0);
    counters.insert = 300;
    meter.sample(3000);
    assert.equal(meter.opsPerSecond(3000), 100);
  });

  it('counts user operations, not commands', () => {
    assert.equal(userOps({ insert: 1, query: 2, update: 3, delete: 4, getmore: 5, command: 1000 }), 15);
  });
});
