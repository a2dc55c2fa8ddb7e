import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClonePacer, IDLE_BATCH_BYTES, LOADED_BATCH_BYTES } from './clone_pacer.js';

describe('the clone pacer', () => {
  const loaded = { percentUnderLoad: 10, loadedOpsPerSecond: 50 };

  it('never waits while the donor serves no users', () => {
    const pacer = new ClonePacer(loaded);
    assert.equal(pacer.next({ opsPerSecond: 0, applyMs: 0 }).delayMs, 0);
    pacer.batchServed(6);
    assert.equal(pacer.next({ opsPerSecond: 40, applyMs: 14 }).delayMs, 0, '40 ops/s is below the threshold');
  });

  it('holds the clone to its share of the wall clock while users are served', () => {
    const pacer = new ClonePacer(loaded);
    // Nothing served yet, so nothing to make up for.
    assert.equal(pacer.next({ opsPerSecond: 2000, applyMs: 0 }).delayMs, 0);
    pacer.batchServed(6);
    // 6 ms on the donor and 14 on the recipient are 10% of 200 ms.
    assert.equal(pacer.next({ opsPerSecond: 2000, applyMs: 14 }).delayMs, 180);
    pacer.batchServed(2);
    // The users went away.
    assert.equal(pacer.next({ opsPerSecond: 10, applyMs: 3 }).delayMs, 0);
  });

  it('serves large batches while the donor is idle and small ones while it is loaded', () => {
    const pacer = new ClonePacer(loaded);
    assert.equal(pacer.next({ opsPerSecond: 0, applyMs: 0 }).batchBytes, IDLE_BATCH_BYTES);
    assert.equal(pacer.next({ opsPerSecond: 2000, applyMs: 14 }).batchBytes, LOADED_BATCH_BYTES);
    assert.equal(pacer.next({ opsPerSecond: 10, applyMs: 3 }).batchBytes, IDLE_BATCH_BYTES);
    assert.ok(LOADED_BATCH_BYTES < IDLE_BATCH_BYTES);
  });

  it('is off at 100 percent (and at 0, which would never finish)', () => {
    for (const percentUnderLoad of [100, 0]) {
      const pacer = new ClonePacer({ percentUnderLoad, loadedOpsPerSecond: 50 });
      pacer.batchServed(6);
      assert.deepEqual(pacer.next({ opsPerSecond: 10_000, applyMs: 14 }), { delayMs: 0, batchBytes: IDLE_BATCH_BYTES });
    }
  });
});
