import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Timestamp, UUID } from 'bson';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StorageEngine } from '../storage/storage_engine.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { CriticalSection } from './critical_section.js';
import { databaseCriticalSectionKind, databaseCriticalSectionWait, DatabaseCriticalSections } from './database_critical_section.js';
import { systemClock } from '../base/clock.js';

const dbVersion = { uuid: new UUID(), timestamp: new Timestamp({ t: 1, i: 1 }), lastMod: 1 };

async function withStorage(fn: (local: LocalCollections) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-dbcs-'));
  const storage = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
  try {
    await fn(new LocalCollections(storage));
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('the database critical section', () => {
  it('classes catalog and plain reads as reads, $out/$merge and everything else as writes', () => {
    assert.equal(databaseCriticalSectionKind('find', {}), 'read');
    assert.equal(databaseCriticalSectionKind('listIndexes', {}), 'read');
    assert.equal(databaseCriticalSectionKind('aggregate', { pipeline: [{ $match: {} }] }), 'read');
    assert.equal(databaseCriticalSectionKind('aggregate', { pipeline: [{ $match: {} }, { $out: 'x' }] }), 'write');
    assert.equal(databaseCriticalSectionKind('insert', {}), 'write');
    assert.equal(databaseCriticalSectionKind('createIndexes', {}), 'write');
  });

  it('holds versioned writes, then reads, and only requests that carry a databaseVersion', async () => {
    await withStorage(async (local) => {
      const cs = new CriticalSection(systemClock);
      const sections = new DatabaseCriticalSections(cs, local);
      sections.enter('d', 'r1');
      const order: string[] = [];
      const write = databaseCriticalSectionWait(cs, 'insert', 'd', { insert: 'c', databaseVersion: dbVersion })!.then(() => order.push('write'));
      assert.equal(databaseCriticalSectionWait(cs, 'find', 'd', { find: 'c', databaseVersion: dbVersion }), undefined, 'reads go on while only writes are blocked');
      assert.equal(databaseCriticalSectionWait(cs, 'insert', 'd', { insert: 'c' }), undefined, 'an unversioned request is not held');
      assert.equal(databaseCriticalSectionWait(cs, 'insert', 'other', { insert: 'c', databaseVersion: dbVersion }), undefined);
      assert.equal(databaseCriticalSectionWait(cs, 'insert', 'd', { insert: 'c', shardVersion: {} }), undefined);
      sections.blockReads('d', 'r1');
      const read = databaseCriticalSectionWait(cs, 'find', 'd', { find: 'c', databaseVersion: dbVersion })!.then(() => order.push('read'));
      await tick();
      assert.deepEqual(order, []);
      assert.equal(sections.exit('d', 'other reason'), false);
      assert.equal(sections.exit('d', 'r1'), true);
      await Promise.all([write, read]);
      assert.deepEqual(order.sort(), ['read', 'write']);
      assert.equal(cs.isHeld('d'), false);
    });
  });

  it('refuses another holder, and blocking reads without holding the section', async () => {
    await withStorage(async (local) => {
      const sections = new DatabaseCriticalSections(new CriticalSection(systemClock), local);
      assert.throws(() => sections.blockReads('d', 'r1'), (e: { code: number }) => e.code === 117);
      sections.enter('d', 'r1');
      sections.enter('d', 'r1');
      assert.throws(() => sections.enter('d', 'r2'), (e: { code: number }) => e.code === 117);
      assert.throws(() => sections.blockReads('d', 'r2'), (e: { code: number }) => e.code === 117);
    });
  });

  it('comes back after a restart, reads blocked or not as they were', async () => {
    await withStorage(async (local) => {
      const before = new DatabaseCriticalSections(new CriticalSection(systemClock), local);
      before.enter('a', 'ra');
      before.enter('b', 'rb');
      before.blockReads('b', 'rb');
      before.enter('c', 'rc');
      before.exit('c', 'rc');
      const cs = new CriticalSection(systemClock);
      const after = new DatabaseCriticalSections(cs, local);
      assert.deepEqual(after.restore().sort(), ['a', 'b']);
      assert.equal(after.holder('a'), 'ra');
      assert.equal(cs.isHeld('c'), false);
      assert.equal(databaseCriticalSectionWait(cs, 'find', 'a', { find: 'x', databaseVersion: dbVersion }), undefined, 'reads pass a section that blocks writes only');
      await assert.rejects(cs.waitFor('b', 'read', 20), (e: { code: number }) => e.code === 262);
      after.blockReads('a', 'ra');
      assert.equal(after.exit('b', 'rb'), true);
    });
  });
});
