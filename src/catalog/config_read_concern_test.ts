import { it } from 'node:test';
import assert from 'node:assert/strict';
import { configReadConcern } from './config_read_concern.js';

it('reads a config server set\'s catalog at majority, a single config server\'s as it is, each within 30 s', () => {
  assert.deepEqual(configReadConcern('cfg/127.0.0.1:1,127.0.0.1:2'), { readConcern: { level: 'majority' }, maxTimeMS: 30_000 });
  assert.deepEqual(configReadConcern('127.0.0.1:1'), { maxTimeMS: 30_000 });
});
