import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp, UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import type { DatabaseType } from '../catalog/type_chunk.js';
import { decideCreateDatabase, isValidDbName, type CreateDatabaseRequest } from './create_database.js';

const now = new Timestamp({ t: 100, i: 1 });
const newUuid = new UUID('11111111-2222-3333-4444-555555555555');
const shards = [{ id: 's2', dataSizeBytes: 10 }, { id: 's1', dataSizeBytes: 30 }, { id: 's0', dataSizeBytes: 10 }];

function request(over: Partial<CreateDatabaseRequest>): CreateDatabaseRequest {
  return { name: 'test', existing: undefined, shards, now, newUuid, ...over };
}

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

function existingDb(name: string, primary = 's1'): DatabaseType {
  return { _id: name, primary, version: { uuid: newUuid, timestamp: new Timestamp({ t: 5, i: 0 }), lastMod: 1 } };
}

test('a new database goes to the shard with the least data, ties broken by shard id', () => {
  const { database, created } = decideCreateDatabase(request({}));
  assert.equal(created, true);
  assert.deepEqual(database, { _id: 'test', primary: 's0', version: { uuid: newUuid, timestamp: now, lastMod: 1 } });
});

test('a requested primary shard is used as given', () => {
  assert.equal(decideCreateDatabase(request({ primaryShard: 's1' })).database.primary, 's1');
});

test('an unknown primary shard is ShardNotFound and an empty one BadValue', () => {
  assert.throws(() => decideCreateDatabase(request({ primaryShard: 'nope' })), code(70, /^Shard nope not found$/));
  assert.throws(() => decideCreateDatabase(request({ primaryShard: '' })), code(2));
});

test('a cluster without shards cannot create databases', () => {
  assert.throws(() => decideCreateDatabase(request({ shards: [] })), code(70, /No shards found/));
});

test('an existing database is returned unchanged', () => {
  const existing = existingDb('test');
  assert.deepEqual(decideCreateDatabase(request({ existing })), { database: existing, created: false });
  assert.deepEqual(decideCreateDatabase(request({ existing, primaryShard: 's1' })), { database: existing, created: false });
});

test('an existing database on another primary than the requested one is NamespaceExists', () => {
  assert.throws(() => decideCreateDatabase(request({ existing: existingDb('test'), primaryShard: 's0' })), code(48, /different from s0/));
});

test('a name differing only in case from an existing database is DatabaseDifferCase', () => {
  assert.throws(() => decideCreateDatabase(request({ existing: existingDb('Test') })), code(13297, /have: Test want to add: test/));
  assert.throws(() => decideCreateDatabase(request({ allDatabases: [existingDb('other'), existingDb('TEST')] })), code(13297));
});

test('admin and local, in any case, and config in another case cannot be created', () => {
  for (const name of ['admin', 'ADMIN', 'local', 'Local', 'Config']) {
    assert.throws(() => decideCreateDatabase(request({ name })), code(72, new RegExp(`^Cannot manually create database'${name}'$`)), name);
  }
});

test('config is the config server database and is never created', () => {
  const { database, created } = decideCreateDatabase(request({ name: 'config' }));
  assert.equal(created, false);
  assert.equal(database.primary, 'config');
  assert.equal(database.version.lastMod, 0);
});

test('invalid database names are InvalidNamespace', () => {
  for (const name of ['', 'a.b', 'a b', 'a/b', 'a\\b', 'a"b', 'a\0b', 'x'.repeat(64)]) {
    assert.throws(() => decideCreateDatabase(request({ name })), code(73, /^Invalid db name specified: /), JSON.stringify(name));
  }
});

test('database names may hold a dollar and up to 63 bytes', () => {
  assert.equal(isValidDbName('a$b'), true);
  assert.equal(isValidDbName('x'.repeat(63)), true);
  assert.equal(isValidDbName('é'.repeat(32)), false);
});

test('a draining shard is not chosen for a new database unless it is named or every shard drains', () => {
  const draining = [{ id: 's0', dataSizeBytes: 0, draining: true }, { id: 's1', dataSizeBytes: 50 }, { id: 's2', dataSizeBytes: 40 }];
  assert.equal(decideCreateDatabase(request({ shards: draining })).database.primary, 's2');
  assert.equal(decideCreateDatabase(request({ shards: draining, primaryShard: 's0' })).database.primary, 's0');
  const allDraining = draining.map((s) => ({ ...s, draining: true }));
  assert.equal(decideCreateDatabase(request({ shards: allDraining })).database.primary, 's0');
});
