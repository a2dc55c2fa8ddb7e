import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Timestamp } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { UUID } from 'bson';
import { compareDatabaseVersions, databaseVersionFromBSON, databaseVersionToBSON, type DatabaseVersion } from './database_version.js';

const ts = new Timestamp({ t: 1700000000, i: 1 });

// A database's first version, as createDatabase writes it (config/create_database.ts).
function newDatabaseVersion(timestamp: Timestamp): DatabaseVersion {
  return { uuid: new UUID(), timestamp, lastMod: 1 };
}

test('database versions order by timestamp, then lastMod', () => {
  const v = newDatabaseVersion(ts);
  assert.equal(compareDatabaseVersions(v, { ...v, lastMod: 2 }), -1);
  assert.equal(compareDatabaseVersions({ ...v, lastMod: 2 }, v), 1);
  assert.equal(compareDatabaseVersions(v, { ...v }), 0);
  const recreated = newDatabaseVersion(new Timestamp({ t: 1700000001, i: 0 }));
  assert.equal(compareDatabaseVersions({ ...v, lastMod: 9 }, recreated), -1);
});

test('a database version round-trips through BSON', () => {
  const v = newDatabaseVersion(ts);
  const bson = databaseVersionToBSON(v);
  assert.deepEqual(Object.keys(bson), ['uuid', 'timestamp', 'lastMod']);
  assert.deepEqual(databaseVersionFromBSON(bson), v);
});

test('a malformed database version is a TypeMismatch', () => {
  const uuid = new Binary(Buffer.alloc(16), 4);
  for (const raw of [null, { uuid, timestamp: ts }, { uuid: 'x', timestamp: ts, lastMod: 1 }, { uuid, timestamp: 5, lastMod: 1 }]) {
    assert.throws(() => databaseVersionFromBSON(raw), (err: unknown) => err instanceof MongoError && err.code === 14);
  }
});
