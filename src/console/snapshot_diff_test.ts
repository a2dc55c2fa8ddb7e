import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedPanels } from './snapshot_diff.js';

test('a page is sent each panel once, then only the panels that changed', () => {
  const sent = new Map<string, string>();
  assert.deepEqual(changedPanels(sent, { a: 1, b: { x: 2 } }).map((p) => p.panel), ['a', 'b']);
  assert.deepEqual(changedPanels(sent, { a: 1, b: { x: 3 } }), [{ panel: 'b', json: '{"x":3}' }]);
  assert.deepEqual(changedPanels(sent, { a: 1, b: { x: 3 } }), []);
});
