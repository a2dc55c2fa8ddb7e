import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp, UUID } from 'bson';
import { MaxKey, deserializeDocument, serializeDocument } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { rangeDeletionTaskFromBSON, rangeDeletionTaskToBSON, type RangeDeletionTask } from './range_deletion_task.js';

const task: RangeDeletionTask = {
  _id: new UUID('11111111-2222-4333-8444-555555555555'),
  nss: 'db.c',
  collectionUuid: new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'),
  donorShardId: 's0',
  range: { min: { a: 10 }, max: { a: new MaxKey() } },
  pending: true,
  whenToClean: 'delayed',
  timestamp: new Timestamp({ t: 100, i: 2 }),
};

test('a range deletion task survives a trip through BSON bytes', () => {
  const back = rangeDeletionTaskFromBSON(deserializeDocument(serializeDocument(rangeDeletionTaskToBSON(task))));
  assert.deepEqual(back, task);
});

test('pending is stored only while true, as MongoDB unsets it to make a task ready', () => {
  const ready = rangeDeletionTaskToBSON({ ...task, pending: false });
  assert.equal('pending' in ready, false);
  assert.equal(rangeDeletionTaskFromBSON(ready).pending, false);
  assert.deepEqual(Object.keys(rangeDeletionTaskToBSON(task)), ['_id', 'nss', 'collectionUuid', 'donorShardId', 'range', 'pending', 'whenToClean', 'timestamp']);
});

test('the task is not strict: fields a newer version adds are ignored', () => {
  const raw = { ...rangeDeletionTaskToBSON(task), processing: true, numOrphanDocs: 12 };
  assert.deepEqual(rangeDeletionTaskFromBSON(raw), task);
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
