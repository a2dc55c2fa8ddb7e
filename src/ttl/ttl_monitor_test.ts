import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { MaxKey } from 'bson';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { MigrationChunkClonerSource } from '../migration/migration_chunk_cloner_source.js';
import { StorageEngine, type Collection } from '../storage/storage_engine.js';
import type { TtlDeletionScope } from './ttl_deletion_scope.js';
import { TtlMonitor } from './ttl_monitor.js';
import { DEFAULT_TTL_LIMITS, type TtlLimits } from './ttl_policy.js';
import { systemClock } from '../base/clock.js';

const NOW = Date.UTC(2024, 0, 1);
const ago = (s: number) => new Date(NOW - s * 1000);
const logger = pino({ level: 'silent' });

interface Setup {
  engine: StorageEngine;
  coll: Collection;
  monitor(options?: { limits?: Partial<TtlLimits>; scope?: (ns: string) => TtlDeletionScope; sleepMs?: number }): TtlMonitor;
  ids(): unknown[];
}

function withTtl(fn: (s: Setup) => Promise<void> | void) {
  return async (): Promise<void> => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-ttl-'));
    const engine = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
    const coll = engine.createCollection('app.events');
    const setup: Setup = {
      engine,
      coll,
      monitor: (o = {}) => new TtlMonitor(engine, o.scope ?? (() => ({ kind: 'all' })), logger, {
        sleepMs: o.sleepMs ?? 60_000, limits: { ...DEFAULT_TTL_LIMITS, ...o.limits }, clock: { ...systemClock, now: () => NOW },
      }),
      ids: () => [...engine.scanRecords(coll)].map((r) => deserializeDocument(r.bytes)._id).sort((a, b) => Number(a) - Number(b)),
    };
    try {
      await fn(setup);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function insert(engine: StorageEngine, coll: Collection, docs: Doc[]): void {
  engine.write((unit) => { for (const d of docs) unit.insert(coll, d); });
}

describe('the TTL monitor', () => {
  it('deletes the documents whose date (or earliest date) is expireAfterSeconds old, and nothing else', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 60 }]);
    insert(engine, coll, [
      { _id: 1, at: ago(3600) },
      { _id: 2, at: ago(60) }, // exactly expireAfterSeconds old: expired
      { _id: 3, at: ago(59) },
      { _id: 4, at: [ago(10), ago(120)] }, // the earliest date decides
      { _id: 5, at: [ago(10), 'x'] },
      { _id: 6, at: NOW - 3600_000 }, // a number, not a date: never expires
      { _id: 7 },
      { _id: 8, at: [ago(500), ago(400)] },
    ]);
    const ttl = monitor();
    await ttl.runPass();
    assert.deepEqual(ids(), [3, 5, 6, 7]);
    assert.deepEqual(ttl.statistics, { passes: 1, subPasses: 1, deletedDocuments: 4, invalidTTLIndexSkips: 0 });
    await ttl.runPass();
    assert.deepEqual(ttl.statistics, { passes: 2, subPasses: 2, deletedDocuments: 4, invalidTTLIndexSkips: 0 });
    const index = coll.index('at_1')!;
    assert.equal([...index.scan(engine.kv, Buffer.alloc(0), Buffer.alloc(0), false)].length, 5, 'the deleted documents left no index entries (5 has two)');
  }));

  it('reads a descending index oldest first, and a hidden one too', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: -1 }, name: 'at_-1', expireAfterSeconds: 100, hidden: true }]);
    insert(engine, coll, [{ _id: 1, at: ago(50) }, { _id: 2, at: ago(100) }, { _id: 3, at: ago(1e6) }, { _id: 4, at: ago(-100) }]);
    await monitor().runPass();
    assert.deepEqual(ids(), [1, 4]);
  }));

  it('deletes in write units of batchEntries entries, each seen by the op observers', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    insert(engine, coll, Array.from({ length: 35 }, (_, i) => ({ _id: i, at: ago(i + 1), k: i })));
    let units = 0;
    const write = engine.write.bind(engine);
    engine.write = (fn) => { units += 1; return write(fn); };
    const deleted: unknown[] = [];
    engine.observers.push({ onDelete: (_w, _ns, before) => deleted.push(before._id) });
    const ttl = monitor({ limits: { batchEntries: 10 } });
    await ttl.runPass();
    assert.deepEqual(ids(), []);
    assert.equal(deleted.length, 35);
    assert.equal(units, 4, '10 + 10 + 10 + 5');
    assert.equal(deleted[0], 34, 'oldest first');
    assert.equal(ttl.statistics.deletedDocuments, 35);
  }));

  it('stops a visit at its target and comes back after the other indexes, in as many sub-passes as it takes', withTtl(async ({ engine, coll, monitor, ids }) => {
    const other = engine.createCollection('app.other');
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    engine.createIndexes(other, [{ v: 2, key: { t: 1 }, name: 't_1', expireAfterSeconds: 0 }]);
    insert(engine, coll, Array.from({ length: 25 }, (_, i) => ({ _id: i, at: ago(1) })));
    insert(engine, other, Array.from({ length: 7 }, (_, i) => ({ _id: i, t: ago(1) })));
    const order: string[] = [];
    engine.observers.push({ onDelete: (_w, ns) => { if (order[order.length - 1] !== ns) order.push(ns); } });
    // A sub-pass has no time: each round of visits is a sub-pass of its own.
    const ttl = monitor({ limits: { batchEntries: 5, targetDocs: 10, subPassTargetMs: 0 } });
    await ttl.runPass();
    assert.deepEqual(ids(), []);
    assert.equal([...engine.scanRecords(other)].length, 0);
    assert.deepEqual(order, ['app.events', 'app.other', 'app.events'], 'the other collection between two visits of the first');
    assert.equal(ttl.statistics.passes, 1);
    assert.equal(ttl.statistics.subPasses, 3, '10 + 7, then 10, then 5 and the range read to its end');
  }));

  it('leaves what the scope does not own, and still ends its pass however much that is', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }, { v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    insert(engine, coll, Array.from({ length: 60 }, (_, i) => ({ _id: i, k: i, at: ago(1000 - i) })));
    const seenFields: Doc[] = [];
    const scope: TtlDeletionScope = { kind: 'owned', fields: ['k'], owns: (doc) => { seenFields.push(doc); return Number(doc.k) >= 50; } };
    const ttl = monitor({ scope: () => scope, limits: { batchEntries: 4, targetDocs: 4, targetTimeMs: 0, subPassTargetMs: 0 } });
    await ttl.runPass();
    assert.deepEqual(ids(), Array.from({ length: 50 }, (_, i) => i), 'the 50 unowned documents stay');
    assert.equal(ttl.statistics.deletedDocuments, 10);
    assert.equal(seenFields.length, 60, 'each entry read once in the pass');
    assert.ok(seenFields.every((d) => d.k !== undefined && d._id !== undefined));
  }));

  it('deletes nothing of a collection it must skip', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    insert(engine, coll, [{ _id: 1, at: ago(5) }]);
    const ttl = monitor({ scope: () => ({ kind: 'skip', reason: 'the critical section is held' }) });
    await ttl.runPass();
    assert.deepEqual(ids(), [1]);
    assert.equal(ttl.statistics.passes, 1);
  }));

  it('counts and skips an index that cannot be a TTL index', withTtl(async ({ engine, coll, monitor, ids }) => {
    // Written as an older docshard accepted it, bypassing createIndexes' checks.
    engine.createIndexes(coll, [{ v: 2, key: { at: 1, b: 1 }, name: 'at_1_b_1', expireAfterSeconds: 0 }, { v: 2, key: { t: 1 }, name: 't_1', expireAfterSeconds: 'soon' }]);
    insert(engine, coll, [{ _id: 1, at: ago(5), t: ago(5) }]);
    const ttl = monitor();
    await ttl.runPass();
    await ttl.runPass();
    assert.deepEqual(ids(), [1]);
    assert.equal(ttl.statistics.invalidTTLIndexSkips, 4, 'two indexes, two sub-passes');
  }));

  it('reads expireAfterSeconds again when collMod changes it', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 3600 }]);
    insert(engine, coll, [{ _id: 1, at: ago(100) }, { _id: 2, at: ago(10) }]);
    const ttl = monitor();
    await ttl.runPass();
    assert.deepEqual(ids(), [1, 2]);
    engine.replaceIndexSpec(coll, 'at_1', { ...coll.index('at_1')!.entry.spec, expireAfterSeconds: 50 });
    await ttl.runPass();
    assert.deepEqual(ids(), [2]);
  }));

  it("gives a migration's donor every deletion in the range it is cloning", withTtl(async ({ engine, coll, monitor }) => {
    engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }, { v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    insert(engine, coll, Array.from({ length: 6 }, (_, i) => ({ _id: i, k: i * 10, at: ago(1), payload: 'x'.repeat(100) })));
    const cloner = new MigrationChunkClonerSource(engine, 'app.events', { min: { k: 30 }, max: { k: new MaxKey() } }, { k: 1 });
    cloner.start();
    cloner.nextCloneBatch();
    await monitor().runPass();
    const mods = cloner.nextModsBatch();
    assert.deepEqual(mods.deleted.map((d) => d._id).sort(), [3, 4, 5], 'the recipient deletes them too');
    cloner.stop();
  }));

  it('runs a pass every sleepMs until it is stopped', withTtl(async ({ engine, coll, monitor, ids }) => {
    engine.createIndexes(coll, [{ v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 0 }]);
    const ttl = monitor({ sleepMs: 5 });
    ttl.start();
    while (ttl.statistics.passes < 2) await new Promise((r) => setTimeout(r, 5));
    insert(engine, coll, [{ _id: 1, at: ago(1) }]);
    const passes = ttl.statistics.passes;
    while (ttl.statistics.passes < passes + 2) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(ids(), []);
    await ttl.stop();
    const stopped = ttl.statistics.passes;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(ttl.statistics.passes, stopped);
  }));
});
