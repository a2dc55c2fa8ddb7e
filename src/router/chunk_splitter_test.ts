import { MaxKey } from 'bson';
import { describe, test } from 'node:test';
import { DEFAULT_CHUNK_SIZE_BYTES } from '../catalog/chunk_size.js';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Binary, Double, Long, MinKey, ObjectId, Timestamp, type Doc } from '../bson/values.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { ChunkManager } from './chunk_manager.js';
import {
  ChunkSplitter, MAX_CHECKS_IN_FLIGHT, parseAutoSplitSettings, SETTINGS_TTL_MS, shouldCheckChunk, splitThreshold,
  statementWrite, type AutoSplitSettings, type ChunkSplitterDeps,
} from './chunk_splitter.js';

const MB = 1024 * 1024;
const uuid = new Binary(Buffer.alloc(16, 7), 4);
const timestamp = new Timestamp({ t: 9, i: 1 });

function chunk(min: Doc, max: Doc, shard: string, minor: number): ChunkType {
  return { _id: new ObjectId(), uuid, min, max, shard, lastmod: new Timestamp({ t: 1, i: minor }), onCurrentShardSince: timestamp, history: [] };
}

// k: [MinKey, 100) on s0, [100, MaxKey) on s1
function manager(unsplittable = false): ChunkManager {
  return ChunkManager.create(
    { _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key: { k: 1 }, unique: false, ...(unsplittable ? { unsplittable } : {}) },
    [chunk({ k: new MinKey() }, { k: 100 }, 's0', 0), chunk({ k: 100 }, { k: new MaxKey() }, 's1', 1)],
  );
}

const enabled1MB: AutoSplitSettings = parseAutoSplitSettings([{ _id: 'chunksize', value: 1 }], []);

describe('parseAutoSplitSettings', () => {
  test('no documents: enabled, 128 MB', () => {
    const s = parseAutoSplitSettings([], []);
    assert.equal(s.enabled, true);
    assert.equal(s.chunkSizeBytes, DEFAULT_CHUNK_SIZE_BYTES);
    assert.equal(s.collections.size, 0);
  });

  test('autosplit {enabled} and chunksize {value: MB}, of any numeric type', () => {
    assert.equal(parseAutoSplitSettings([{ _id: 'autosplit', enabled: false }], []).enabled, false);
    assert.equal(parseAutoSplitSettings([{ _id: 'autosplit', enabled: true }], []).enabled, true);
    assert.equal(parseAutoSplitSettings([{ _id: 'autosplit' }], []).enabled, true, 'a document without enabled is enabled');
    assert.equal(parseAutoSplitSettings([{ _id: 'autosplit', enabled: 0 }], []).enabled, false);
    assert.equal(parseAutoSplitSettings([{ _id: 'chunksize', value: 1 }], []).chunkSizeBytes, MB);
    assert.equal(parseAutoSplitSettings([{ _id: 'chunksize', value: new Double(64) }], []).chunkSizeBytes, 64 * MB);
    assert.equal(parseAutoSplitSettings([{ _id: 'chunksize', value: Long.fromNumber(1024) }], []).chunkSizeBytes, 1024 * MB);
    assert.equal(parseAutoSplitSettings([{ _id: 'balancer', mode: 'off' }], []).enabled, true, 'other settings are ignored');
  });

  test('an invalid chunk size is the default', () => {
    for (const value of [0, 0.5, 1025, 'big', null, undefined]) {
      assert.equal(parseAutoSplitSettings([{ _id: 'chunksize', value }], []).chunkSizeBytes, DEFAULT_CHUNK_SIZE_BYTES, String(value));
    }
  });

  test('config.collections noAutoSplit and maxChunkSizeBytes', () => {
    const s = parseAutoSplitSettings([], [{ _id: 'db.a', noAutoSplit: true }, { _id: 'db.b', maxChunkSizeBytes: Long.fromNumber(2 * MB) }, { _id: 'db.c', maxChunkSizeBytes: 0 }]);
    assert.deepEqual(s.collections.get('db.a'), { noAutoSplit: true, maxChunkSizeBytes: undefined });
    assert.deepEqual(s.collections.get('db.b'), { noAutoSplit: false, maxChunkSizeBytes: 2 * MB });
    assert.deepEqual(s.collections.get('db.c'), { noAutoSplit: false, maxChunkSizeBytes: undefined });
  });
});

