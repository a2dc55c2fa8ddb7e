import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId } from 'bson';
import { changeLogEntry } from './changelog.js';

test('a changelog entry has MongoDB fields in order and an id of server, time and ObjectId', () => {
  const time = new Date('2024-02-03T04:05:06.789Z');
  const id = new ObjectId('65a0000000000000000000aa');
  const entry = changeLogEntry({ server: 'cfg:27019', clientAddr: '10.0.0.1:4000', time, newId: () => id }, 'config', 'split', 'db.c', { x: 1 });
  assert.deepEqual(Object.keys(entry), ['_id', 'server', 'shard', 'clientAddr', 'time', 'what', 'ns', 'details']);
  assert.equal(entry._id, 'cfg:27019-2024-02-03T04:05:06.789+00:00-65a0000000000000000000aa');
  assert.equal(entry.time, time);
  assert.deepEqual(entry.details, { x: 1 });
});
