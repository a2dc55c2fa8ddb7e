import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StorageEngine } from '../storage/storage_engine.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { CriticalSection } from './critical_section.js';
import { COLLECTION_CRITICAL_SECTIONS_NS, CollectionCriticalSections } from './collection_critical_section.js';
import { systemClock } from '../base/clock.js';

async function withStorage(fn: (local: LocalCollections) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-collcs-'));
  const storage = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
  try {
    await fn(new LocalCollections(storage));
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const DROP = { command: 'dropCollection', ns: 'db.c' };
const RENAME = { command: 'renameCollection', ns: 'db.c' };

describe('the collection critical sections of DDLs', () => {
  it('persists a section with its reason before taking it, and deletes it once released', async () => {
    await withStorage(async (local) => {
      const cs = new CriticalSection(systemClock);
      const sections = new CollectionCriticalSections(cs, local);
      await sections.enter('db.c', DROP, false);
      assert.deepEqual(local.find(COLLECTION_CRITICAL_SECTIONS_NS), [{ _id: 'db.c', reason: DROP, blockReads: false }]);
      await sections.enter('db.c', DROP, true);
      assert.deepEqual(local.find(COLLECTION_CRITICAL_SECTIONS_NS), [{ _id: 'db.c', reason: DROP, blockReads: true }]);
      let read = false;
      const waiting = cs.waitFor('db.c', 'read').then(() => { read = true; });
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(read, false, 'reads wait once blockReads is set');
      sections.exit('db.c', DROP);
      await waiting;
      assert.deepEqual(local.find(COLLECTION_CRITICAL_SECTIONS_NS), []);
      assert.equal(cs.isHeld('db.c'), false);
      sections.exit('db.c', DROP); // a coordinator releasing again after a crash
    });
  });

  it('refuses to take or release a section held for another reason', async () => {
    await withStorage(async (local) => {
      const sections = new CollectionCriticalSections(new CriticalSection(systemClock), local);
      await sections.enter('db.c', DROP, true);
      await assert.rejects(sections.enter('db.c', RENAME, true), { code: 117 });
      assert.throws(() => sections.exit('db.c', RENAME), { code: 117 });
    });
  });

  it('takes again at startup every section persisted, with its reads blocked as they were', async () => {
    await withStorage(async (local) => {
      await new CollectionCriticalSections(new CriticalSection(systemClock), local).enter('db.c', DROP, true);
      const cs = new CriticalSection(systemClock);
      const restarted = new CollectionCriticalSections(cs, local);
      assert.deepEqual(restarted.restore(), ['db.c']);
      assert.equal(cs.isHeld('db.c'), true);
      let read = false;
      const waiting = cs.waitFor('db.c', 'read').then(() => { read = true; });
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(read, false);
      restarted.exit('db.c', DROP);
      await waiting;
    });
  });

  it("waits out a migration's section before taking it", async () => {
    await withStorage(async (local) => {
      const cs = new CriticalSection(systemClock);
      cs.enter('db.c');
      const sections = new CollectionCriticalSections(cs, local);
      let taken = false;
      const entering = sections.enter('db.c', DROP, true).then(() => { taken = true; });
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(taken, false);
      cs.exit('db.c');
      await entering;
      assert.equal(cs.isHeld('db.c'), true);
    });
  });
});
