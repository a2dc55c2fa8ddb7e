import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptHost } from './script_host_client.js';

test('a script host that does not answer in time is killed, and the next request starts another', () => {
  const host = new ScriptHost();
  const { ctx } = host.request({ op: 'context', heapMB: 16 }, 30_000);
  assert.equal(typeof ctx, 'number');
  const loop = host.request({ op: 'call', ctx, entry: '__compile', args: ['while (true) {}'], timeout: 30_000 }, 30_000);
  const generation = host.generation;
  // The host's own limit (60 s) is past the wait: the node stops waiting and kills it.
  const started = performance.now();
  const hung = host.request({ op: 'call', ctx, entry: '__where', args: [loop.value, '{}'], timeout: 60_000 }, 300);
  assert.equal(hung.error?.kind, 'hung');
  assert.ok(performance.now() - started < 10_000);
  assert.equal(host.generation, generation + 1, 'its contexts are gone');
  const again = host.request({ op: 'context', heapMB: 16 }, 30_000);
  const fn = host.request({ op: 'call', ctx: again.ctx, entry: '__compile', args: ['this.a == 2'], timeout: 30_000 }, 30_000);
  assert.deepEqual(host.request({ op: 'call', ctx: again.ctx, entry: '__where', args: [fn.value, '{"a":{"$numberInt":"2"}}'], timeout: 30_000 }, 30_000), { value: true });
});
