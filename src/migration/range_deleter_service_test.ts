import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UUID, MaxKey } from 'bson';
import pino from 'pino';
import { systemClock } from '../base/clock.js';
import { type Doc } from '../bson/values.js';
import { compileFilter } from '../query/match/matcher.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { RangeDeleterService } from './range_deleter_service.js';
import { MIGRATION_COORDINATORS_NS } from './migration_coordinator_document.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON, rangeDeletionTaskToBSON, type RangeDeletionTask } from './range_deletion_task.js';

const OPTIONS = { batchSize: 7, batchDelayMs: 1, orphanCleanupDelayMs: 60_000 };

function open(dir: string): { engine: StorageEngine; local: LocalCollections } {
  const engine = StorageEngine.open(dir, { compilePartialFilter: (f) => { const m = compileFilter(f); return (d) => m.matches(d); } });
  return { engine, local: new LocalCollections(engine) };
}

function task(pending: boolean, whenToClean: 'now' | 'delayed' = 'now', numOrphanDocs = 0): RangeDeletionTask {
  return {
    _id: new UUID(), nss: 't.c', collectionUuid: new UUID(), donorShardId: 's0', range: { min: { k: 10 }, max: { k: new MaxKey() } }, pending,
    processing: false, whenToClean, numOrphanDocs, orphanedSizeBytes: numOrphanDocs * DOC_BYTES, keyPattern: { k: 1 },
  };
}

// The size of {_id: k, k} for small integers k: two int32 fields.
const DOC_BYTES = 4 + 2 * (1 + 4 + 4) - 2 + 1;

