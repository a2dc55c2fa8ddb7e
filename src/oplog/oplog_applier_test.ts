import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Long, Timestamp, UUID } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import { withOplog } from './oplog_test_util.js';

const wall = new Date(0);
const NOW = Math.floor(Date.now() / 1000);
const ts = (i: number): Timestamp => new Timestamp({ t: NOW, i });
const entry = (i: number, op: Doc): Doc => ({ ...op, ts: ts(i), t: Long.fromNumber(1), v: Long.fromNumber(2), wall });

const withSecondary = (fn: Parameters<typeof withOplog>[1]) => withOplog({}, fn);

const docs = (storage: StorageEngine, ns: string): Doc[] => [...storage.scanRecords(storage.getCollection(ns)!)].map((r) => deserializeDocument(r.bytes));

test('a malformed entry is refused with a MongoError: it and everything after it stay unapplied', withSecondary((storage, oplog) => {
  const ui = new UUID();
  const good = [entry(1, { op: 'c', ns: 'app.$cmd', ui, o: { create: 'c' } }), entry(2, { op: 'i', ns: 'app.c', ui, o: { _id: 1 } })];
  const after = entry(4, { op: 'i', ns: 'app.c', ui, o: { _id: 3 } });
  const malformed: [string, Doc, number][] = [
    ['missing ts', { op: 'i', ns: 'app.c', ui, o: { _id: 2 }, t: 1 }, ErrorCodes.NoSuchKey],
    ['ts not a Timestamp', { ...entry(3, { op: 'i', ns: 'app.c', ui, o: { _id: 2 } }), ts: 5 }, ErrorCodes.TypeMismatch],
    ['missing t', { op: 'i', ns: 'app.c', ui, o: { _id: 2 }, ts: ts(3) }, ErrorCodes.NoSuchKey],
    ['op not a string', entry(3, { op: 1, ns: 'app.c', ui, o: { _id: 2 } }), ErrorCodes.TypeMismatch],
    ['unknown op', entry(3, { op: 'x', ns: 'app.c', ui, o: { _id: 2 } }), ErrorCodes.BadValue],
    ['missing ns', entry(3, { op: 'i', ui, o: { _id: 2 } }), ErrorCodes.NoSuchKey],
    ['o not a document', entry(3, { op: 'i', ns: 'app.c', ui, o: 'doc' }), ErrorCodes.TypeMismatch],
    ['applyOps not an array', entry(3, { op: 'c', ns: 'admin.$cmd', o: { applyOps: { op: 'i' } } }), ErrorCodes.TypeMismatch],
    ['a malformed op inside applyOps', entry(3, { op: 'c', ns: 'admin.$cmd', o: { applyOps: [{ op: 'i', ns: 'app.c', ui, o: { _id: 2 } }, { op: 'i', ns: 'app.c', ui }] } }), ErrorCodes.NoSuchKey],
    ['an update without o2', entry(3, { op: 'u', ns: 'app.c', ui, o: { _id: 1, a: 1 } }), ErrorCodes.NoSuchKey],
    ['an unknown command', entry(3, { op: 'c', ns: 'app.$cmd', o: { shutdown: 1 } }), ErrorCodes.BadValue],
    ['a commitTimestamp not before the entry', { ...entry(3, { op: 'i', ns: 'app.c', ui, o: { _id: 2 } }), commitTimestamp: ts(3) }, ErrorCodes.TypeMismatch],
  ];
  oplog.applyOplogEntries(good);
  for (const [why, bad, code] of malformed) {
    assert.throws(() => oplog.applyOplogEntries([bad, after]), (err: unknown) => err instanceof MongoError && err.code === code && /malformed oplog entry/.test(err.message), why);
    assert.deepEqual(docs(storage, 'app.c'), [{ _id: 1 }], why);
    assert.equal(oplog.reads.entriesFrom(ts(0)).length, 2, why);
  }
}));

