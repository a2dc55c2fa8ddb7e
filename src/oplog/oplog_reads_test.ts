import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp } from 'bson';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { OPLOG_NS } from './oplog_entry.js';
import { oplogScanStart, seekRecordId } from './oplog_reads.js';
import { withOplog } from './oplog_test_util.js';

const ZERO = new Timestamp({ t: 0, i: 0 });
const next = (ts: Timestamp): Timestamp => new Timestamp({ t: ts.t, i: ts.i + 1 });

test('the seek finds the first entry at or after a ts in O(log n) reads, across gaps in record ids', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  const insert = (i: number): void => storage.write((unit) => { unit.insert(coll, { _id: i }); });
  for (let i = 0; i < 40; i++) insert(i);
  // Entries removed from the end leave their record ids unused: a gap once more are written.
  oplog.truncateAfter(oplog.reads.entriesFrom(ZERO)[20]!.ts as Timestamp);
  for (let i = 40; i < 100; i++) insert(i);
  const oplogColl = storage.getCollection(OPLOG_NS)!;
  const records = [...storage.scanRecords(oplogColl)].map((r) => ({ recordId: r.recordId, ts: deserializeDocument(r.bytes).ts as Timestamp }));
  assert.ok(records.some((r, i) => i > 0 && r.recordId > records[i - 1]!.recordId + 1), 'the oplog has a gap');

  const space = storage.kv.space(oplogColl.space);
  const range = space.range.bind(space);
  let reads = 0;
  space.range = (...args) => {
    reads += 1;
    return range(...args);
  };
  try {
    for (const [i, r] of records.entries()) {
      reads = 0;
      assert.equal(seekRecordId(storage, oplogColl, r.ts), r.recordId);
      assert.ok(reads <= 2 + Math.ceil(Math.log2(records.at(-1)!.recordId + 1)), `${reads} reads`);
      // A time between two entries seeks to the later one.
      if (i > 0 && !next(records[i - 1]!.ts).equals(r.ts)) assert.equal(seekRecordId(storage, oplogColl, next(records[i - 1]!.ts)), r.recordId);
    }
  } finally {
    space.range = range;
  }
  assert.equal(seekRecordId(storage, oplogColl, ZERO), records[0]!.recordId);
  assert.equal(seekRecordId(storage, oplogColl, next(records.at(-1)!.ts)), oplogColl.nextRecordId, 'past the last entry: where the next one goes');
  assert.equal(oplogScanStart(storage, oplogColl, { ts: { $gt: records[5]!.ts } }), records[5]!.recordId);
  assert.equal(oplogScanStart(storage, oplogColl, { ts: 1 }), undefined);
  assert.equal(oplogScanStart(storage, coll, { ts: { $gte: ZERO } }), undefined);
}));

test('the last entry, the entry at a ts and the entries from a ts', withOplog({}, (storage, oplog) => {
  assert.equal(oplog.reads.lastEntry(), undefined);
  assert.equal(oplog.reads.lastOpTime(), undefined);
  const coll = storage.createCollection('app.c');
  for (let i = 0; i < 5; i++) storage.write((unit) => { unit.insert(coll, { _id: i }); });
  const all = oplog.reads.entriesFrom(ZERO);
  assert.equal(all.length, 6);
  assert.deepEqual(oplog.reads.lastEntry(), all[5]);
  assert.deepEqual(oplog.reads.lastOpTime(), { ts: all[5]!.ts, t: 1 });
  assert.deepEqual(oplog.reads.entryAt(all[3]!.ts as Timestamp), all[3]);
  assert.equal(oplog.reads.entryAt(next(all[5]!.ts as Timestamp)), undefined);
  assert.deepEqual(oplog.reads.entriesFrom(all[2]!.ts as Timestamp, 2), all.slice(2, 4));
  assert.deepEqual(oplog.reads.entriesFrom(all[2]!.ts as Timestamp), all.slice(2));
}));

test('truncateAfter removes the entries after a ts and returns them newest first; the next entry follows', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  for (let i = 0; i < 5; i++) storage.write((unit) => { unit.insert(coll, { _id: i }); });
  const all = oplog.reads.entriesFrom(ZERO);
  assert.deepEqual(oplog.truncateAfter(all[3]!.ts as Timestamp), [all[5], all[4]]);
  assert.deepEqual(oplog.reads.entriesFrom(ZERO), all.slice(0, 4));
  assert.deepEqual(oplog.truncateAfter(all[3]!.ts as Timestamp), []);
  storage.write((unit) => { unit.insert(coll, { _id: 'later' }); });
  assert.deepEqual((oplog.reads.lastEntry()!.o as Doc)._id, 'later');
  assert.equal(oplog.reads.entriesFrom(ZERO).length, 5);
}));

test('appendNoop writes {op: \'n\', ns: \'\', o} at the ts and term given, and moves the clock past it', withOplog({}, (_storage, oplog, clock) => {
  const ts = new Timestamp({ t: Math.floor(Date.now() / 1000) + 5, i: 1 });
  oplog.appendNoop({ msg: 'new primary' }, ts, 7);
  const { wall, ...rest } = oplog.reads.lastEntry()!;
  assert.ok(wall instanceof Date);
  assert.deepEqual({ ...rest, t: Number(rest.t), v: Number(rest.v) }, { op: 'n', ns: '', o: { msg: 'new primary' }, ts, t: 7, v: 2 });
  assert.ok(clock.now().greaterThanOrEqual(ts));
  assert.ok(clock.tick().greaterThan(ts));
}));
