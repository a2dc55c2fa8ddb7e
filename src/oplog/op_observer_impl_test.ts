import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { withClockedEngine } from '../storage/test_support.js';
import { OPLOG_NS } from './oplog_entry.js';
import { withOplog } from './oplog_test_util.js';

const ZERO = new Timestamp({ t: 0, i: 0 });
const opsOf = (entries: Doc[]): string[] => entries.map((e) => (e.op === 'c' ? Object.keys(e.o as Doc)[0]! : String(e.op)));

test('an engine whose oplog is not enabled writes none', withClockedEngine((storage) => {
  const coll = storage.createCollection('app.c');
  storage.write((unit) => unit.insert(coll, { _id: 1 }));
  assert.equal(storage.unitObserver, undefined);
  assert.equal(storage.getCollection(OPLOG_NS), undefined);
}));

test('an insert that creates its collection logs the create, then the insert, each at its own time', withOplog({}, (storage, oplog) => {
  storage.write((unit) => unit.insert(storage.ensureCollection('app.c').coll, { _id: 1 }));
  const entries = oplog.reads.entriesFrom(ZERO);
  assert.deepEqual(opsOf(entries), ['create', 'i']);
  assert.ok((entries[1]!.ts as Timestamp).greaterThan(entries[0]!.ts as Timestamp));
  assert.deepEqual(entries[1]!.o, { _id: 1 });
  assert.equal(entries[0]!.ns, 'app.$cmd');
  assert.deepEqual(entries[0]!.ui, storage.getCollection('app.c')!.entry.uuid);
}));

test('a collection created inside a unit that has its time already goes into that unit\'s applyOps', withOplog({}, (storage, oplog) => {
  const a = storage.createCollection('app.a');
  const before = oplog.reads.entriesFrom(ZERO).length;
  const ts = storage.write((unit) => {
    unit.insert(a, { _id: 1 });
    unit.insert(storage.ensureCollection('app.b').coll, { _id: 2 });
    return unit.timestamp!;
  });
  const [entry, ...rest] = oplog.reads.entriesFrom(ZERO).slice(before);
  assert.equal(rest.length, 0);
  assert.ok((entry!.ts as Timestamp).equals(ts));
  assert.deepEqual(((entry!.o as Doc).applyOps as Doc[]).map((op) => op.op === 'c' ? 'create' : op.op), ['i', 'create', 'i']);
}));

// A prepared transaction's commit at the time its coordinator chose, after entries with later times.
test('a unit committed at a time the oplog is already past logs its entry after the newest one, naming its commitTimestamp', withOplog({}, (storage, oplog, clock) => {
  const coll = storage.createCollection('app.c');
  const chosen = clock.tick();
  storage.write((unit) => unit.insert(coll, { _id: 1 }));
  storage.write((unit) => {
    unit.commitAt(chosen);
    unit.insert(coll, { _id: 2 });
  });
  const entries = oplog.reads.entriesFrom(ZERO);
  assert.deepEqual(entries.slice(-2).map((e) => e.o), [{ _id: 1 }, { _id: 2 }]);
  entries.slice(1).forEach((e, i) => assert.ok((e.ts as Timestamp).greaterThan(entries[i]!.ts as Timestamp), `entry ${i + 1} is after the one before it`));
  assert.ok((entries.at(-1)!.commitTimestamp as Timestamp).equals(chosen), 'a secondary commits its writes where this node did');
  assert.equal(entries.at(-2)!.commitTimestamp, undefined);
}));

test('nothing in the local database is logged', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('local.mine');
  storage.write((unit) => unit.insert(coll, { _id: 1 }));
  storage.dropCollection('local.mine');
  assert.deepEqual(oplog.reads.entriesFrom(ZERO), []);
}));

let writable = true;
const notPrimary = (): void => {
  if (!writable) throw new MongoError(ErrorCodes.NotWritablePrimary, 'not primary');
};

test('a unit whose entry checkCanWrite refuses commits nothing', withOplog({ checkCanWrite: notPrimary }, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  writable = false;
  try {
    assert.throws(() => storage.write((unit) => unit.insert(coll, { _id: 1 })), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.NotWritablePrimary);
    assert.throws(() => storage.createCollection('app.d'), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.NotWritablePrimary);
    assert.equal(storage.stats.get(coll.entry.id).count, 0);
    assert.equal(storage.getCollection('app.d'), undefined);
    assert.deepEqual(opsOf(oplog.reads.entriesFrom(ZERO)), ['create']);
    // A unit that changes nothing produces no entry and is not refused.
    assert.equal(storage.write(() => 'read only'), 'read only');
  } finally {
    writable = true;
  }
}));