// A collection t.c of `n` documents {_id: k, k} with an index on k, in a fresh engine.
async function withCollection(n: number, body: (engine: StorageEngine, local: LocalCollections) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-rd-'));
  const { engine, local } = open(dir);
  try {
    const coll = engine.createCollection('t.c');
    engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
    local.write((w) => { for (let k = 0; k < n; k++) w.insert('t.c', { _id: k, k }); });
    await body(engine, local);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function counters(local: LocalCollections, id: UUID): { docs: number; bytes: number; processing: boolean } | undefined {
  const raw = local.findOne(RANGE_DELETIONS_NS, { _id: id });
  if (raw === undefined) return undefined;
  const t = rangeDeletionTaskFromBSON(raw);
  return { docs: t.numOrphanDocs, bytes: t.orphanedSizeBytes, processing: t.processing };
}

describe('the range deleter', () => {
  it('runs a task once it is made ready, in batches, then deletes the task', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-rd-'));
    const { engine, local } = open(dir);
    try {
      const coll = engine.createCollection('t.c');
      engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
      local.write((w) => { for (let k = 0; k < 50; k++) w.insert('t.c', { _id: k, k }); });
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      const t = task(true);
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(t)));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(local.find('t.c').length, 50, 'a pending task is not run');
      local.write((w) => w.update(RANGE_DELETIONS_NS, { _id: t._id }, { $unset: { pending: '' } }));
      await deleter.awaitTask(t._id);
      assert.deepEqual(local.find('t.c', {}, { sort: { k: 1 } }).map((d) => d.k), Array.from({ length: 10 }, (_, i) => i));
      assert.equal(local.find(RANGE_DELETIONS_NS).length, 0);
      deleter.stop();
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resumes ready tasks found at startup', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-rd-'));
    const { engine, local } = open(dir);
    try {
      const coll = engine.createCollection('t.c');
      engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
      const t = task(false);
      local.write((w) => {
        for (let k = 0; k < 20; k++) w.insert('t.c', { _id: k, k });
        w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(t));
      });
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      await deleter.awaitTask(t._id);
      assert.equal(local.find('t.c').length, 10);
      deleter.stop();
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes every batch off the task\'s orphan counters in the same write, and marks the task processing', async () => {
    await withCollection(50, async (engine, local) => {
      const t = task(false, 'now', 40);
      const seen: { docs: number; bytes: number; processing: boolean }[] = [];
      // The counters each batch's unit wrote, seen from inside that unit.
      engine.observers.push({
        onUpdate: (_w, ns, _before, after) => {
          if (ns !== RANGE_DELETIONS_NS) return;
          seen.push({ docs: Number(after.numOrphanDocs), bytes: Number(after.orphanedSizeBytes), processing: after.processing === true });
        },
      });
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(t)));
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      await deleter.awaitTask(t._id);
      deleter.stop();
      assert.deepEqual(seen.map((c) => c.docs), [33, 26, 19, 12, 5, 0]);
      assert.ok(seen.every((c) => c.processing && c.bytes === c.docs * DOC_BYTES));
      assert.equal(deleter.statistics.docsDeleted, 40);
    });
  });

  it('counts are never taken below zero when the range held more than the task counted', async () => {
    await withCollection(50, async (engine, local) => {
      const t = task(false, 'now', 3);
      const low: number[] = [];
      engine.observers.push({
        onUpdate: (_w, ns, _b, after) => { if (ns === RANGE_DELETIONS_NS) low.push(Number(after.numOrphanDocs)); },
      });
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(t)));
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      await deleter.awaitTask(t._id);
      deleter.stop();
      assert.ok(low.every((n) => n >= 0), String(low));
      assert.equal(local.find('t.c').length, 10);
    });
  });

  it('expedite runs a delayed task at once, and a task already processing skips its delay after a restart', async () => {
    await withCollection(30, async (engine, local) => {
      const delayed = task(false, 'delayed', 20);
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(delayed)));
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(local.find('t.c').length, 30, 'a delayed task waits out orphanCleanupDelaySecs');
      await deleter.expedite(delayed._id);
      assert.equal(local.find('t.c').length, 10);
      assert.equal(counters(local, delayed._id), undefined);
      assert.deepEqual(deleter.statistics, { expedited: 1, docsDeleted: 20, docsDeletedExpedited: 20 });
      deleter.stop();

      const resumed = { ...task(false, 'delayed', 5), processing: true, range: { min: { k: 5 }, max: { k: 10 } } };
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(resumed)));
      const restarted = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      restarted.start();
      await restarted.awaitTask(resumed._id);
      assert.equal(local.find('t.c').length, 5);
      restarted.stop();
    });
  });

  // Issue 32: the range deleter is a primary-only service; a term over refuses its run's writes,
  // and a stop (step-down) and a later start (step-up) run the task again on the same service.
  it('writes nothing once the term it started in is over, and after a stop and a start runs the task to the end', async () => {
    await withCollection(50, async (engine, local) => {
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), { ...OPTIONS, batchDelayMs: 50 }, systemClock);
      let firstTerm = true;
      deleter.start(() => firstTerm);
      const t = task(false);
      local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(t)));
      while (local.find('t.c').length === 50) await new Promise((r) => setTimeout(r, 5));
      firstTerm = false;
      const left = local.find('t.c').length;
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(local.find('t.c').length, left, 'no batch after the term ended');
      assert.notEqual(counters(local, t._id), undefined, 'the task stays for the next primary');
      deleter.stop();
      deleter.start(() => true);
      await deleter.awaitTask(t._id);
      assert.equal(local.find('t.c').length, 10);
      assert.equal(counters(local, t._id), undefined);
      deleter.stop();
    });
  });

  it('counts the orphans of a task written before the counters existed, once, at startup', async () => {
    await withCollection(30, async (engine, local) => {
      const older = task(true);
      const raw = rangeDeletionTaskToBSON(older);
      delete raw.numOrphanDocs;
      delete raw.orphanedSizeBytes;
      const donating = task(true);
      const rawDonating: Doc = { ...rangeDeletionTaskToBSON(donating), range: { min: { k: 0 }, max: { k: 10 } } };
      delete rawDonating.numOrphanDocs;
      local.write((w) => {
        w.insert(RANGE_DELETIONS_NS, raw);
        w.insert(RANGE_DELETIONS_NS, rawDonating);
        w.insert(MIGRATION_COORDINATORS_NS, { _id: donating._id });
      });
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS, systemClock);
      deleter.start();
      deleter.stop();
      assert.deepEqual(counters(local, older._id), { docs: 20, bytes: 20 * DOC_BYTES, processing: false });
      assert.deepEqual(counters(local, donating._id), { docs: 0, bytes: 0, processing: false }, 'a donor owns its range until the commit');
    });
  });
});