test('each entry commits at its own ts, moves the clock past it, and is idempotent', withSecondary((storage, oplog, clock) => {
  const ui = new UUID();
  const batch = [
    entry(1, { op: 'c', ns: 'app.$cmd', ui, o: { create: 'c', idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } } }),
    entry(2, { op: 'i', ns: 'app.c', ui, o: { _id: 1, a: 1 } }),
    entry(3, { op: 'u', ns: 'app.c', ui, o: { _id: 1, a: 2 }, o2: { _id: 1 } }),
    entry(4, { op: 'u', ns: 'app.c', ui, o: { _id: 2, a: 9 }, o2: { _id: 2 } }),
    entry(5, { op: 'd', ns: 'app.c', ui, o: { _id: 7 } }),
    entry(6, { op: 'c', ns: 'app.$cmd', ui, o: { createIndexes: 'c', v: 2, key: { a: 1 }, name: 'a_1' } }),
    entry(7, { op: 'c', ns: 'app.$cmd', ui, o: { renameCollection: 'app.c', to: 'app.d', stayTemp: false, dropTarget: false } }),
    // Under the collection's old name: found by its ui.
    entry(8, { op: 'i', ns: 'app.c', ui, o: { _id: 3, a: 3 } }),
    entry(9, { op: 'c', ns: 'app.$cmd', o: { drop: 'nothing' } }),
    entry(10, { op: 'n', ns: '', o: { msg: 'new primary' } }),
  ];
  oplog.applyOplogEntries(batch);
  assert.ok(clock.now().greaterThanOrEqual(ts(10)));
  assert.equal(storage.getCollection('app.c'), undefined);
  assert.deepEqual(docs(storage, 'app.d'), [{ _id: 1, a: 2 }, { _id: 2, a: 9 }, { _id: 3, a: 3 }]);
  assert.deepEqual(storage.getCollection('app.d')!.indexes.map((i) => i.name), ['_id_', 'a_1']);
  // The snapshot at an entry's ts sees it and nothing after it: the entry committed at its ts.
  const view = storage.snapshotAt(ts(2));
  try {
    assert.deepEqual(storage.kv.withView(view, () => docs(storage, 'app.d')), [{ _id: 1, a: 1 }]);
  } finally {
    view.release();
  }
  oplog.applyOplogEntries(batch);
  assert.deepEqual(docs(storage, 'app.d'), [{ _id: 1, a: 2 }, { _id: 2, a: 9 }, { _id: 3, a: 3 }]);
  assert.deepEqual(oplog.reads.entriesFrom(ts(0)), batch);
}));

test("a prepared transaction's commit logged behind later entries commits its writes at its commitTimestamp, and its entry at its ts", withSecondary((storage, oplog) => {
  const ui = new UUID();
  const commit = { ...entry(5, { op: 'c', ns: 'admin.$cmd', o: { applyOps: [{ op: 'u', ns: 'app.c', ui, o: { _id: 1, v: 1 }, o2: { _id: 1 } }] } }), commitTimestamp: ts(4) };
  oplog.applyOplogEntries([
    entry(1, { op: 'c', ns: 'app.$cmd', ui, o: { create: 'c', idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } } }),
    entry(2, { op: 'i', ns: 'app.c', ui, o: { _id: 1, v: 0 } }),
    entry(3, { op: 'n', ns: '', o: { msg: 'a later entry' } }),
    commit,
  ]);
  const at = (i: number): Doc[] => {
    const view = storage.snapshotAt(ts(i));
    try {
      return storage.kv.withView(view, () => docs(storage, 'app.c'));
    } finally {
      view.release();
    }
  };
  assert.deepEqual(at(3), [{ _id: 1, v: 0 }]);
  assert.deepEqual(at(4), [{ _id: 1, v: 1 }], 'as the primary has it: a snapshot between its commit and its entry sees it');
  assert.deepEqual(oplog.reads.entriesFrom(ts(5)), [commit]);
}));

test('an entry for a collection this node does not have fails with NamespaceNotFound and applies nothing', withSecondary((storage, oplog) => {
  assert.throws(() => oplog.applyOplogEntries([entry(1, { op: 'i', ns: 'app.none', ui: new UUID(), o: { _id: 1 } })]), (err: unknown) => err instanceof MongoError && err.code === ErrorCodes.NamespaceNotFound);
  assert.equal(oplog.reads.lastEntry(), undefined);
  assert.equal(storage.getCollection('app.none'), undefined);
}));
