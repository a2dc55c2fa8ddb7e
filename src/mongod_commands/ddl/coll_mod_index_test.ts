import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoError } from '../../base/errors.js';
import { StorageEngine, type Collection } from '../../storage/storage_engine.js';
import { applyIndexModification, parseIndexModification } from './coll_mod_index.js';

function refusedWith(code: number, message?: RegExp) {
  return (e: unknown): boolean => e instanceof MongoError && e.code === code && (message === undefined || message.test(e.message));
}

function withIndexes(fn: (engine: StorageEngine, coll: Collection) => void) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-collmod-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
    try {
      const coll = engine.createCollection('t.c');
      engine.createIndexes(coll, [
        { v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 60 },
        { v: 2, key: { a: 1 }, name: 'a_1' },
        { v: 2, key: { a: 1 }, name: 'a_1_sparse', sparse: true },
        { v: 2, key: { a: 1, b: 1 }, name: 'a_1_b_1' },
      ]);
      fn(engine, coll);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe("collMod's index option", () => {
  it('changes expireAfterSeconds, and makes a single-field index a TTL index', withIndexes((engine, coll) => {
    const mod = parseIndexModification(coll, { name: 'at_1', expireAfterSeconds: 3600 });
    assert.deepEqual(applyIndexModification(engine, coll, mod), { expireAfterSeconds_old: 60, expireAfterSeconds_new: 3600 });
    assert.equal(coll.index('at_1')!.entry.spec.expireAfterSeconds, 3600);
    const convert = parseIndexModification(coll, { name: 'a_1', expireAfterSeconds: 10 });
    assert.deepEqual(applyIndexModification(engine, coll, convert), { expireAfterSeconds_new: 10 });
    assert.equal(coll.index('a_1')!.entry.spec.expireAfterSeconds, 10);
  }));

  it('hides and shows an index, leaving no hidden: false behind, and changes nothing to hide a hidden one', withIndexes((engine, coll) => {
    assert.deepEqual(applyIndexModification(engine, coll, parseIndexModification(coll, { keyPattern: { a: 1, b: 1 }, hidden: true })), { hidden_old: false, hidden_new: true });
    assert.equal(coll.index('a_1_b_1')!.hidden, true);
    assert.deepEqual(applyIndexModification(engine, coll, parseIndexModification(coll, { name: 'a_1_b_1', hidden: true })), {});
    assert.deepEqual(applyIndexModification(engine, coll, parseIndexModification(coll, { name: 'a_1_b_1', hidden: false })), { hidden_old: true, hidden_new: false });
    assert.equal('hidden' in coll.index('a_1_b_1')!.entry.spec, false);
    const both = applyIndexModification(engine, coll, parseIndexModification(coll, { name: 'at_1', hidden: true, expireAfterSeconds: 1 }));
    assert.deepEqual(both, { expireAfterSeconds_old: 60, expireAfterSeconds_new: 1, hidden_old: false, hidden_new: true });
  }));

  it("refuses what MongoDB refuses, with MongoDB's codes, before changing anything", withIndexes((_engine, coll) => {
    const refuse = (raw: unknown, code: number, message?: RegExp) => assert.throws(() => parseIndexModification(coll, raw), refusedWith(code, message));
    refuse('at_1', 14);
    refuse({ name: 'at_1', expireAfterSeconds: 5, bogus: 1 }, 40415, /collMod.index.bogus/);
    refuse({ name: 'at_1', keyPattern: { at: 1 }, expireAfterSeconds: 5 }, 72, /both key pattern and name/);
    refuse({ expireAfterSeconds: 5 }, 72, /either index name or key pattern/);
    refuse({ name: 'at_1' }, 72, /no expireAfterSeconds, hidden/);
    refuse({ name: 'at_1', expireAfterSeconds: '5' }, 14, /collMod.index.expireAfterSeconds/);
    refuse({ name: 'at_1', expireAfterSeconds: -1 }, 72, /less than 0/);
    refuse({ name: 'at_1', expireAfterSeconds: 2147483648 }, 72, /acceptable range/);
    refuse({ name: 'at_1', hidden: 'yes' }, 14);
    refuse({ name: 'nope', hidden: true }, 27, /cannot find index nope for ns t.c/);
    refuse({ keyPattern: { z: 1 }, hidden: true }, 27);
    refuse({ keyPattern: { a: 1 }, hidden: true }, 181, /must use index name/);
    refuse({ name: '_id_', expireAfterSeconds: 5 }, 72, /_id field does not support TTL/);
    refuse({ name: 'a_1_b_1', expireAfterSeconds: 5 }, 72, /single-field/);
    refuse({ name: '_id_', hidden: true }, 2, /can't hide _id index/);
    refuse({ name: 'a_1', unique: true }, 238);
  }));

  it('refuses TTL on a capped collection and hiding on a system collection', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-collmod-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
    try {
      const capped = engine.createCollection('t.capped', { capped: true, size: 4096 });
      const system = engine.createCollection('t.system.things');
      engine.createIndexes(capped, [{ v: 2, key: { at: 1 }, name: 'at_1' }]);
      engine.createIndexes(system, [{ v: 2, key: { a: 1 }, name: 'a_1' }]);
      assert.throws(() => parseIndexModification(capped, { name: 'at_1', expireAfterSeconds: 5 }), refusedWith(72, /capped/));
      assert.throws(() => parseIndexModification(system, { name: 'a_1', hidden: true }), refusedWith(2, /system collection/));
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
