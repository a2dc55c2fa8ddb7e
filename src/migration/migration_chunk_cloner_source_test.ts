import { MaxKey } from 'bson';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserializeDocument, MinKey, serializeDocument, type Doc } from '../bson/values.js';
import { compileFilter } from '../query/match/matcher.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { BATCH_BYTES, MigrationChunkClonerSource, type CloneBatch } from './migration_chunk_cloner_source.js';

async function withCollection(fn: (engine: StorageEngine, local: LocalCollections) => void): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-cloner-'));
  const engine = StorageEngine.open(dir, { compilePartialFilter: (f) => { const m = compileFilter(f); return (d) => m.matches(d); } });
  try {
    const coll = engine.createCollection('t.c');
    engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
    const local = new LocalCollections(engine);
    // Inserted out of key order, so the test sees that batches follow the shard key index.
    local.write((w) => { for (const k of [5, 1, 9, 3, 7, 12, 0]) w.insert('t.c', { _id: k, k }); });
    fn(engine, local);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The batch's array decoded, checked against the count and size the batch reports.
function docs(batch: CloneBatch): Doc[] {
  const list = Object.values(deserializeDocument(batch.objects.bytes)) as Doc[];
  assert.equal(list.length, batch.count);
  assert.equal(list.reduce((n, d) => n + serializeDocument(d).length, 0), batch.size);
  return list;
}
const ids = (batch: CloneBatch) => docs(batch).map((d) => d._id);

describe('the chunk cloner', () => {
  it('serves the range in shard key order, then an empty batch', () => withCollection((engine) => {
    const cloner = new MigrationChunkClonerSource(engine, 't.c', { min: { k: new MinKey() }, max: { k: 9 } }, { k: 1 });
    cloner.start();
    assert.deepEqual(ids(cloner.nextCloneBatch()), [0, 1, 3, 5, 7]);
    assert.deepEqual(ids(cloner.nextCloneBatch()), []);
    cloner.stop();
  }));

  it('captures writes in the range and serves their current state', () => withCollection((engine, local) => {
    const cloner = new MigrationChunkClonerSource(engine, 't.c', { min: { k: 2 }, max: { k: new MaxKey() } }, { k: 1 });
    cloner.start();
    local.write((w) => {
      w.insert('t.c', { _id: 20, k: 20 });
      w.insert('t.c', { _id: 1.5, k: 1.5 }); // outside the range: not captured
      w.update('t.c', { _id: 5 }, { $set: { v: 'new' } });
      w.delete('t.c', { _id: 9 });
      w.insert('t.c', { _id: 30, k: 30 });
      w.delete('t.c', { _id: 30 });
      w.update('t.c', { _id: 7 }, { $set: { k: 1 } }); // moved out of the range: a deletion there
    });
    assert.equal(cloner.pendingMods, 5);
    // The clone serves the range as it is now (9 deleted, 7 moved out, 20 inserted); _transferMods
    // serves what the clone did not: the documents gone from the range, as deletions.
    assert.deepEqual(ids(cloner.nextCloneBatch()), [3, 5, 12, 20]);
    assert.equal(cloner.pendingMods, 3, '5 and 20 were served in their current state');
    local.write((w) => w.update('t.c', { _id: 5 }, { $set: { v: 'newer' } }));
    const mods = cloner.nextModsBatch();
    assert.deepEqual(mods.reload.map((b) => deserializeDocument(b)), [{ _id: 5, k: 5, v: 'newer' }], 'written again after it was served');
    assert.deepEqual(mods.deleted.map((d) => d._id).sort(), [30, 7, 9].sort());
    assert.equal(cloner.pendingMods, 0);
    cloner.stop();
    local.write((w) => w.insert('t.c', { _id: 40, k: 40 }));
    assert.equal(cloner.pendingMods, 0, 'a stopped cloner observes nothing');
  }));
  it('resumes each batch after the last entry served, across equal shard keys', () => withCollection((engine, local) => {
    const pad = 'x'.repeat(100 * 1024);
    // 30 documents of ~100 KB share k = 4, so batches of BATCH_BYTES end inside that key.
    local.write((w) => { for (let i = 100; i < 130; i++) w.insert('t.c', { _id: i, k: 4, pad }); });
    const cloner = new MigrationChunkClonerSource(engine, 't.c', { min: { k: 1 }, max: { k: 10 } }, { k: 1 });
    cloner.start();
    const served: unknown[] = [];
    let batches = 0;
    for (let batch = cloner.nextCloneBatch(); batch.count > 0; batch = cloner.nextCloneBatch()) {
      assert.ok(batch.size <= BATCH_BYTES || batch.count === 1);
      served.push(...ids(batch));
      batches++;
      // A document written behind the walk is left to _transferMods; one ahead of it is cloned.
      if (batches === 1) local.write((w) => { w.insert('t.c', { _id: 200, k: 1 }); w.insert('t.c', { _id: 201, k: 8 }); });
    }
    assert.ok(batches >= 3, `${batches} batches`);
    const expected = [1, 3, ...Array.from({ length: 30 }, (_, i) => 100 + i), 5, 7, 201, 9];
    assert.deepEqual(served, expected);
    assert.equal(cloner.pendingMods, 1, 'only 200, behind the walk, is left to _transferMods');
    cloner.stop();
  }));

  it('serves a document once when its shard key moves up the range during the clone', () => withCollection((engine, local) => {
    // ~400 KB each, so a batch holds two documents.
    local.write((w) => w.update('t.c', {}, { $set: { pad: 'x'.repeat(400 * 1024) } }, { multi: true }));
    const cloner = new MigrationChunkClonerSource(engine, 't.c', { min: { k: 0 }, max: { k: 100 } }, { k: 1 });
    cloner.start();
    const first = cloner.nextCloneBatch();
    assert.deepEqual(ids(first), [0, 1]);
    const seen = new Set(ids(first));
    const moved = 0;
    local.write((w) => w.update('t.c', { _id: moved }, { $set: { k: 50 } }));
    const rest: unknown[] = [];
    for (let batch = cloner.nextCloneBatch(); batch.count > 0; batch = cloner.nextCloneBatch()) rest.push(...ids(batch));
    assert.ok(!rest.includes(moved), `${String(moved)} served twice`);
    assert.deepEqual([...seen, ...rest].sort((a, b) => Number(a) - Number(b)), [0, 1, 3, 5, 7, 9, 12]);
    cloner.stop();
  }));

  it('splits the captured writes into batches of at most BATCH_BYTES', () => withCollection((engine, local) => {
    const cloner = new MigrationChunkClonerSource(engine, 't.c', { min: { k: 100 }, max: { k: 200 } }, { k: 1 });
    cloner.start();
    const pad = 'y'.repeat(100 * 1024);
    local.write((w) => { for (let i = 100; i < 130; i++) w.insert('t.c', { _id: i, k: i, pad }); });
    local.write((w) => w.delete('t.c', { _id: 129 }));
    const reloaded: unknown[] = [];
    const deletedIds: unknown[] = [];
    for (let batch = cloner.nextModsBatch(); batch.reload.length + batch.deleted.length > 0; batch = cloner.nextModsBatch()) {
      assert.ok(batch.size <= BATCH_BYTES, `${batch.size} bytes`);
      reloaded.push(...batch.reload.map((b) => deserializeDocument(b)._id));
      deletedIds.push(...batch.deleted.map((d) => d._id));
    }
    assert.deepEqual(reloaded, Array.from({ length: 29 }, (_, i) => 100 + i));
    assert.deepEqual(deletedIds, [129]);
    cloner.stop();
  }));
});
