import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deserializeDocument, serializeDocument } from '../bson/values.js';
import { checkCappedOptions, effectiveCappedSize } from './capped.js';
import type { Collection, StorageEngine } from './storage_engine.js';
import { withEngine } from './test_support.js';

function ids(engine: StorageEngine, coll: Collection): unknown[] {
  return [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id);
}

describe('capped collections', () => {
  it('round sizes as MongoDB does and check the options create is given', () => {
    assert.equal(effectiveCappedSize(1), 4096);
    assert.equal(effectiveCappedSize(4096), 4096);
    assert.equal(effectiveCappedSize(4097), 4352);
    assert.equal(effectiveCappedSize(5120), 5120);
    assert.throws(() => checkCappedOptions({ capped: true }), { code: 72, message: "the 'size' field is required when 'capped' is true" });
    assert.throws(() => checkCappedOptions({ capped: true, size: 'big' }), { code: 14 });
    assert.doesNotThrow(() => checkCappedOptions({ capped: false }));
    assert.doesNotThrow(() => checkCappedOptions({ capped: true, size: 1, max: 3 }));
  });

  it('keep at most max documents, dropping the oldest in the inserting unit, also within one unit', withEngine((engine) => {
    const coll = engine.createCollection('t.c', { capped: true, size: 4096, max: 3 });
    for (let i = 1; i <= 5; i++) engine.write((unit) => unit.insert(coll, { _id: i }));
    assert.deepEqual(ids(engine, coll), [3, 4, 5]);
    engine.write((unit) => {
      for (let i = 6; i <= 9; i++) unit.insert(coll, { _id: i });
    });
    assert.deepEqual(ids(engine, coll), [7, 8, 9]);
    assert.equal(engine.stats.get(coll.entry.id).count, 3);
    // The _id index lost the evicted documents too.
    engine.write((unit) => unit.insert(coll, { _id: 1 }));
    assert.deepEqual(ids(engine, coll), [8, 9, 1]);
  }));

  it('keep at most size bytes of documents, and refuse a document that alone is larger', withEngine((engine) => {
    const coll = engine.createCollection('t.c', { capped: true, size: 5000 });
    const doc = (i: number) => ({ _id: i, pad: 'x'.repeat(100) });
    const each = serializeDocument(doc(0)).length;
    for (let i = 0; i < 100; i++) engine.write((unit) => unit.insert(coll, doc(i)));
    const kept = Math.floor(5120 / each);
    assert.equal(engine.stats.get(coll.entry.id).count, kept);
    assert.ok(engine.stats.get(coll.entry.id).size <= 5120);
    assert.equal(ids(engine, coll)[0], 100 - kept);
    assert.throws(() => engine.write((unit) => unit.insert(coll, { _id: 'big', pad: 'y'.repeat(6000) })), { code: 2, message: 'object to insert exceeds cappedMaxSize' });
    assert.equal(ids(engine, coll).length, kept, 'nothing was evicted for it');
  }));

  it('leave other collections alone', withEngine((engine) => {
    const coll = engine.createCollection('t.plain');
    for (let i = 0; i < 10; i++) engine.write((unit) => unit.insert(coll, { _id: i }));
    assert.equal(ids(engine, coll).length, 10);
  }));
});
