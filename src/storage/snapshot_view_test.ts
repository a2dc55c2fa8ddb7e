import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { StorageEngine, type Collection } from './storage_engine.js';
import { countingClock, equalities, withClockedEngine } from './test_support.js';
import { MongoError } from '../base/errors.js';

function ids(engine: StorageEngine, coll: Collection): unknown[] {
  return [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes));
}

function byIndex(engine: StorageEngine, coll: Collection, name: string, reverse = false): unknown[] {
  const index = coll.index(name)!;
  return [...index.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), reverse)].map((e) => deserializeDocument(engine.getRecord(coll, e.recordId)!).x);
}

function insert(engine: StorageEngine, coll: Collection, doc: Doc): void {
  engine.write((u) => u.insert(coll, doc));
}

function update(engine: StorageEngine, coll: Collection, id: unknown, after: Doc): void {
  engine.write((u) => {
    const found = coll.findById(u.kv, id)!;
    const before = deserializeDocument(found.bytes);
    u.update(coll, found.recordId, before, found.bytes.length, after);
  });
}

describe('snapshot reads (versions by commit timestamp)', () => {
  it('reads documents and index entries as they were at a cluster time', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    insert(engine, coll, { _id: 1, x: 10 });
    insert(engine, coll, { _id: 2, x: 20 });
    const at = clock.now();
    update(engine, coll, 1, { _id: 1, x: 30 });
    engine.write((u) => assert.ok(u.removeById(coll, 2)));
    insert(engine, coll, { _id: 3, x: 5 });

    const view = engine.snapshotAt(at);
    assert.deepEqual(engine.kv.withView(view, () => ids(engine, coll)), [{ _id: 1, x: 10 }, { _id: 2, x: 20 }]);
    assert.deepEqual(engine.kv.withView(view, () => byIndex(engine, coll, 'x_1')), [10, 20]);
    assert.deepEqual(engine.kv.withView(view, () => byIndex(engine, coll, 'x_1', true)), [20, 10]);
    assert.equal(engine.kv.withView(view, () => coll.findById(engine.kv, 3)), undefined);
    assert.deepEqual(engine.kv.withView(view, () => deserializeDocument(coll.findById(engine.kv, 2)!.bytes)), { _id: 2, x: 20 });
    // Outside the view, the latest state.
    assert.deepEqual(ids(engine, coll), [{ _id: 1, x: 30 }, { _id: 3, x: 5 }]);
    assert.deepEqual(byIndex(engine, coll, 'x_1'), [5, 30]);
    view.release();
  }));

  it('keeps a range begun in a snapshot on that snapshot while commits land between its steps', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    for (let i = 1; i <= 4; i++) insert(engine, coll, { _id: i, x: i });
    const view = engine.snapshotAt(clock.now());
    const records = engine.kv.withView(view, () => engine.scanRecords(coll))[Symbol.iterator]();
    assert.deepEqual(deserializeDocument(records.next().value!.bytes), { _id: 1, x: 1 });
    engine.write((u) => u.removeById(coll, 2));
    update(engine, coll, 3, { _id: 3, x: 33 });
    insert(engine, coll, { _id: 5, x: 5 });
    const rest = [];
    for (let r = records.next(); !r.done; r = records.next()) rest.push(deserializeDocument(r.value.bytes));
    assert.deepEqual(rest, [{ _id: 2, x: 2 }, { _id: 3, x: 3 }, { _id: 4, x: 4 }]);
    view.release();
  }));

  it('a limited range counts only what the snapshot holds', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    insert(engine, coll, { _id: 1, x: 1 });
    const at = clock.now();
    insert(engine, coll, { _id: 2, x: 2 });
    insert(engine, coll, { _id: 3, x: 3 });
    const view = engine.snapshotAt(at);
    const newest = engine.kv.withView(view, () => [...engine.kv.space(coll.space).range(Buffer.alloc(0), Buffer.alloc(0), { reverse: true, limit: 1 })]);
    assert.deepEqual(newest.map((e) => deserializeDocument(e.value)), [{ _id: 1, x: 1 }]);
    view.release();
  }));

  it('leaves out what an aborted unit wrote', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    insert(engine, coll, { _id: 1, x: 1 });
    const at = clock.now();
    assert.throws(() => engine.write((u) => {
      u.insert(coll, { _id: 2, x: 2 });
      update(engine, coll, 1, { _id: 1, x: 100 });
      throw new Error('abort');
    }), /abort/);
    const view = engine.snapshotAt(at);
    assert.deepEqual(engine.kv.withView(view, () => ids(engine, coll)), [{ _id: 1, x: 1 }]);
    assert.deepEqual(ids(engine, coll), [{ _id: 1, x: 1 }]);
    view.release();
  }));

  it('answers SnapshotTooOld for a time older than the history kept, and keeps what a pinned reader needs', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    const clock = countingClock();
    const engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock, history: { windowMs: 0, maxBytes: 1 << 30 } });
    try {
      const coll = engine.createCollection('db.c');
      insert(engine, coll, { _id: 1, x: 1 });
      const pinnedAt = clock.now();
      const pinned = engine.snapshotAt(pinnedAt);
      update(engine, coll, 1, { _id: 1, x: 2 });
      const unpinnedAt = clock.now();
      update(engine, coll, 1, { _id: 1, x: 3 });
      assert.deepEqual(engine.kv.withView(pinned, () => ids(engine, coll)), [{ _id: 1, x: 1 }]);
      pinned.release();
      update(engine, coll, 1, { _id: 1, x: 4 });
      assert.throws(() => engine.snapshotAt(unpinnedAt), (err: unknown) => err instanceof MongoError && err.code === 239);
      const now = engine.snapshotAt(clock.now());
      assert.deepEqual(engine.kv.withView(now, () => ids(engine, coll)), [{ _id: 1, x: 4 }]);
      now.release();
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers SnapshotTooOld for a time before the engine opened (history is not kept across restarts)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    const clock = countingClock();
    clock.ticks = 5;
    const engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
    try {
      const before = countingClock();
      before.ticks = 4;
      assert.throws(() => engine.snapshotAt(before.now()), (err: unknown) => err instanceof MongoError && err.code === 239 && /older than the oldest available timestamp/.test(err.message));
      engine.snapshotAt(clock.now()).release();
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