test('catalog changes take a commit time and log MongoDB\'s command entries', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c', { validator: { a: 1 } });
  storage.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1' }, { v: 2, key: { b: 1 }, name: 'b_1' }]);
  storage.replaceIndexSpec(coll, 'a_1', { v: 2, key: { a: 1 }, name: 'a_1', hidden: true });
  storage.setCollectionOptions(coll, { validator: { a: 2 } });
  storage.dropIndex(coll, 'b_1');
  storage.renameCollection('app.c', 'app.d');
  storage.dropDatabase('app');
  const entries = oplog.reads.entriesFrom(ZERO);
  const ui = coll.entry.uuid;
  assert.deepEqual(entries.map(({ op, ns, ui: u, o, o2 }) => ({ op, ns, ...(u === undefined ? {} : { ui: u }), o, ...(o2 === undefined ? {} : { o2 }) })), [
    { op: 'c', ns: 'app.$cmd', ui, o: { create: 'c', validator: { a: 1 }, idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } } },
    { op: 'c', ns: 'app.$cmd', ui, o: { createIndexes: 'c', v: 2, key: { a: 1 }, name: 'a_1' } },
    { op: 'c', ns: 'app.$cmd', ui, o: { createIndexes: 'c', v: 2, key: { b: 1 }, name: 'b_1' } },
    { op: 'c', ns: 'app.$cmd', ui, o: { collMod: 'c', index: { name: 'a_1', hidden: true } } },
    { op: 'c', ns: 'app.$cmd', ui, o: { collMod: 'c', validator: { a: 2 } }, o2: { collectionOptions_old: { validator: { a: 1 } } } },
    { op: 'c', ns: 'app.$cmd', ui, o: { dropIndexes: 'c', index: 'b_1' }, o2: { v: 2, key: { b: 1 }, name: 'b_1' } },
    { op: 'c', ns: 'app.$cmd', ui, o: { renameCollection: 'app.c', to: 'app.d', stayTemp: false, dropTarget: false } },
    { op: 'c', ns: 'app.$cmd', ui, o: { drop: 'd' }, o2: { numRecords: 0 } },
    { op: 'c', ns: 'app.$cmd', o: { dropDatabase: 1 } },
  ]);
  for (let i = 1; i < entries.length; i++) assert.ok((entries[i]!.ts as Timestamp).greaterThan(entries[i - 1]!.ts as Timestamp));
}));

test('an update is logged with its post-image and what it changed; a replacement without the description', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  storage.write((unit) => unit.insert(coll, { _id: 1, a: 1, b: { c: 1, d: 2 }, arr: [1, 2, 3] }));
  const at = (): { recordId: number; doc: Doc; size: number } => {
    const found = coll.findById(storage.kv, 1)!;
    return { recordId: found.recordId, doc: deserializeDocument(found.bytes), size: found.bytes.length };
  };
  let t = at();
  storage.write((unit) => unit.update(coll, t.recordId, t.doc, t.size, { _id: 1, a: 2, b: { c: 1 }, arr: [1, 5], e: 'new' }));
  t = at();
  storage.write((unit) => unit.update(coll, t.recordId, t.doc, t.size, { _id: 1, z: 1 }, undefined, { replacement: true }));
  const [update, replacement] = oplog.reads.entriesFrom(ZERO).slice(-2);
  assert.deepEqual(update!.o, { _id: 1, a: 2, b: { c: 1 }, arr: [1, 5], e: 'new' });
  assert.deepEqual(update!.o2, { _id: 1 });
  assert.deepEqual(update!.updateDescription, { updatedFields: { a: 2, 'arr.1': 5, e: 'new' }, removedFields: ['b.d'], truncatedArrays: [{ field: 'arr', newSize: 2 }] });
  assert.deepEqual(replacement!.o, { _id: 1, z: 1 });
  assert.equal(replacement!.updateDescription, undefined);
}));