describe('shouldCheckChunk', () => {
  const idle = { checkInFlight: false, checksRunning: 0 };

  test('a fifth of the chunk size written (MongoDB splitThreshold)', () => {
    assert.equal(splitThreshold(MB), MB / 5);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: MB / 5 - 1 }, enabled1MB, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: MB / 5 }, enabled1MB, 'db.c'), true);
    const defaults = parseAutoSplitSettings([], []);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: MB }, defaults, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: DEFAULT_CHUNK_SIZE_BYTES / 5 }, defaults, 'db.c'), true);
  });

  test('the collection maxChunkSizeBytes wins over the cluster chunk size', () => {
    const s = parseAutoSplitSettings([{ _id: 'chunksize', value: 1 }], [{ _id: 'db.c', maxChunkSizeBytes: 10 * MB }]);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: MB }, s, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: 2 * MB }, s, 'db.c'), true);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten: MB }, s, 'db.other'), true);
  });

  test('never with unknown settings, autosplit off, noAutoSplit, a check in flight, or too many checks running', () => {
    const bytesWritten = 100 * MB;
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten }, undefined, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten }, parseAutoSplitSettings([{ _id: 'autosplit', enabled: false }], []), 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten }, parseAutoSplitSettings([], [{ _id: 'db.c', noAutoSplit: true }]), 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten, checkInFlight: true }, enabled1MB, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten, checksRunning: MAX_CHECKS_IN_FLIGHT }, enabled1MB, 'db.c'), false);
    assert.equal(shouldCheckChunk({ ...idle, bytesWritten, checksRunning: MAX_CHECKS_IN_FLIGHT - 1 }, enabled1MB, 'db.c'), true);
  });
});

describe('statementWrite', () => {
  const cm = manager();

  test('an insert: its shard key and document size', () => {
    const w = statementWrite(cm, 'insert', { _id: 1, k: 5, pad: 'x'.repeat(100) });
    assert.deepEqual(w?.shardKey, { k: 5 });
    assert.ok(w!.bytes > 100 && w!.bytes < 150);
  });

  test('an update: the key its filter pins, the size of the update or replacement document', () => {
    const w = statementWrite(cm, 'update', { q: { k: 150 }, u: { $set: { pad: 'y'.repeat(200) } } });
    assert.deepEqual(w?.shardKey, { k: 150 });
    assert.ok(w!.bytes > 200 && w!.bytes < 250);
    const r = statementWrite(cm, 'update', { q: { _id: 3 }, u: { k: 7, v: 1 } });
    assert.deepEqual(r?.shardKey, { k: 7 }, 'a replacement carrying the key');
    assert.equal(statementWrite(cm, 'update', { q: { _id: 3 }, u: { v: 1 } }), undefined, 'a replacement without the key');
    assert.equal(statementWrite(cm, 'update', { q: { k: { $gt: 3 } }, u: { $inc: { v: 1 } } }), undefined, 'a range');
    assert.equal(statementWrite(cm, 'update', { q: { k: 3 }, u: { $inc: { v: 1 } }, multi: true }), undefined, 'multi');
    assert.ok(statementWrite(cm, 'update', { q: { k: 3 }, u: [{ $set: { v: 1 } }] })!.bytes > 0, 'a pipeline');
  });
});

