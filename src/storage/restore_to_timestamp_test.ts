import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Timestamp } from 'bson';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { StorageEngine, type Collection } from './storage_engine.js';
import { countingClock, dumpStore, equalities, withClockedEngine } from './test_support.js';

function docs(engine: StorageEngine, coll: Collection): Doc[] {
  return [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes));
}

function byIndex(engine: StorageEngine, coll: Collection, name: string): unknown[] {
  return [...coll.index(name)!.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)].map((e) => deserializeDocument(engine.getRecord(coll, e.recordId)!)._id);
}

function update(engine: StorageEngine, coll: Collection, id: unknown, after: Doc): void {
  engine.write((u) => {
    const found = coll.findById(u.kv, id)!;
    u.update(coll, found.recordId, deserializeDocument(found.bytes), found.bytes.length, after);
  });
}

// The store as a snapshot at `at` shows it.
function dumpAt(engine: StorageEngine, at: Timestamp): Record<string, string[]> {
  const view = engine.snapshotAt(at);
  try {
    return engine.kv.withView(view, () => dumpStore(engine));
  } finally {
    view.release();
  }
}

describe('restoring the store to a commit time from its version history', () => {
  it('undoes inserts, updates, deletes, index entries, counts and the multikey flag exactly', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }, { key: { u: 1 }, name: 'u_1', unique: true }]);
    engine.write((u) => {
      for (let i = 1; i <= 4; i++) u.insert(coll, { _id: i, x: i * 10, u: i });
    });
    const other = engine.createCollection('db.other');
    engine.write((u) => u.insert(other, { _id: 'o', v: 1 }));
    const at = clock.now();
    const expected = dumpAt(engine, at);
    const sizeAt = engine.stats.get(coll.entry.id).size;

    update(engine, coll, 1, { _id: 1, x: [1, 2], u: 100 });
    engine.write((u) => assert.ok(u.removeById(coll, 2)));
    const midway = clock.now();
    engine.write((u) => u.insert(coll, { _id: 5, x: 50, u: 5 }));
    update(engine, other, 'o', { _id: 'o', v: 2 });
    assert.equal(coll.index('x_1')!.entry.multikey, true);
    assert.equal(engine.stats.get(coll.entry.id).count, 4);

    const latest = dumpStore(engine);
    assert.equal(engine.canRestoreTo(at).restored, true);
    assert.deepEqual(dumpStore(engine), latest, 'asking changes nothing');
    assert.equal(engine.restoreTo(at).restored, true);
    assert.deepEqual(dumpStore(engine), expected);
    assert.deepEqual(docs(engine, coll), [1, 2, 3, 4].map((i) => ({ _id: i, x: i * 10, u: i })));
    assert.deepEqual(byIndex(engine, coll, 'x_1'), [1, 2, 3, 4]);
    assert.equal(coll.index('x_1')!.entry.multikey, false, 'the flag in memory follows the catalog');
    assert.equal(engine.stats.get(coll.entry.id).count, 4);
    assert.equal(engine.stats.get(coll.entry.id).size, sizeAt);

    // Writes and reads go on from there; the unique index holds again what it held at `at`.
    assert.throws(() => engine.write((u) => u.insert(coll, { _id: 6, u: 3 })), /duplicate key/);
    engine.write((u) => u.insert(coll, { _id: 6, x: 60, u: 100 }));
    update(engine, coll, 2, { _id: 2, x: 21, u: 2 });
    assert.deepEqual(byIndex(engine, coll, 'x_1'), [1, 2, 3, 4, 6]);
    assert.equal(engine.stats.get(coll.entry.id).count, 5);
    // The history after `at` is gone: a snapshot at `at` reads the restored state, and a newer one
    // the writes made since.
    assert.deepEqual(dumpAt(engine, at), expected);
    assert.deepEqual(dumpAt(engine, midway), expected, 'the undone commits are no time\'s state any more');
    assert.deepEqual(dumpAt(engine, clock.now()), dumpStore(engine));
  }));

  // A prepared transaction commits at its commitTimestamp, which later commits may have passed, and
  // its oplog entry takes a time after them (WiredTiger's durable timestamp). Put back to a time
  // between the two, the store is as it was then: the transaction not committed yet.
  it('undoes a commit visible before the time but logged after it', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.write((u) => {
      u.insert(coll, { _id: 'prepared', v: 0 });
      u.insert(coll, { _id: 'other', v: 0 });
    });
    const commitTimestamp = clock.tick();
    update(engine, coll, 'other', { _id: 'other', v: 1 });
    const at = clock.now();
    const expected = dumpStore(engine);
    engine.write((u) => {
      u.commitAt(commitTimestamp);
      u.durableAt(clock.tick());
      const found = coll.findById(u.kv, 'prepared')!;
      u.update(coll, found.recordId, deserializeDocument(found.bytes), found.bytes.length, { _id: 'prepared', v: 1 });
    });
    update(engine, coll, 'prepared', { _id: 'prepared', v: 2 });
    const view = engine.snapshotAt(at);
    try {
      assert.deepEqual(engine.kv.withView(view, () => docs(engine, coll)), [{ _id: 'prepared', v: 1 }, { _id: 'other', v: 1 }], 'a read at the time sees the commit');
    } finally {
      view.release();
    }
    assert.equal(engine.restoreTo(at).restored, true);
    assert.deepEqual(dumpStore(engine), expected);
    assert.deepEqual(docs(engine, coll), [{ _id: 'prepared', v: 0 }, { _id: 'other', v: 1 }]);
  }));

  // Without the oplog a catalog change takes no commit time (the snapshot sees today's catalog): the
  // refusal is for that; with it, for the drop itself (replication/rollback_data_test.ts).
  it('refuses, changing nothing, when a collection or index was dropped after the time', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    const gone = engine.createCollection('db.gone');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => {
      u.insert(coll, { _id: 1, x: 1 });
      u.insert(gone, { _id: 1 });
    });
    const at = clock.now();
    engine.write((u) => u.insert(coll, { _id: 2, x: 2 }));
    engine.dropIndex(coll, 'x_1');
    const before = dumpStore(engine);
    const refused = engine.restoreTo(at);
    assert.equal(refused.restored, false);

    assert.deepEqual(dumpStore(engine), before);
    assert.equal(coll.index('x_1'), undefined);
    engine.dropCollection('db.gone');
    assert.equal(engine.restoreTo(at).restored, false);
    assert.equal(docs(engine, coll).length, 2);
  }));

  it('refuses a change made after the time by a unit without a commit time (a catalog change on a node without the oplog)', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.write((u) => u.insert(coll, { _id: 1, x: 1 }));
    const at = clock.now();
    engine.write((u) => u.insert(coll, { _id: 2, x: 2 }));
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    const refused = engine.restoreTo(at);
    assert.equal(refused.restored, false);
    assert.match((refused as { reason: string }).reason, /without a commit time/);
    assert.equal(docs(engine, coll).length, 2);
    assert.ok(coll.index('x_1'));
    // What the local database keeps (kept collections) may change so and does not stand in the way.
    const local = engine.createCollection('local.kept');
    engine.write((u) => u.insert(local, { _id: 1 }));
    const later = clock.now();
    engine.write((u) => u.insert(coll, { _id: 3, x: 3 }));
    engine.createIndexes(local, [{ key: { y: 1 }, name: 'y_1' }]);
    engine.write((u) => u.insert(local, { _id: 2 }));
    assert.equal(engine.restoreTo(later, { keep: (ns) => ns.startsWith('local.') }).restored, true);
    assert.deepEqual(docs(engine, coll).map((d) => d._id), [1, 2]);
    assert.deepEqual(docs(engine, local).map((d) => d._id), [1, 2], 'a kept collection stays as it is');
    assert.ok(local.index('y_1'));
  }));

  it('changes nothing, in the store or in memory, when what runs alongside it throws', withClockedEngine((engine, clock) => {
    const coll = engine.createCollection('db.c');
    engine.createIndexes(coll, [{ key: { x: 1 }, name: 'x_1' }]);
    engine.write((u) => u.insert(coll, { _id: 1, x: 1 }));
    const at = clock.now();
    engine.write((u) => u.insert(coll, { _id: 2, x: [2, 3] }));
    const before = dumpStore(engine);
    assert.throws(() => engine.restoreTo(at, { alongside: () => { throw new Error('disk full'); } }), /disk full/);
    assert.deepEqual(dumpStore(engine), before);
    assert.equal(engine.getCollection('db.c'), coll);
    assert.equal(coll.index('x_1')!.entry.multikey, true);
    assert.equal(engine.stats.get(coll.entry.id).count, 2);
    assert.equal(engine.restoreTo(at).restored, true, 'the history is still there');
    assert.deepEqual(docs(engine, coll), [{ _id: 1, x: 1 }]);
  }));

  it('refuses after a restart: the history does not reach back', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-storage-'));
    const clock = countingClock();
    let engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
    try {
      const coll = engine.createCollection('db.c');
      engine.write((u) => u.insert(coll, { _id: 1 }));
      const at = clock.now();
      engine.write((u) => u.insert(coll, { _id: 2 }));
      await engine.close();
      engine = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
      const before = dumpStore(engine);
      const refused = engine.restoreTo(at);
      assert.equal(refused.restored, false);
      assert.match((refused as { reason: string }).reason, /does not reach back/);
      assert.deepEqual(dumpStore(engine), before);
      assert.equal(docs(engine, engine.getCollection('db.c')!).length, 2);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
