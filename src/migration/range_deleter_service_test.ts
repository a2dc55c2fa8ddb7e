import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UUID } from 'bson';
import pino from 'pino';
import { MaxKey } from '../bson/values.js';
import { compileFilter } from '../query/match/matcher.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { RangeDeleterService } from './range_deleter_service.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskToBSON, type RangeDeletionTask } from './range_deletion_task.js';

const OPTIONS = { batchSize: 7, batchDelayMs: 1, orphanCleanupDelayMs: 60_000 };

function open(dir: string): { engine: StorageEngine; local: LocalCollections } {
  const engine = StorageEngine.open(dir, { compilePartialFilter: (f) => { const m = compileFilter(f); return (d) => m.matches(d); } });
  return { engine, local: new LocalCollections(engine) };
}

function task(pending: boolean, whenToClean: 'now' | 'delayed' = 'now'): RangeDeletionTask {
  return { _id: new UUID(), nss: 't.c', collectionUuid: new UUID(), donorShardId: 's0', range: { min: { k: 10 }, max: { k: new MaxKey() } }, pending, whenToClean };
}

describe('the range deleter', () => {
  it('runs a task once it is made ready, in batches, then deletes the task', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-rd-'));
    const { engine, local } = open(dir);
    try {
      const coll = engine.createCollection('t.c');
      engine.createIndexes(coll, [{ v: 2, key: { k: 1 }, name: 'k_1' }]);
      local.write((w) => { for (let k = 0; k < 50; k++) w.insert('t.c', { _id: k, k }); });
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS);
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
      const deleter = new RangeDeleterService(engine, local, pino({ level: 'silent' }), OPTIONS);
      deleter.start();
      await deleter.awaitTask(t._id);
      assert.equal(local.find('t.c').length, 10);
      deleter.stop();
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