// A splitter whose shard and config server are fakes the test controls.
function harness(settings: Doc[] = [{ _id: 'chunksize', value: 1 }], collections: Doc[] = []) {
  const calls: { autoSplitVector: { shard: string; db: string; cmd: Doc }[]; commits: Doc[]; invalidated: string[]; reads: number } = { autoSplitVector: [], commits: [], invalidated: [], reads: 0 };
  let splitKeys: Doc[] = [{ k: 500 }];
  let release: () => void = () => {};
  let gate: Promise<void> | undefined;
  let failWith: Error | undefined;
  let clock = 0;
  const deps: ChunkSplitterDeps = {
    async readSettings() {
      calls.reads += 1;
      return { settings, collections };
    },
    async autoSplitVector(shard, db, cmd) {
      calls.autoSplitVector.push({ shard, db, cmd });
      if (gate) await gate;
      if (failWith) throw failWith;
      return { splitKeys, ok: 1 };
    },
    async commitSplit(cmd) {
      calls.commits.push(cmd);
    },
    invalidateRouting: (ns) => calls.invalidated.push(ns),
    logger: pino({ level: 'silent' }),
    now: () => clock,
  };
  return {
    splitter: new ChunkSplitter(deps),
    calls,
    setSplitKeys: (keys: Doc[]) => { splitKeys = keys; },
    hold: () => { gate = new Promise((r) => { release = r; }); },
    release: () => { gate = undefined; release(); },
    fail: (err: Error | undefined) => { failWith = err; },
    advance: (ms: number) => { clock += ms; },
    settings: (next: Doc[]) => { settings = next; },
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const docs = (from: number, n: number, bytes: number) => Array.from({ length: n }, (_, i) => ({ _id: from + i, k: from + i, pad: 'x'.repeat(bytes) }));

describe('ChunkSplitter', () => {
  test('reads the settings in the background, then checks a chunk once a fifth of the chunk size was written', async () => {
    const h = harness();
    const cm = manager();
    h.splitter.noteWrites(cm, 'insert', docs(200, 100, 1000), { n: 100, ok: 1 });
    assert.equal(h.calls.reads, 1);
    assert.equal(h.calls.autoSplitVector.length, 0, 'nothing before the settings are known');
    await settle();
    h.splitter.noteWrites(cm, 'insert', docs(300, 150, 1000), { n: 150, ok: 1 }); // ~250 KB in all on [100, MaxKey)
    assert.equal(h.calls.autoSplitVector.length, 1);
    const [call] = h.calls.autoSplitVector;
    assert.equal(call!.shard, 's1');
    assert.equal(call!.db, 'db');
    assert.equal(call!.cmd.autoSplitVector, 'c');
    assert.deepEqual(call!.cmd.keyPattern, { k: 1 });
    assert.deepEqual(call!.cmd.min, { k: 100 });
    assert.equal(call!.cmd.maxChunkSizeBytes, MB);
    await settle();
    assert.deepEqual(h.calls.commits, [{ _configsvrCommitChunkSplit: 'db.c', chunkRange: { min: { k: 100 }, max: { k: new MaxKey() } }, splitPoints: [{ k: 500 }] }]);
    assert.deepEqual(h.calls.invalidated, ['db.c']);
    assert.equal(h.splitter.stats.splits, 1);
    // The old table still routes writes to the chunk just split: no further check of it.
    h.splitter.noteWrites(cm, 'insert', docs(1000, 300, 1000), { n: 300, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1);
  });

  test('an unsplittable collection (moveCollection, unshardCollection) is never checked', async () => {
    const h = harness();
    h.splitter.currentSettings();
    await settle();
    h.splitter.noteWrites(manager(true), 'insert', docs(200, 300, 1000), { n: 300, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 0);
    h.splitter.noteWrites(manager(), 'insert', docs(200, 300, 1000), { n: 300, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1, 'the same writes to a sharded collection are');
  });

  test('one check per chunk at a time; the write path never waits for it', async () => {
    const h = harness();
    const cm = manager();
    h.splitter.currentSettings();
    await settle();
    h.hold();
    h.setSplitKeys([]);
    h.splitter.noteWrites(cm, 'insert', docs(200, 250, 1000), { n: 250, ok: 1 });
    h.splitter.noteWrites(cm, 'insert', docs(500, 250, 1000), { n: 250, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1, 'the second batch found the check in flight');
    h.splitter.noteWrites(cm, 'insert', docs(-300, 250, 1000), { n: 250, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 2, 'the other chunk is checked on its own');
    h.release();
    await settle();
    assert.equal(h.calls.commits.length, 0, 'no split keys: nothing to commit');
    // Bytes count from the start of the last check: 250 KB were written during it.
    h.splitter.noteWrites(cm, 'insert', docs(800, 1, 10), { n: 1, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 3);
  });

  test('failed statements are not counted; failures are logged, not thrown', async () => {
    const h = harness();
    const cm = manager();
    h.splitter.currentSettings();
    await settle();
    const writeErrors = Array.from({ length: 250 }, (_, index) => ({ index, code: 11000 }));
    h.splitter.noteWrites(cm, 'insert', docs(200, 250, 1000), { n: 0, writeErrors, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 0);
    h.fail(new Error('shard down'));
    h.splitter.noteWrites(cm, 'insert', docs(200, 250, 1000), { n: 250, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1);
    await settle();
    assert.equal(h.splitter.stats.failures, 1);
    h.fail(undefined);
    h.splitter.noteWrites(cm, 'insert', docs(500, 250, 1000), { n: 250, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 2, 'checked again after a failure');
  });

  test('updates count their update document against the chunk their filter pins', async () => {
    const h = harness();
    const cm = manager();
    h.splitter.currentSettings();
    await settle();
    const updates = Array.from({ length: 250 }, (_, i) => ({ q: { k: 7 }, u: { $set: { pad: `${i}`.padEnd(1000, 'z') } } }));
    h.splitter.noteWrites(cm, 'update', updates, { n: 250, nModified: 250, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1);
    assert.equal(h.calls.autoSplitVector[0]!.shard, 's0');
  });

  test('autosplit off or noAutoSplit: nothing is checked', async () => {
    for (const h of [harness([{ _id: 'autosplit', enabled: false }, { _id: 'chunksize', value: 1 }]), harness([{ _id: 'chunksize', value: 1 }], [{ _id: 'db.c', noAutoSplit: true }])]) {
      const cm = manager();
      h.splitter.currentSettings();
      await settle();
      h.splitter.noteWrites(cm, 'insert', docs(200, 2000, 1000), { n: 2000, ok: 1 });
      await settle();
      assert.equal(h.calls.autoSplitVector.length, 0);
    }
  });

  test('settings are cached for SETTINGS_TTL_MS and dropped by a write to config.settings', async () => {
    const h = harness([{ _id: 'autosplit', enabled: false }]);
    const cm = manager();
    h.splitter.currentSettings();
    await settle();
    h.splitter.noteWrites(cm, 'insert', docs(200, 10, 10), { n: 10, ok: 1 });
    assert.equal(h.calls.reads, 1);
    h.advance(SETTINGS_TTL_MS - 1);
    h.splitter.currentSettings();
    assert.equal(h.calls.reads, 1);
    h.advance(1);
    h.settings([{ _id: 'chunksize', value: 1 }]);
    assert.equal(h.splitter.currentSettings()?.enabled, false, 'the old settings serve while the refresh runs');
    assert.equal(h.calls.reads, 2);
    await settle();
    assert.equal(h.splitter.currentSettings()?.enabled, true);
    h.splitter.noteConfigWrite('config', 'mongos');
    assert.ok(h.splitter.currentSettings() !== undefined, 'other config collections do not matter');
    h.settings([{ _id: 'autosplit', enabled: false }]);
    h.splitter.noteConfigWrite('config', 'settings');
    assert.equal(h.splitter.currentSettings(), undefined, 'unknown, so nothing splits on stale settings');
    await settle();
    assert.equal(h.splitter.currentSettings()?.enabled, false);
  });

  test('a refresh that started before an invalidation is discarded', async () => {
    const h = harness([{ _id: 'chunksize', value: 1 }]);
    h.splitter.currentSettings(); // read in flight
    h.settings([{ _id: 'autosplit', enabled: false }]);
    h.splitter.invalidateSettings();
    await settle();
    assert.equal(h.splitter.currentSettings(), undefined);
    await settle();
    assert.equal(h.splitter.currentSettings()?.enabled, false);
  });

  test('a chunk whose routing changed starts counting from zero', async () => {
    const h = harness();
    const cm = manager();
    h.splitter.currentSettings();
    await settle();
    h.splitter.noteWrites(cm, 'insert', docs(200, 150, 1000), { n: 150, ok: 1 }); // ~150 KB of 200
    const [, top] = cm.allChunks();
    const moved = cm.applyChunkChanges([{ ...top!, shard: 's0', lastmod: new Timestamp({ t: 2, i: 0 }) }]);
    h.splitter.noteWrites(moved, 'insert', docs(400, 100, 1000), { n: 100, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 0, 'the moved chunk has only 100 KB');
    h.splitter.noteWrites(cm, 'insert', docs(600, 100, 1000), { n: 100, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 1, 'the old chunk object kept its own count');
    h.splitter.noteWrites(moved, 'insert', docs(700, 120, 1000), { n: 120, ok: 1 });
    assert.equal(h.calls.autoSplitVector.length, 2);
    assert.equal(h.calls.autoSplitVector[1]!.shard, 's0');
  });
});
