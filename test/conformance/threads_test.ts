import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestThread } from './threads.js';

describe('TestThread', () => {
  it('runs its operations one after another, in the background', async () => {
    const thread = new TestThread();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    thread.run(async () => {
      await gate;
      order.push('first');
    });
    thread.run(async () => {
      order.push('second');
    });
    order.push('test goes on');
    release();
    await thread.wait();
    assert.deepEqual(order, ['test goes on', 'first', 'second']);
  });

  it('fails waitForThread with the first failure, and runs nothing after it', async () => {
    const thread = new TestThread();
    let ranAfter = false;
    thread.run(async () => {
      throw new Error('first');
    });
    thread.run(async () => {
      ranAfter = true;
    });
    await assert.rejects(thread.wait(), /first/);
    assert.equal(ranAfter, false);
  });
});
