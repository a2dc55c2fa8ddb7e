import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FailPoints } from './fail_points.js';

function fires(points: FailPoints, name: string, entries: number, applies?: (data: Readonly<Record<string, unknown>>) => boolean): boolean[] {
  return Array.from({ length: entries }, () => points.shouldFire(name, applies) !== undefined);
}

test('alwaysOn fires at every entry with its data, off at none', () => {
  const points = new FailPoints();
  assert.deepEqual(fires(points, 'fp', 2), [false, false], 'a fail point never configured is off');
  points.configure('fp', 'alwaysOn', { x: 1 });
  assert.deepEqual(points.shouldFire('fp'), { x: 1 });
  assert.deepEqual(fires(points, 'fp', 3), [true, true, true]);
  points.configure('fp', 'off');
  assert.deepEqual(fires(points, 'fp', 2), [false, false]);
});

test('{times: n} fires at the next n entries, then turns itself off', () => {
  const points = new FailPoints();
  points.configure('fp', { times: 2 });
  assert.deepEqual(fires(points, 'fp', 4), [true, true, false, false]);
  assert.equal(points.isEnabled('fp'), false);
  points.configure('fp', { times: 0 });
  assert.deepEqual(fires(points, 'fp', 1), [false]);
});

test('{skip: n} lets the next n entries pass, then fires at every one after', () => {
  const points = new FailPoints();
  points.configure('fp', { skip: 2 });
  assert.deepEqual(fires(points, 'fp', 5), [false, false, true, true, true]);
  assert.equal(points.timesEntered('fp'), 3, 'skipped entries are not counted as entered');
  points.configure('fp', { skip: 0 });
  assert.deepEqual(fires(points, 'fp', 1), [true]);
});

test('an entry the condition turns away uses up none of the times or skips, and is not counted', () => {
  const points = new FailPoints();
  const onlyInserts = (name: string) => (data: Readonly<Record<string, unknown>>) => data.command === name;
  points.configure('fp', { times: 1 }, { command: 'insert' });
  assert.deepEqual(fires(points, 'fp', 3, onlyInserts('find')), [false, false, false]);
  assert.equal(points.timesEntered('fp'), 0);
  assert.deepEqual(fires(points, 'fp', 2, onlyInserts('insert')), [true, false]);
  points.configure('fp', { skip: 1 }, { command: 'insert' });
  assert.deepEqual(fires(points, 'fp', 2, onlyInserts('find')), [false, false]);
  assert.deepEqual(fires(points, 'fp', 2, onlyInserts('insert')), [false, true]);
});

test('configure answers how many times the fail point was entered before, across modes', () => {
  const points = new FailPoints();
  assert.deepEqual(points.configure('fp', 'alwaysOn'), { count: 0 });
  fires(points, 'fp', 3);
  assert.deepEqual(points.configure('fp', { skip: 1 }), { count: 3 });
  fires(points, 'fp', 2);
  assert.deepEqual(points.configure('fp', 'off'), { count: 4 });
});
