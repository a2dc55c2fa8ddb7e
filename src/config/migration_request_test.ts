import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Double, Int32 } from 'bson';
import { MongoError } from '../base/errors.js';
import { isIdenticalMigration, migrationId, registerDonation, registerReception, type MigrationRequest } from './migration_request.js';

const base: MigrationRequest = { ns: 'db.c', min: { a: 0 }, max: { a: 10 }, fromShard: 's0', toShard: 's1' };

test('identical requests compare equal and share an id, numbers compared by value', () => {
  const same = { ...base, min: { a: new Int32(0) }, max: { a: new Double(10) } };
  assert.ok(isIdenticalMigration(base, same));
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
    assert.equal(isIdenticalMigration(base, other), false);
    assert.notEqual(migrationId(base), migrationId(other));
  });
}

test('a shard with nothing in flight starts the donation; the identical one joins it', () => {
  assert.equal(registerDonation({}, base), 'start');
  assert.equal(registerDonation({ donating: base }, { ...base }), 'join');
});

test('a different donation in flight refuses with MongoDB\'s message', () => {
  assert.throws(() => registerDonation({ donating: base }, { ...base, toShard: 's2' }), (e: unknown) =>
    e instanceof MongoError && e.code === 117 &&
    e.message === "Unable to start new balancer operation because this shard is currently donating range 'min: { a: 0 } - max: { a: 10 }' for namespace db.c to shard s1");
});

test('a shard receiving a range can neither donate nor receive another', () => {
  const receiving = { ...base, fromShard: 's2', toShard: 's0' };
  const message = 'Unable to start new balancer operation because this shard is currently receiving chunk [{ a: 0 }, { a: 10 }) for namespace db.c from s2';
  const check = (e: unknown) => e instanceof MongoError && e.code === 117 && e.message === message;
  assert.throws(() => registerDonation({ receiving }, base), check);
  assert.throws(() => registerReception({ receiving }), check);
});

test('a donating shard cannot receive; an idle one can', () => {
  assert.throws(() => registerReception({ donating: base }), (e: unknown) => e instanceof MongoError && e.code === 117 && /currently donating range/.test(e.message));
  assert.doesNotThrow(() => registerReception({}));
});
