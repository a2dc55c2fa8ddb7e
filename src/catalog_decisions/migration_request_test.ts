import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Double, Int32 } from 'bson';
import { migrationId, type MigrationRequest } from './migration_request.js';

const base: MigrationRequest = { ns: 'db.c', min: { a: 0 }, max: { a: 10 }, fromShard: 's0', toShard: 's1' };

test('identical requests share an id, numbers compared by value', () => {
  const same = { ...base, min: { a: new Int32(0) }, max: { a: new Double(10) } };
  assert.equal(migrationId(base), migrationId(same));
});

const different: [string, Partial<MigrationRequest>][] = [
  ['namespace', { ns: 'db.d' }],
  ['min', { min: { a: 1 } }],
  ['max', { max: { a: 11 } }],
  ['donor', { fromShard: 's2' }],
  ['recipient', { toShard: 's2' }],
];

for (const [what, over] of different) {
  test(`requests with another ${what} differ`, () => {
    const other = { ...base, ...over };
    assert.notEqual(migrationId(base), migrationId(other));
  });
}
