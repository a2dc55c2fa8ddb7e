import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { MinKey, deserializeDocument, serializeDocument } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { chunkVersion } from '../catalog/chunk_version.js';
import {
  migrationCoordinatorDocumentFromBSON,
  migrationCoordinatorDocumentToBSON,
  type MigrationCoordinatorDocument,
} from './migration_coordinator_document.js';

const doc: MigrationCoordinatorDocument = {
  _id: new UUID('11111111-2222-4333-8444-555555555555'),
  nss: 'db.c',
  collectionUuid: new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
  donorShardId: 's0',
  recipientShardId: 's1',
  range: { min: { a: new MinKey() }, max: { a: 10 } },
  preMigrationChunkVersion: chunkVersion(new ObjectId('65a000000000000000000001'), new Timestamp({ t: 50, i: 0 }), 3, 1),
};

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

function roundTrip(d: MigrationCoordinatorDocument): MigrationCoordinatorDocument {
  return migrationCoordinatorDocumentFromBSON(deserializeDocument(serializeDocument(migrationCoordinatorDocumentToBSON(d))));
}

test('a coordinator document survives a trip through BSON bytes', () => {
  assert.deepEqual(roundTrip(doc), doc);
  const decided = { ...doc, decision: 'committed' as const, lsid: { id: new UUID() }, txnNumber: Long.fromNumber(7) };
  assert.deepEqual(roundTrip(decided), decided);
});

test('the fields are written in the order of MongoDB\'s IDL, decision last and only once known', () => {
  assert.deepEqual(Object.keys(migrationCoordinatorDocumentToBSON(doc)), ['_id', 'nss', 'collectionUuid', 'donorShardId', 'recipientShardId', 'range', 'preMigrationChunkVersion']);
  assert.equal(migrationCoordinatorDocumentToBSON({ ...doc, decision: 'aborted' }).decision, 'aborted');
});

test('the pre-migration chunk version is stored as {e, t, v}', () => {
  const v = migrationCoordinatorDocumentToBSON(doc).preMigrationChunkVersion as Record<string, unknown>;
  assert.deepEqual(Object.keys(v), ['e', 't', 'v']);
});

test('a missing field is IDL error 40414 naming the struct and the field', () => {
  const raw = migrationCoordinatorDocumentToBSON(doc);
  delete raw.recipientShardId;
  assert.throws(() => migrationCoordinatorDocumentFromBSON(raw), code(40414, /^BSON field 'migrationCoordinatorDocument.recipientShardId' is missing but a required field$/));
});

test('a field of the wrong type is TypeMismatch', () => {
  const raw = { ...migrationCoordinatorDocumentToBSON(doc), _id: 'not a uuid' };
  assert.throws(() => migrationCoordinatorDocumentFromBSON(raw), code(14, /'migrationCoordinatorDocument._id' is the wrong type 'string', expected type 'uuid'/));
});

test('the document is strict: an unknown field is IDL error 40415', () => {
  const raw = { ...migrationCoordinatorDocumentToBSON(doc), extra: 1 };
  assert.throws(() => migrationCoordinatorDocumentFromBSON(raw), code(40415, /'migrationCoordinatorDocument.extra' is an unknown field/));
});

test('a decision other than committed or aborted is BadValue', () => {
  const raw = { ...migrationCoordinatorDocumentToBSON(doc), decision: 'maybe' };
  assert.throws(() => migrationCoordinatorDocumentFromBSON(raw), code(2, /Enumeration value 'maybe' for field 'migrationCoordinatorDocument.decision'/));
});

test('nothing invalid is written: same shards, empty range, half a session', () => {
  assert.throws(() => migrationCoordinatorDocumentToBSON({ ...doc, recipientShardId: 's0' }), code(2, /cannot be the same as source shard s0/));
  assert.throws(() => migrationCoordinatorDocumentToBSON({ ...doc, range: { min: { a: 10 }, max: { a: 10 } } }), code(2, /max is not greater than min/));
  assert.throws(() => migrationCoordinatorDocumentToBSON({ ...doc, range: { min: { a: 1 }, max: { b: new MaxKey() } } }), code(2, /don't have matching keys/));
  assert.throws(() => migrationCoordinatorDocumentToBSON({ ...doc, lsid: { id: new UUID() } }), code(2, /both lsid and txnNumber/));
  assert.throws(() => migrationCoordinatorDocumentToBSON({ ...doc, nss: 'nodot' }), code(73));
});
