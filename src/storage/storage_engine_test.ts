import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { encodeKey } from '../bson/key_string.js';
import { StorageEngine } from './storage_engine.js';
import { MAX_KEY_BYTES } from './lmdb/kv_store.js';
import { layoutVersionKey } from './layout_upgrade.js';
import { equalities, withEngine } from './test_support.js';

describe('the storage engine', () => {
  it('calls every op observer from inside the write unit, in write order', withEngine((engine) => {
    const seen: string[] = [];
    engine.observers.push({
      onInsert: (_w, ns, doc) => seen.push(`insert ${ns} ${String(doc.fields(['_id'])._id)}`),
      onUpdate: (_w, ns, before, after) => seen.push(`update ${ns} ${String(before.v)}->${String(after.v)}`),
      onDelete: (_w, ns, before) => seen.push(`delete ${ns} ${String(before._id)}`),
    });
    const coll = engine.createCollection('t.c');
    engine.write((unit) => {
      const rid = unit.insert(coll, { _id: 1, v: 1 });
      const before: Doc = { _id: 1, v: 1 };
      const size = engine.getRecord(coll, rid)!.length;
      unit.update(coll, rid, before, size, { _id: 1, v: 2 });
      unit.remove(coll, rid, { _id: 1, v: 2 }, size);
    });
    assert.deepEqual(seen, ['insert t.c 1', 'update t.c 1->2', 'delete t.c 1']);
  }));

  it('rolls back a whole write unit when it throws, observer writes included', withEngine((engine) => {
    const coll = engine.createCollection('t.c');
    const marker = Buffer.from([0x00, 0x7a]);
    engine.observers.push({ onInsert: (w) => w.put(marker, Buffer.from('x')) });
    assert.throws(() => engine.write((unit) => {
      unit.insert(coll, { _id: 1 });
      throw new Error('abort');
    }));
    assert.equal([...engine.scanRecords(coll)].length, 0);
    assert.equal(engine.kv.get(marker), undefined);
  }));

  it('leaves nothing of a document that violates a unique index, and keeps the others', withEngine((engine) => {
    const coll = engine.createCollection('t.u');
    engine.createIndexes(coll, [{ v: 2, key: { e: 1 }, name: 'e_1', unique: true }]);
    const errors: number[] = [];
    engine.write((unit) => {
      for (const doc of [{ _id: 1, e: 'a' }, { _id: 2, e: 'a' }, { _id: 3, e: 'b' }]) {
        try {
          unit.insert(coll, doc);
        } catch (err) {
          errors.push((err as { code: number }).code);
        }
      }
    });
    assert.deepEqual(errors, [11000]);
    const ids = [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id);
    assert.deepEqual(ids, [1, 3]);
    assert.equal(engine.stats.get(coll.entry.id).count, 2);
    // The refused document's _id entry, claimed before e_1 refused it, was taken back.
    engine.write((unit) => unit.insert(coll, { _id: 2, e: 'c' }));
    assert.equal(engine.stats.get(coll.entry.id).count, 3);
  }));

  it('inserts documents from their bytes, indexing them from the fields the indexes read', withEngine((engine) => {
    const coll = engine.createCollection('t.b');
    engine.createIndexes(coll, [{ v: 2, key: { 'a.x': 1 }, name: 'a.x_1', unique: true, partialFilterExpression: { p: true } }]);
    assert.deepEqual(coll.pathsIndexed(), ['_id', 'a.x', 'p']);
    const seen: Doc[] = [];
    engine.observers.push({ onInsert: (_w, _ns, doc) => seen.push(doc.fields(['_id', 'a'])) });
    const docs = [{ _id: 1, a: { x: 5 }, p: true, other: 'x' }, { _id: 2, a: { x: 5 }, p: false }, { _id: 3, a: { x: 5 }, p: true }];
    let refused: unknown;
    engine.write((unit) => {
      for (const doc of docs) {
        try {
          unit.insertBytes(coll, new Uint8Array(serializeDocument(doc)));
        } catch (err) {
          refused = err;
        }
      }
    });
    assert.equal((refused as Doc).code, 11000);
    assert.deepEqual((refused as { extra: Doc }).extra.keyValue, { 'a.x': 5 });
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)), docs.slice(0, 2));
    assert.deepEqual(seen.map((d) => [d._id, d.a]), [[1, { x: 5 }], [2, { x: 5 }]]);
    assert.equal(seen[0]!.other, undefined, 'fields nobody asked for stay undecoded');
  }));

  it('removes a document by _id with its index entries, and says when there was none', withEngine((engine) => {
    const coll = engine.createCollection('t.r');
    engine.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1', unique: true }]);
    engine.write((unit) => {
      unit.insert(coll, { _id: 1, a: 'x', pad: 'p' });
      unit.insert(coll, { _id: 2, a: 'y' });
    });
    assert.equal(engine.write((unit) => unit.removeById(coll, 1.0)), true, '1.0 and 1 are the same _id');
    assert.equal(engine.write((unit) => unit.removeById(coll, 3)), false);
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id), [2]);
    assert.equal(engine.stats.get(coll.entry.id).count, 1);
    // Its unique entry is gone: the value can be used again, and so can the _id.
    engine.write((unit) => unit.insert(coll, { _id: 1, a: 'x' }));
    assert.equal(engine.stats.get(coll.entry.id).count, 2);
  }));

  it('replaces a document by _id from its bytes, or inserts it, keeping the indexes in step', withEngine((engine) => {
    const coll = engine.createCollection('t.u');
    engine.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1', unique: true }]);
    engine.write((unit) => unit.insert(coll, { _id: 1, a: 'x', n: 1 }));
    const updates: [Doc, Doc][] = [];
    engine.observers.push({ onUpdate: (_w, _ns, before, after) => updates.push([before, after]) });
    engine.write((unit) => {
      unit.upsertBytes(coll, serializeDocument({ _id: 1, a: 'y', n: 2 }));
      unit.upsertBytes(coll, serializeDocument({ _id: 2, a: 'x' }));
    });
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)), [{ _id: 1, a: 'y', n: 2 }, { _id: 2, a: 'x' }]);
    assert.equal(engine.stats.get(coll.entry.id).count, 2);
    assert.deepEqual(updates, [[{ _id: 1, a: 'x' }, { _id: 1, a: 'y' }]], 'observers get the indexed fields');
    // 'x' moved from _id 1 to _id 2 and 'y' is taken: the unique index says so.
    assert.throws(() => engine.write((unit) => unit.insert(coll, { _id: 3, a: 'y' })), { code: 11000 });
    assert.throws(() => engine.write((unit) => unit.upsertBytes(coll, serializeDocument({ _id: 2, a: 'y' }))), { code: 11000 });
  }));

  it('replaces a document by an _id in hand and its index key, or inserts it; another index takes upsertBytes\' way', withEngine((engine) => {
    const coll = engine.createCollection('config.transactions');
    const id = { id: 'session', uid: 'user' };
    const seen: { before: Doc; after: Doc; old: Doc | undefined }[] = [];
    engine.observers.push({ onUpdate: (_w, _ns, before, after, _bytes, how) => seen.push({ before, after, old: how?.beforeBytes && deserializeDocument(how.beforeBytes) }) });
    const key = engine.write((unit) => unit.upsertById(coll, id, serializeDocument({ _id: id, txnNum: 1 })));
    assert.ok(key !== undefined, 'an insert gives the key too');
    engine.write((unit) => assert.deepEqual(unit.upsertById(coll, id, serializeDocument({ _id: id, txnNum: 2, stmts: ['a longer record'] }), key), key));
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)), [{ _id: id, txnNum: 2, stmts: ['a longer record'] }]);
    assert.deepEqual(seen, [{ before: { _id: id }, after: { _id: id }, old: { _id: id, txnNum: 1 } }], 'the observers get the _id and the old bytes');
    const stats = engine.stats.get(coll.entry.id);
    assert.deepEqual([stats.count, stats.size], [1, serializeDocument({ _id: id, txnNum: 2, stmts: ['a longer record'] }).length]);
    assert.deepEqual([...coll.index('_id_')!.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)].length, 1, 'one _id entry, untouched');
    const indexed = engine.createCollection('t.indexed');
    engine.createIndexes(indexed, [{ v: 2, key: { a: 1 }, name: 'a_1', unique: true }]);
    engine.write((unit) => unit.insert(indexed, { _id: 1, a: 'x' }));
    engine.write((unit) => assert.equal(unit.upsertById(indexed, 1, serializeDocument({ _id: 1, a: 'y' })), undefined));
    engine.write((unit) => unit.insert(indexed, { _id: 2, a: 'x' }));
    assert.throws(() => engine.write((unit) => unit.insert(indexed, { _id: 3, a: 'y' })), { code: 11000 }, 'the a_1 index followed the replacement');
  }));

  it('takes any negative number in a key pattern as descending, when writing and when reading', withEngine((engine) => {
    const coll = engine.createCollection('t.o');
    engine.createIndexes(coll, [{ v: 2, key: { a: -2, b: 0.5 }, name: 'a_-2_b_0.5' }]);
    engine.write((unit) => { for (const a of [1, 3, 2]) unit.insert(coll, { _id: a, a, b: a }); });
    const index = coll.index('a_-2_b_0.5')!;
    assert.deepEqual(index.ordering, [-1, 1]);
    const scanned = [...index.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)];
    assert.deepEqual(scanned.map((e) => e.keyString), [3, 2, 1].map((a) => encodeKey([a, a], [-1, 1])));
  }));

  it('commits concurrent grouped writes together, undoing only the unit that threw', withEngine(async (engine) => {
    const coll = engine.createCollection('t.g');
    const first = engine.writeGrouped(() => engine.write((unit) => unit.insert(coll, { _id: 1 })));
    const failing = engine.writeGrouped(() => engine.write((unit) => {
      unit.insert(coll, { _id: 2 });
      unit.insert(coll, { _id: 1 });
    }));
    const third = engine.writeGrouped(() => engine.write((unit) => unit.insert(coll, { _id: 3 })));
    assert.deepEqual([...engine.scanRecords(coll)], [], 'nothing is written before the group runs');
    await first;
    await assert.rejects(failing, { code: 11000 });
    await third;
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id), [1, 3]);
    assert.equal(engine.stats.get(coll.entry.id).count, 2);
  }));

  it('forgets in memory what an aborted unit created, dropped, indexed or counted', withEngine(async (engine) => {
    const kept = engine.createCollection('t.kept');
    engine.write((unit) => unit.insert(kept, { _id: 1, a: 1 }));
    const boom = new Error('unit fails after its nested writes committed');
    assert.throws(() => engine.write(() => {
      // Each of these is a child transaction that commits inside the unit that then aborts.
      const made = engine.ensureCollection('t.made').coll;
      engine.write((unit) => unit.insert(made, { _id: 1 }));
      engine.write((unit) => unit.insert(kept, { _id: 2, a: [1, 2] }));
      engine.createIndexes(kept, [{ key: { a: 1 }, name: 'a_1' }]);
      engine.renameCollection('t.kept', 't.renamed');
      engine.dropCollection('t.renamed');
      throw boom;
    }), boom);
    assert.equal(engine.getCollection('t.made'), undefined, 'a collection created in the aborted unit is not in the catalog');
    assert.equal(engine.getCollection('t.renamed'), undefined);
    assert.equal(engine.getCollection('t.kept'), kept, 'a collection dropped (after a rename) in the aborted unit is still there');
    assert.equal(kept.ns, 't.kept');
    assert.deepEqual(kept.indexes.map((i) => i.name), ['_id_']);
    assert.equal(engine.stats.get(kept.entry.id).count, 1, 'the counts are those committed');
    assert.deepEqual([...engine.scanRecords(kept)].map((r) => deserializeDocument(r.bytes)._id), [1]);

    // The same inside a group: the unit that threw is undone, in memory too; the others stay.
    const grouped = [
      engine.writeGrouped(() => engine.write((unit) => unit.insert(engine.ensureCollection('t.g1').coll, { _id: 1 }))),
      engine.writeGrouped(() => engine.write((unit) => {
        unit.insert(engine.ensureCollection('t.g2').coll, { _id: 1 });
        throw boom;
      })),
    ];
    await grouped[0];
    await assert.rejects(grouped[1]!, boom);
    assert.equal(engine.getCollection('t.g2'), undefined);
    assert.equal(engine.stats.get(engine.getCollection('t.g1')!.entry.id).count, 1);

    // An asynchronous unit too.
    await assert.rejects(engine.writeAsync((unit) => {
      unit.insert(engine.ensureCollection('t.a').coll, { _id: 1 });
      throw boom;
    }), boom);
    assert.equal(engine.getCollection('t.a'), undefined);
  }));

  it('refuses an index key over the store key limit with KeyTooLong, leaving nothing behind', withEngine((engine) => {
    const coll = engine.createCollection('t.long');
    engine.createIndexes(coll, [{ key: { s: 1 }, name: 's_1' }]);
    engine.write((unit) => unit.insert(coll, { _id: 1, s: 'x'.repeat(1900) }));
    for (const doc of [{ _id: 2, s: 'x'.repeat(2000) }, { _id: 'y'.repeat(2000), s: 'short' }]) {
      assert.throws(() => engine.write((unit) => unit.insert(coll, doc)), { code: 17280, codeName: 'KeyTooLong' });
    }
    assert.deepEqual([...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id), [1]);
    assert.equal(engine.stats.get(coll.entry.id).count, 1);
  }));

  it('answers reads and ranges whose bounds are longer than any stored key', withEngine((engine) => {
    const max = MAX_KEY_BYTES;
    const key = (s: string) => Buffer.from(s, 'latin1');
    const atLimit = 'a'.repeat(max);
    const stored = ['a'.repeat(1000), atLimit, 'a'.repeat(max - 1) + 'b', 'c'];
    engine.kv.writeSync((w) => stored.forEach((k) => w.put(key(k), key('v'))));
    const keys = (start: string, end: string, options = {}) => [...engine.kv.range(key(start), key(end), options)].map((e) => e.key.toString('latin1'));
    const long = atLimit + 'x';
    assert.equal(engine.kv.get(key(long)), undefined);
    assert.deepEqual(keys(long, 'c'), [stored[2]], 'the cut start bound itself is below the bound');
    assert.deepEqual(keys(long, 'c', { reverse: true }), [stored[2]]);
    assert.deepEqual(keys(long, 'd', { limit: 1 }), [stored[2]]);
    assert.deepEqual(keys('a', long), [stored[0], atLimit], 'the cut end bound itself is below the bound');
    assert.deepEqual(keys('a', long, { reverse: true }), [atLimit, stored[0]]);
    assert.deepEqual(keys('a', long, { reverse: true, limit: 1 }), [atLimit]);
  }));

  it('moves a data directory of the single-space layout into spaces on open, losing nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    try {
      const first = StorageEngine.open(dir, { compilePartialFilter: equalities });
      const coll = first.createCollection('t.old');
      first.createIndexes(coll, [{ key: { a: 1 }, name: 'a_1' }]);
      first.write((unit) => [1, 2, 3].forEach((i) => unit.insert(coll, { _id: i, a: i * 10 })));
      // Rewrite what the layout keeps in spaces the way older nodes kept it, in the main space.
      first.kv.writeSync((w) => {
        for (const [kind, id, space] of [[1, coll.entry.id, coll.space], ...coll.indexes.map((i) => [2, i.entry.id, i.space] as const)] as const) {
          for (const { key, value } of [...w.space(space).range(Buffer.alloc(0), Buffer.alloc(0))]) {
            const old = Buffer.alloc(5);
            old[0] = kind;
            old.writeUInt32BE(id, 1);
            w.put(Buffer.concat([old, key]), value);
          }
          w.dropSpace(space);
        }
        w.remove(layoutVersionKey);
      });
      await first.close();
      const second = StorageEngine.open(dir, { compilePartialFilter: equalities });
      const again = second.getCollection('t.old')!;
      assert.deepEqual([...second.scanRecords(again)].map((r) => deserializeDocument(r.bytes)), [1, 2, 3].map((i) => ({ _id: i, a: i * 10 })));
      const a = again.index('a_1')!;
      assert.deepEqual([...a.scan(second.kv, Buffer.alloc(0), Buffer.alloc(0), true)].map((e) => e.recordId), [3, 2, 1]);
      assert.throws(() => second.write((unit) => unit.insert(again, { _id: 2 })), { code: 11000 }, 'the _id index moved too');
      assert.deepEqual([...second.kv.range(Buffer.from([1]), Buffer.from([3]))], [], 'nothing is left behind in the old places');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads what the last commit wrote, after plain and grouped writes', withEngine(async (engine) => {
    const coll = engine.createCollection('t.r');
    const rid = engine.write((unit) => unit.insert(coll, { _id: 1, v: 1 }));
    assert.deepEqual(deserializeDocument(engine.getRecord(coll, rid)!), { _id: 1, v: 1 });
    engine.write((unit) => unit.update(coll, rid, { _id: 1, v: 1 }, engine.getRecord(coll, rid)!.length, { _id: 1, v: 2 }));
    assert.deepEqual(deserializeDocument(engine.getRecord(coll, rid)!), { _id: 1, v: 2 });
    const grouped = [2, 3].map((v) => engine.writeGrouped(() => engine.write((unit) => {
      assert.equal(deserializeDocument(engine.getRecord(coll, rid)!).v, v, 'a grouped unit sees the units before it');
      unit.update(coll, rid, { _id: 1, v }, engine.getRecord(coll, rid)!.length, { _id: 1, v: v + 1 });
    })));
    await Promise.all(grouped);
    assert.deepEqual(deserializeDocument(engine.getRecord(coll, rid)!), { _id: 1, v: 4 });
  }));

  it('refuses duplicate _ids whether they arrive above, below or equal to the highest seen, also after an abort', withEngine((engine) => {
    const coll = engine.createCollection('t.u');
    const insert = (id: number) => {
      try {
        engine.write((unit) => unit.insert(coll, { _id: id }));
        return 'ok';
      } catch (err) {
        return (err as { code?: number }).code === 11000 ? 'dup' : String(err);
      }
    };
    assert.deepEqual([5, 3, 5, 3, 7, 6, 7].map(insert), ['ok', 'ok', 'dup', 'dup', 'ok', 'ok', 'dup']);
    assert.throws(() => engine.write((unit) => { unit.insert(coll, { _id: 10 }); throw new Error('abort'); }), /abort/);
    assert.deepEqual([8, 10, 10, 11].map(insert), ['ok', 'ok', 'dup', 'ok']);
    const ids = [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id);
    assert.deepEqual(ids, [5, 3, 7, 6, 8, 10, 11]);
    const byId = coll.index('_id_')!;
    assert.deepEqual([...byId.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)].length, 7);
  }));

  it('drops a collection with its records and index entries, and creates it again empty', withEngine((engine) => {
    const coll = engine.createCollection('t.d');
    engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
    engine.write((unit) => { for (let i = 0; i < 5; i++) unit.insert(coll, { _id: i, k: i }); });
    assert.equal(engine.dropCollection('t.d'), true);
    const again = engine.createCollection('t.d');
    engine.createIndexes(again, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
    engine.write((unit) => unit.insert(again, { _id: 1, k: 1 }));
    assert.equal([...engine.scanRecords(again)].length, 1);
    assert.equal([...again.index('k_1')!.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), true)].length, 1);
  }));

  it('finds its catalog, records, indexes and counts again after reopening', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    try {
      const first = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      const coll = first.createCollection('t.r');
      first.createIndexes(coll, [{ v: 2, key: { k: -1 }, name: 'k_-1' }]);
      first.write((unit) => { for (let i = 0; i < 10; i++) unit.insert(coll, { _id: i, k: i }); });
      const uuid = coll.entry.uuid;
      await first.close();
      const second = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      const again = second.getCollection('t.r')!;
      assert.deepEqual(again.entry.uuid.toString('hex'), uuid.toString('hex'));
      assert.deepEqual(again.indexes.map((i) => i.name), ['_id_', 'k_-1']);
      assert.equal(second.stats.get(again.entry.id).count, 10);
      assert.equal(again.nextRecordId, 11);
      assert.throws(() => second.write((unit) => unit.insert(again, { _id: 5, k: 5 })), /duplicate key/);
      second.write((unit) => { unit.insert(again, { _id: -1, k: -1 }); unit.insert(again, { _id: 10, k: 10 }); });
      assert.deepEqual([...second.scanRecords(again)].map((r) => deserializeDocument(r.bytes)._id), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 10]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a write unit committed by writeAsync atomic, visible once settled, and durable after sync', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    try {
      const first = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      const coll = first.createCollection('t.u');
      const five = first.writeAsync((unit) => { for (let i = 0; i < 5; i++) unit.insert(coll, { _id: i }); });
      const failing = first.writeAsync((unit) => { unit.insert(coll, { _id: 10 }); unit.insert(coll, { _id: 0 }); });
      await five;
      await assert.rejects(failing, /E11000/);
      assert.deepEqual([...first.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id), [0, 1, 2, 3, 4]);
      assert.equal(first.stats.get(coll.entry.id).count, 5);
      await first.sync();
      await first.close();
      const second = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      const again = second.getCollection('t.u')!;
      assert.deepEqual([...second.scanRecords(again)].map((r) => deserializeDocument(r.bytes)._id), [0, 1, 2, 3, 4]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces an index spec (collMod) in place, keeps its entries and persists it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    try {
      const first = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      const coll = first.createCollection('t.m');
      first.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1' }]);
      first.write((unit) => { unit.insert(coll, { _id: 1, a: [1, 2] }); });
      first.replaceIndexSpec(coll, 'a_1', { v: 2, key: { a: 1 }, name: 'a_1', hidden: true, expireAfterSeconds: 5 });
      const index = coll.index('a_1')!;
      assert.equal(index.hidden, true);
      assert.equal(index.entry.multikey, true, 'what the index knew stays');
      assert.equal([...index.scan(first.kv, Buffer.alloc(0), Buffer.alloc(0), false)].length, 2);
      assert.throws(() => first.replaceIndexSpec(coll, 'a_1', { v: 2, key: { a: -1 }, name: 'a_1' }), /may not change 'key'/);
      assert.throws(() => first.replaceIndexSpec(coll, 'b_1', { v: 2, key: { b: 1 }, name: 'b_1' }), /index not found/);
      await first.close();
      const second = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
      assert.deepEqual(second.getCollection('t.m')!.index('a_1')!.entry.spec, { v: 2, key: { a: 1 }, name: 'a_1', hidden: true, expireAfterSeconds: 5 });
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
