import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CriticalSection } from './critical_section.js';
import { systemClock } from '../base/clock.js';

describe('the critical section', () => {
  it('holds writes, then reads too, and lets both through on exit', async () => {
    const cs = new CriticalSection(systemClock);
    await cs.waitFor('d.c', 'write');
    cs.enter('d.c');
    await cs.waitFor('d.c', 'read');
    await cs.waitFor('d.other', 'write');
    const order: string[] = [];
    const write = cs.waitFor('d.c', 'write').then(() => order.push('write'));
    cs.enterForReads('d.c');
    const read = cs.waitFor('d.c', 'read').then(() => order.push('read'));
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(order, []);
    cs.exit('d.c');
    await Promise.all([write, read]);
    assert.deepEqual(order.sort(), ['read', 'write']);
  });

  it('fails a waiter with ExceededTimeLimit after the timeout', async () => {
    const cs = new CriticalSection(systemClock);
    cs.enter('d.c');
    await assert.rejects(cs.waitFor('d.c', 'write', 20), (e: { code: number }) => e.code === 262);
    cs.exit('d.c');
  });
});
