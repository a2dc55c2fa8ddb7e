import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { compareValues } from '../bson/compare.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { TestClock, withOplog } from '../oplog/oplog_test_util.js';
import { enableOplog, type ReplicatedOplog } from '../oplog/replicated_oplog.js';
import type { SourceMetadata } from '../repl/messages.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { equalities } from '../storage/test_support.js';
import { FetchedEntries, translateBatch } from './fetched_entries.js';
import { parseOpTime } from './op_time_bson.js';

const ZERO = new Timestamp({ t: 0, i: 0 });
const METADATA: SourceMetadata = { term: 1, lastOpCommitted: { ts: 0, t: -1 }, lastOpApplied: { ts: 0, t: -1 }, isPrimary: true };

function userData(storage: StorageEngine): Doc[] {
  return storage.listCollections().filter((c) => !c.ns.startsWith('local.')).sort((a, b) => a.ns.localeCompare(b.ns)).map((c) => ({
    ns: c.ns,
    uuid: c.entry.uuid.toString('hex'),
    indexes: c.indexes.map((i) => i.name),
    docs: [...storage.scanRecords(c)].map((r) => deserializeDocument(r.bytes)).sort((x, y) => compareValues(x._id, y._id)),
  }));
}

// A secondary's engine: its oplog enabled as on a member that is not primary (every write of its
// own refused), which the applier's writes are not.
async function withSecondary(fn: (storage: StorageEngine, oplog: ReplicatedOplog) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-fetched-'));
  const clock = new TestClock();
  const storage = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
  const oplog = enableOplog(storage, { term: () => 1, checkCanWrite: () => { throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary'); }, clock });
  try {
    await fn(storage, oplog);
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The source's writes: a first entry both members hold, then a collection, an index, inserts, an
// $inc's result and a delete.
function writeOnSource(storage: StorageEngine, oplog: ReplicatedOplog, clock: TestClock): Doc[] {
  oplog.appendNoop({ msg: 'initiating set' }, clock.tick(), -1);
  const coll = storage.createCollection('app.c');
  storage.createIndexes(coll, [{ v: 2, key: { n: 1 }, name: 'n_1' }]);
  storage.write((unit) => {
    unit.insert(coll, { _id: 1, n: 0 });
    unit.insert(coll, { _id: 2, n: 10 });
  });
  storage.write((unit) => unit.insert(coll, { _id: 3, n: 20 }));
  storage.write((unit) => unit.upsertBytes(coll, serializeDocument({ _id: 1, n: 5 })));
  storage.write((unit) => unit.removeById(coll, 3));
  return oplog.reads.entriesFrom(ZERO);
}

describe('the oplog fetcher\'s batches', () => {
  it('a find\'s first batch starts at our last entry, which is not applied again; getMore batches are applied whole', withOplog({}, async (source, sourceOplog, clock) => {
    const entries = writeOnSource(source, sourceOplog, clock);
    await withSecondary(async (storage, oplog) => {
      oplog.appendNoop({ msg: 'initiating set' }, entries[0]!.ts as Timestamp, -1);
      const fetched = new FetchedEntries();
      const lastFetched = parseOpTime(entries[0]);
      const first = translateBatch(entries.slice(0, 3), lastFetched, true, METADATA);
      assert.ok(first.ok);
      assert.equal(first.response.status, 'ok');
      assert.deepEqual(first.response.entries.map((e) => [e.ts, e.t]), entries.slice(1, 3).map((e) => { const o = parseOpTime(e); return [o.ts, o.t]; }));
      const docs = fetched.during(first.full, () => fetched.take(first.response.entries));
      assert.ok(docs.every((d) => d !== undefined), 'the core\'s entries are the fetched ones');
      await oplog.applyOplogEntriesGrouped(docs);

      const more = translateBatch(entries.slice(3), parseOpTime(entries[2]), false, METADATA);
      assert.ok(more.ok);
      assert.equal(more.response.entries.length, entries.length - 3);
      await oplog.applyOplogEntriesGrouped(fetched.during(more.full, () => fetched.take(more.response.entries)));

      assert.deepEqual(userData(storage), userData(source));
      assert.deepEqual(userData(storage)[0]!.docs, [{ _id: 1, n: 5 }, { _id: 2, n: 10 }]);
      assert.deepEqual(oplog.reads.entriesFrom(ZERO).map((e) => e.ts), entries.map((e) => e.ts), 'the secondary\'s oplog holds the source\'s entries');
    });
  }));

  // Two answers read from the network each wait for their step in a promise: the first to be
  // taken in must find its own entries, not the other's (which had replaced them, and the first
  // answer's writes were then appended as no-ops).
  it('an answer\'s full entries are at hand only in the step that takes it in, whichever answer arrived last', withOplog({}, (source, sourceOplog, clock) => {
    const entries = writeOnSource(source, sourceOplog, clock);
    const fetched = new FetchedEntries();
    const a = translateBatch(entries.slice(0, 3), parseOpTime(entries[0]), true, METADATA);
    const b = translateBatch(entries.slice(3), parseOpTime(entries[2]), false, METADATA);
    assert.ok(a.ok && b.ok);
    const takenA = fetched.during(a.full, () => fetched.take(a.response.entries));
    assert.deepEqual(takenA, entries.slice(1, 3));
    assert.ok(!fetched.handingOver);
    assert.deepEqual(fetched.take(b.response.entries), b.response.entries.map(() => undefined), 'nothing outside a step');
    const takenB = fetched.during(b.full, () => fetched.take(b.response.entries));
    assert.deepEqual(takenB, entries.slice(3));
  }));

  it('a first batch that does not start at our last entry is OplogStartMissing, with nothing to apply', withOplog({}, async (source, sourceOplog, clock) => {
    const entries = writeOnSource(source, sourceOplog, clock);
    const ours = { ts: parseOpTime(entries[1]).ts + 1, t: 0 };
    const out = translateBatch(entries.slice(2), ours, true, METADATA);
    assert.ok(out.ok);
    assert.equal(out.response.status, 'OplogStartMissing');
    assert.deepEqual(out.response.entries, []);
    assert.deepEqual(out.full, []);
    const empty = translateBatch([], ours, true, METADATA);
    assert.ok(empty.ok && empty.response.status === 'OplogStartMissing', 'nor does an empty oplog hold it');
  }));

  it('a malformed entry refuses its whole batch: nothing of it is kept or applied', withOplog({}, async (source, sourceOplog, clock) => {
    const entries = writeOnSource(source, sourceOplog, clock);
    await withSecondary(async (storage, oplog) => {
      oplog.appendNoop({ msg: 'initiating set' }, entries[0]!.ts as Timestamp, -1);
      const { o: _dropped, ...noDocument } = entries[4]!;
      const bad = [...entries.slice(0, 4), noDocument, ...entries.slice(5)];
      const out = translateBatch(bad, parseOpTime(entries[0]), true, METADATA);
      assert.equal(out.ok, false);
      assert.ok(!out.ok && /malformed oplog entry.*'o' must be a document/.test(out.error.message), out.ok ? '' : out.error.message);
      assert.deepEqual(userData(storage), []);
      assert.equal(oplog.reads.entriesFrom(ZERO).length, 1);
    });
  }));
});
