import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, type Doc } from '../bson/values.js';
import type { Collection, StorageEngine } from './storage_engine.js';
import { withClockedEngine } from './test_support.js';
import { MongoError } from '../base/errors.js';

function all(engine: StorageEngine, coll: Collection): Doc[] {
  return [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes));
}

function byX(engine: StorageEngine, coll: Collection): unknown[] {
  return [...coll.index('x_1')!.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)].map((e) => deserializeDocument(engine.getRecord(coll, e.recordId)!)._id);
}

function updateX(engine: StorageEngine, coll: Collection, id: unknown, x: number): void {
  engine.write((u) => {
    const found = coll.findById(u.kv, id)!;
    const before = deserializeDocument(found.bytes);
    u.update(coll, found.recordId, before, found.bytes.length, { ...before, x });
  });
}

const isWriteConflict = (err: unknown): boolean => err instanceof MongoError && err.code === 112;

describe('multi-document transactions in storage', () => {
  it('a transaction reads its snapshot with its own writes; others see them only after the commit, indexes included', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => {
      u.insert(coll, { _id: 1, x: 10 });
      u.insert(coll, { _id: 2, x: 20 });
    });
    const txn = engine.beginTransaction(clock.now());
    txn.statement(() => {
      engine.write((u) => u.insert(coll, { _id: 3, x: 5 }));
      updateX(engine, coll, 1, 30);
      engine.write((u) => u.removeById(coll, 2));
    });
    assert.deepEqual(txn.statement(() => all(engine, coll)), [{ _id: 1, x: 30 }, { _id: 3, x: 5 }]);
    assert.deepEqual(txn.statement(() => byX(engine, coll)), [3, 1]);
    assert.deepEqual(all(engine, coll), [{ _id: 1, x: 10 }, { _id: 2, x: 20 }], 'nothing is visible outside before the commit');
    engine.write((u) => u.insert(coll, { _id: 4, x: 40 }));
    assert.deepEqual(txn.statement(() => all(engine, coll)).map((d) => d._id), [1, 3], 'a commit after the snapshot is not seen');
    const ts = txn.commit(() => undefined);
    assert.ok(ts !== undefined);
    assert.deepEqual(all(engine, coll).sort((a, b) => (a._id as number) - (b._id as number)), [{ _id: 1, x: 30 }, { _id: 3, x: 5 }, { _id: 4, x: 40 }]);
    assert.deepEqual(byX(engine, coll), [3, 1, 4]);
    assert.equal(engine.stats.get(coll.entry.id).count, 3);
  }));

  it('first writer wins: a second transaction writing the same document fails with WriteConflict', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => u.insert(coll, { _id: 1, x: 1 }));
    const a = engine.beginTransaction(clock.now());
    const b = engine.beginTransaction(clock.now());
    a.statement(() => updateX(engine, coll, 1, 2));
    assert.throws(() => b.statement(() => updateX(engine, coll, 1, 3)), isWriteConflict);
    assert.throws(() => b.statement(() => engine.write((u) => u.insert(coll, { _id: 9, x: 9 }))) && a.statement(() => engine.write((u) => u.insert(coll, { _id: 9, x: 9 }))), isWriteConflict, 'the same new _id');
    a.commit(() => undefined);
    b.abort();
    assert.deepEqual(all(engine, coll), [{ _id: 1, x: 2 }]);
  }));

  it('a write outside transactions to a document a transaction wrote makes that transaction fail with WriteConflict', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => u.insert(coll, { _id: 1, x: 1 }));
    const txn = engine.beginTransaction(clock.now());
    txn.statement(() => updateX(engine, coll, 1, 2));
    updateX(engine, coll, 1, 100);
    assert.throws(() => txn.statement(() => all(engine, coll)), isWriteConflict);
    assert.throws(() => txn.commit(() => undefined), isWriteConflict);
    assert.deepEqual(all(engine, coll), [{ _id: 1, x: 100 }]);
  }));

  it('a transaction may not write a document a commit after its snapshot changed', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => u.insert(coll, { _id: 1, x: 1 }));
    const txn = engine.beginTransaction(clock.now());
    updateX(engine, coll, 1, 7);
    assert.throws(() => txn.statement(() => updateX(engine, coll, 1, 2)), isWriteConflict);
    txn.abort();
  }));

  it('a failed statement takes back only its own writes', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1', unique: true }]);
    const txn = engine.beginTransaction(clock.now());
    txn.statement(() => engine.write((u) => u.insert(coll, { _id: 1, x: 1 })));
    assert.throws(() => txn.statement(() => engine.write((u) => {
      u.insert(coll, { _id: 2, x: 2 });
      u.insert(coll, { _id: 3, x: 1 });
    })), (err: unknown) => err instanceof MongoError && err.code === 11000);
    assert.deepEqual(txn.statement(() => all(engine, coll)), [{ _id: 1, x: 1 }]);
    txn.statement(() => {
      engine.write((u) => u.removeById(coll, 1));
      engine.write((u) => u.insert(coll, { _id: 1, x: 5 }));
    });
    txn.commit(() => undefined);
    assert.deepEqual(all(engine, coll), [{ _id: 1, x: 5 }]);
    assert.deepEqual(byX(engine, coll), [1]);
  }));
});
