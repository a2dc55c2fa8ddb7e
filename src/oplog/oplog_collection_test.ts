import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { OPLOG_NS } from './oplog_entry.js';
import { withOplog } from './oplog_test_util.js';

const ZERO = new Timestamp({ t: 0, i: 0 });

test('local.oplog.rs is capped at --oplogSize, without an _id index', withOplog({ oplogSizeMB: 2 }, (storage) => {
  const coll = storage.getCollection(OPLOG_NS)!;
  assert.deepEqual(coll.entry.options, { capped: true, size: 2 * 1024 * 1024, autoIndexId: false });
  assert.deepEqual(coll.indexes, []);
}));

// About 10 KB of oplog, entries of about 1 KB.
test('capping removes only entries at or before the truncate bound, and exceeds the cap rather than remove newer ones', withOplog({ oplogSizeMB: 0.01 }, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  const insert = (i: number): void => storage.write((unit) => { unit.insert(coll, { _id: i, pad: 'x'.repeat(1000) }); });
  const oplogBytes = (): number => storage.stats.get(storage.getCollection(OPLOG_NS)!.entry.id).size;
  for (let i = 0; i < 30; i++) insert(i);
  // No bound yet: nothing may go.
  let entries = oplog.reads.entriesFrom(ZERO);
  assert.equal(entries.length, 31);
  assert.ok(oplogBytes() > 3 * 10240);

  const bound = entries[20]!.ts as Timestamp;
  oplog.setTruncateBound(bound);
  insert(30);
  entries = oplog.reads.entriesFrom(ZERO);
  assert.ok((entries[0]!.ts as Timestamp).greaterThan(bound), 'every entry up to the bound went');
  assert.equal(entries.length, 11, 'no entry after the bound went, although the oplog is over its size');
  assert.ok(oplogBytes() > 10240);

  oplog.setTruncateBound(entries.at(-1)!.ts as Timestamp);
  insert(31);
  assert.ok(oplogBytes() <= 10240);
  assert.deepEqual((oplog.reads.lastEntry()!.o as Doc)._id, 31);
}));
