import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LOAD_SAMPLE_INTERVAL_MS, LOAD_WINDOW_MS, UserLoadMeter, userOps } from './user_load_meter.js';

describe('the user load meter', () => {
  it('reads nothing before its first sample', () => {
    assert.equal(new UserLoadMeter().opsPerSecond(500, 100), 0);
  });

  it('measures over the last window, not over the time since the last look', () => {
    const meter = new UserLoadMeter();
    // 10 ops every 100 ms for two seconds: 100 ops/s.
    for (let t = 0; t <= 2000; t += LOAD_SAMPLE_INTERVAL_MS) meter.sample(t, t / 10);
    // 20 ms later no operation finished (the donor was reading a clone batch): still loaded.
    assert.equal(Math.round(meter.opsPerSecond(2020, 200)), 98);
  });

  it('forgets load older than its window', () => {
    const meter = new UserLoadMeter();
    meter.sample(0, 0);
    meter.sample(100, 5000);
    for (let t = 200; t <= 100 + LOAD_WINDOW_MS + LOAD_SAMPLE_INTERVAL_MS; t += LOAD_SAMPLE_INTERVAL_MS) meter.sample(t, 5000);
    assert.equal(meter.opsPerSecond(1250, 5000), 0);
  });

  it('spans the whole gap when its timer was held up', () => {
    const meter = new UserLoadMeter();
    meter.sample(0, 0);
    meter.sample(3000, 300);
    assert.equal(meter.opsPerSecond(3000, 300), 100);
  });

  it('counts user operations, not commands', () => {
    assert.equal(userOps({ insert: 1, query: 2, update: 3, delete: 4, getmore: 5, command: 1000 }), 15);
  });
});