test('a replacement from bytes (a transaction\'s commit) is described from the whole document before', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  storage.write((unit) => unit.insert(coll, { _id: 1, a: 1, keep: 'x' }));
  storage.write((unit) => unit.upsertBytes(coll, serializeDocument({ _id: 1, a: 2, keep: 'x' })));
  const [entry] = oplog.reads.entriesFrom(ZERO).slice(-1);
  assert.deepEqual(entry!.updateDescription, { updatedFields: { a: 2 }, removedFields: [], truncatedArrays: [] });
}));

// The session catalog puts a session's record from its bytes by its _id: the entry of a retryable write's unit
// that continues the record's txnNumber still chains to the record's last write.
test('a session record replaced from bytes gives the unit\'s entry the record\'s lastWriteOpTime as prevOpTime', withOplog({}, (storage, oplog) => {
  const records = storage.createCollection('config.transactions');
  const app = storage.createCollection('app.c');
  const lsid = { id: 'session' };
  const last = { ts: new Timestamp({ t: 7, i: 3 }), t: Long.fromNumber(-1) };
  storage.write((unit) => unit.insert(records, { _id: lsid, txnNum: Long.fromNumber(5), lastWriteOpTime: last, stmts: [] }));
  for (const txnNumber of [5, 6]) {
    storage.write((unit) => {
      unit.sessionInfo = { lsid, txnNumber, stmtIds: [txnNumber] };
      unit.insert(app, { _id: txnNumber });
      unit.upsertById(records, lsid, serializeDocument({ _id: lsid, txnNum: Long.fromNumber(txnNumber), lastWriteOpTime: { ts: unit.commitTimestamp()!, t: Long.fromNumber(-1) }, stmts: [] }));
    });
  }
  const [sameTxn, newerTxn] = oplog.reads.entriesFrom(ZERO).slice(-2);
  assert.deepEqual(sameTxn!.prevOpTime, last);
  assert.equal(Number((newerTxn!.prevOpTime as Doc).t), -1);
  assert.equal(Number(((newerTxn!.prevOpTime as Doc).ts as Timestamp).t), 0, 'a newer txnNumber starts a new chain');
}));

test('a chunk migration\'s writes are logged fromMigrate, each operation of an applyOps too', withOplog({}, (storage, oplog) => {
  const coll = storage.createCollection('app.c');
  storage.write((unit) => {
    unit.fromMigrate = true;
    unit.insert(coll, { _id: 1 });
  });
  storage.write((unit) => {
    unit.fromMigrate = true;
    unit.insert(coll, { _id: 2 });
    unit.insert(coll, { _id: 3 });
  });
  storage.write((unit) => unit.insert(coll, { _id: 4 }));
  const [single, batch, plain] = oplog.reads.entriesFrom(ZERO).slice(-3);
  assert.equal(single!.fromMigrate, true);
  assert.deepEqual(((batch!.o as Doc).applyOps as Doc[]).map((op) => op.fromMigrate), [true, true]);
  assert.equal(plain!.fromMigrate, undefined);
}));

test('with a document key for sharded collections, inserts, updates and deletes name it', withOplog({ documentKey: (ns, doc) => (ns === 'app.sharded' ? { region: doc.region ?? null, _id: doc._id } : undefined) }, (storage, oplog) => {
  const sharded = storage.createCollection('app.sharded');
  // A shard key has its index: a delete decodes only the indexed fields.
  storage.createIndexes(sharded, [{ v: 2, key: { region: 1 }, name: 'region_1' }]);
  const plain = storage.createCollection('app.plain');
  storage.write((unit) => unit.insert(sharded, { _id: 1, region: 'eu', v: 1 }));
  const found = sharded.findById(storage.kv, 1)!;
  storage.write((unit) => unit.update(sharded, found.recordId, deserializeDocument(found.bytes), found.bytes.length, { _id: 1, region: 'eu', v: 2 }));
  storage.write((unit) => unit.removeById(sharded, 1));
  storage.write((unit) => unit.insert(plain, { _id: 2 }));
  const [insert, update, remove, other] = oplog.reads.entriesFrom(ZERO).slice(-4);
  assert.deepEqual([insert!.o2, update!.o2, remove!.o], [{ region: 'eu', _id: 1 }, { region: 'eu', _id: 1 }, { region: 'eu', _id: 1 }]);
  assert.equal(other!.o2, undefined);
}));
