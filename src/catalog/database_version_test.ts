import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Timestamp } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { compareDatabaseVersions, databaseVersionFromBSON, databaseVersionToBSON, newDatabaseVersion } from './database_version.js';

const ts = new Timestamp({ t: 1700000000, i: 1 });

test('a new database version has a fresh uuid and lastMod 1', () => {
  const a = newDatabaseVersion(ts);
  const b = newDatabaseVersion(ts);
  assert.equal(a.lastMod, 1);
  assert.ok(a.timestamp.equals(ts));
  assert.equal(a.uuid.sub_type, 4);
  assert.notDeepEqual(Buffer.from(a.uuid.buffer), Buffer.from(b.uuid.buffer));
});

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
