import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadThroughEntry } from './read_through.js';

// Look-ups the test answers by hand, in whatever order an interleaving needs.
function manualLookUps(): { lookUp: (previous: number | undefined) => Promise<number>; calls: { previous: number | undefined; answer(v: number): void; fail(e: Error): void }[] } {
  const calls: { previous: number | undefined; answer(v: number): void; fail(e: Error): void }[] = [];
  const lookUp = (previous: number | undefined): Promise<number> => new Promise((resolve, reject) => calls.push({ previous, answer: resolve, fail: reject }));
  return { lookUp, calls };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ReadThroughEntry', () => {
  test('callers during a look-up share it, and the answer is cached', async () => {
    const { lookUp, calls } = manualLookUps();
    const entry = new ReadThroughEntry(lookUp);
    const asks = [entry.get(), entry.get()];
    assert.equal(calls.length, 1);
    calls[0]!.answer(1);
    assert.deepEqual(await Promise.all(asks), [1, 1]);
    assert.ok(entry.fresh);
    assert.equal(await entry.get(), 1);
    assert.equal(calls.length, 1);
  });

  test('an invalidation during a look-up: its callers get its answer, later callers a new look-up that starts from it', async () => {
    const { lookUp, calls } = manualLookUps();
    const entry = new ReadThroughEntry(lookUp);
    const early = entry.get();
    entry.invalidate();
    const late = entry.get();
    assert.equal(calls.length, 1, 'the late caller waits for the running look-up');
    calls[0]!.answer(1);
    assert.equal(await early, 1);
    assert.ok(!entry.fresh);
    await settle();
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.previous, 1);
    calls[1]!.answer(2);
    assert.equal(await late, 2);
    assert.ok(entry.fresh);
  });

  test('a failed look-up caches nothing and the next caller tries again; answers `keep` refuses are not cached', async () => {
    const { lookUp, calls } = manualLookUps();
    const entry = new ReadThroughEntry(lookUp, (v) => v > 0);
    const failed = entry.get();
    calls[0]!.fail(new Error('config server down'));
    await assert.rejects(failed, /config server down/);
    assert.ok(entry.idle);
    const zero = entry.get();
    calls[1]!.answer(0);
    assert.equal(await zero, 0);
    assert.ok(entry.idle, 'not kept');
    const one = entry.get();
    calls[2]!.answer(1);
    assert.equal(await one, 1);
    assert.ok(entry.fresh && !entry.idle);
  });
});
