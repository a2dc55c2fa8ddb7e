import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOrder } from './run_order.js';

test('the slow files start first, then the integration tests, then the unit tests, each tier in the order given', () => {
  const given = [
    'src/a/x_test.ts',
    'src/a/y_slow_test.ts',
    'test/integration/b_test.ts',
    'test/integration/a_slow_test.ts',
    'test/lint/c_test.ts',
    'test/integration/a_test.ts',
    'test/sim/cluster/z_slow_test.ts',
  ];
  assert.deepEqual(runOrder(given), [
    'src/a/y_slow_test.ts',
    'test/integration/a_slow_test.ts',
    'test/sim/cluster/z_slow_test.ts',
    'test/integration/b_test.ts',
    'test/integration/a_test.ts',
    'src/a/x_test.ts',
    'test/lint/c_test.ts',
  ]);
});
