import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, ObjectId, Timestamp, UUID, MaxKey } from 'bson';
import { deserializeDocument, serializeDocument } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { hasOrphanCounters, rangeDeletionTaskFromBSON, rangeDeletionTaskToBSON, taskTimestamp, type RangeDeletionTask } from './range_deletion_task.js';

const task: RangeDeletionTask = {
  _id: new UUID('11111111-2222-4333-8444-555555555555'),
  nss: 'db.c',
  collectionUuid: new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
  donorShardId: 's0',
  range: { min: { a: 10 }, max: { a: new MaxKey() } },
  pending: true,
  processing: false,
  whenToClean: 'delayed',
  timestamp: new Timestamp({ t: 100, i: 2 }),
  numOrphanDocs: 0,
  orphanedSizeBytes: 0,
  keyPattern: { a: 1 },
  preMigrationShardVersion: { epoch: new ObjectId('650000000000000000000001'), timestamp: new Timestamp({ t: 90, i: 1 }), major: 3, minor: 2 },
};

test('a range deletion task survives a trip through BSON bytes', () => {
  const back = rangeDeletionTaskFromBSON(deserializeDocument(serializeDocument(rangeDeletionTaskToBSON(task))));
  assert.deepEqual(back, task);
});

test('pending and processing are stored only while true, as MongoDB unsets them', () => {
  const ready = rangeDeletionTaskToBSON({ ...task, pending: false });
  assert.equal('pending' in ready, false);
  assert.equal('processing' in ready, false);
  assert.equal(rangeDeletionTaskFromBSON(ready).pending, false);
  assert.equal(rangeDeletionTaskToBSON({ ...task, pending: false, processing: true }).processing, true);
  assert.deepEqual(Object.keys(rangeDeletionTaskToBSON(task)), [
    '_id', 'nss', 'collectionUuid', 'donorShardId', 'range', 'pending', 'whenToClean', 'timestamp', 'numOrphanDocs', 'orphanedSizeBytes', 'keyPattern', 'preMigrationShardVersion',
  ]);
});

test('the pre-migration shard version is stored in the shard version shape {e, t, v}', () => {
  const raw = rangeDeletionTaskToBSON(task);
  assert.deepEqual(raw.preMigrationShardVersion, { e: new ObjectId('650000000000000000000001'), t: new Timestamp({ t: 90, i: 1 }), v: new Timestamp({ t: 3, i: 2 }) });
});

test('a task written before the orphan counters reads with none, and counters must be whole and non-negative', () => {
  const raw = rangeDeletionTaskToBSON(task);
  delete raw.numOrphanDocs;
  delete raw.orphanedSizeBytes;
  assert.equal(hasOrphanCounters(raw), false);
  assert.equal(rangeDeletionTaskFromBSON(raw).numOrphanDocs, 0);
  assert.equal(rangeDeletionTaskFromBSON({ ...raw, numOrphanDocs: new Long(12) }).numOrphanDocs, 12);
  assert.throws(() => rangeDeletionTaskFromBSON({ ...raw, numOrphanDocs: -1 }), (e: unknown) => e instanceof MongoError && e.code === 2);
  assert.throws(() => rangeDeletionTaskFromBSON({ ...raw, numOrphanDocs: 'many' }), (e: unknown) => e instanceof MongoError && e.code === 14);
});

test('task timestamps increase strictly, within a second too', () => {
  const a = taskTimestamp(5_000);
  const b = taskTimestamp(5_200);
  const c = taskTimestamp(6_000);
  assert.ok(b.greaterThan(a) && c.greaterThan(b));
});

test('whenToClean must be now or delayed', () => {
  const raw = { ...rangeDeletionTaskToBSON(task), whenToClean: 'later' };
  assert.throws(() => rangeDeletionTaskFromBSON(raw), (e: unknown) => e instanceof MongoError && e.code === 2 && /'rangeDeletionTask.whenToClean'/.test(e.message));
});

test('a task without a range or with an inverted one is refused', () => {
  const raw = rangeDeletionTaskToBSON(task);
  delete raw.range;
  assert.throws(() => rangeDeletionTaskFromBSON(raw), (e: unknown) => e instanceof MongoError && e.code === 40414);
  assert.throws(() => rangeDeletionTaskToBSON({ ...task, range: { min: { a: 5 }, max: { a: 1 } } }), (e: unknown) => e instanceof MongoError && e.code === 2);
});
