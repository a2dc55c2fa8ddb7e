import type { Logger } from 'pino';
import type { UUID } from 'bson';
import { encodeKey } from '../bson/key_string.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { LazyDocument } from '../bson/raw_document.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { OpObserver, StoredDocument } from '../storage/op_observer.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { OngoingQueries } from '../shard/ongoing_queries.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON, type RangeDeletionTask } from './range_deletion_task.js';

export interface RangeDeleterOptions {
  // MongoDB's rangeDeleterBatchSize and rangeDeleterBatchDelayMS.
  readonly batchSize: number;
  readonly batchDelayMs: number;
  // orphanCleanupDelaySecs: how long a 'delayed' task waits, so queries that started on the
  // donor before the commit can still read the range.
  readonly orphanCleanupDelayMs: number;
}

// Runs the tasks of config.rangeDeletions that are not pending (MongoDB's RangeDeleterService):
// deletes the task's range in batches with a pause between them, then the task. It learns of
// tasks by observing config.rangeDeletions (a task written ready, or made ready by an update from
// either shard's coordinator), and by scanning it at startup, so deletions resume after a restart.
export class RangeDeleterService implements OpObserver {
  private readonly running = new Map<string, Promise<void>>();
  // Pending pauses; stop() ends them early so nothing waits on a stopped service.
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;

  constructor(
    private readonly storage: StorageEngine,
    private readonly local: LocalCollections,
    private readonly logger: Logger,
    private readonly options: RangeDeleterOptions,
    private readonly queries?: OngoingQueries,
  ) {}

  start(): void {
    this.storage.observers.push(this);
    for (const raw of this.local.find(RANGE_DELETIONS_NS, { pending: { $exists: false } })) this.schedule(raw);
  }

  stop(): void {
    this.stopped = true;
    for (const [t, resolve] of this.timers) {
      clearTimeout(t);
      resolve();
    }
    this.timers.clear();
    const at = this.storage.observers.indexOf(this);
    if (at >= 0) this.storage.observers.splice(at, 1);
  }

  // Called inside the write unit: the task is run from a later turn, once the write committed,
  // and re-read from disk then.
  onInsert(_w: unknown, ns: string, stored: StoredDocument): void {
    if (ns === RANGE_DELETIONS_NS) this.schedule(stored.whole());
  }

  onUpdate(_w: unknown, ns: string, _before: Doc, after: Doc): void {
    if (ns === RANGE_DELETIONS_NS) this.schedule(after);
  }

  // Ids (hex of the key) of the tasks being run now (waiting out their delay or deleting), for
  // currentOp and serverStatus.
  get runningTaskKeys(): string[] {
    return [...this.running.keys()];
  }

  isRunning(id: unknown): boolean {
    return this.running.has(keyOf(id));
  }

  // Resolves when the task with this id is gone from disk (moveChunk's _waitForDelete).
  async awaitTask(id: UUID): Promise<void> {
    for (;;) {
      const running = this.running.get(keyOf(id));
      if (running !== undefined) {
        await running;
        continue;
      }
      if (this.local.findOne(RANGE_DELETIONS_NS, { _id: id }) === undefined) return;
      await this.sleep(this.options.batchDelayMs);
      if (this.stopped) return;
    }
  }

  private schedule(raw: Doc): void {
    if (raw.pending === true || this.stopped) return;
    const key = keyOf(raw._id);
    if (this.running.has(key)) return;
    const run = this.run(raw._id as UUID).catch((err: unknown) => {
      this.logger.error({ c: 'SHARDING', err, taskId: key }, 'Range deletion failed');
    }).finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  private async run(id: UUID): Promise<void> {
    await this.sleep(0);
    let task = this.readTask(id);
    if (task === undefined) return;
    if (task.whenToClean === 'delayed') await this.sleep(this.options.orphanCleanupDelayMs);
    let deleted = 0;
    for (;;) {
      task = this.readTask(id);
      if (task === undefined || this.stopped) return;
      await this.awaitOngoingQueries(task);
      task = this.readTask(id);
      if (task === undefined || this.stopped) return;
      const n = this.deleteBatch(task);
      deleted += n;
      if (n < this.options.batchSize) break;
      await this.sleep(this.options.batchDelayMs);
    }
    this.local.write((w) => w.delete(RANGE_DELETIONS_NS, { _id: id }, { multi: false }));
    await this.storage.flushed();
    this.logger.info({ c: 'SHARDING', nss: task.nss, range: task.range, deleted }, 'Finished deleting documents in range');
  }

  // Reads that started while this shard still owned the range keep seeing it until they finish;
  // checked before every batch, since a read may start with old metadata up to the refresh.
  private async awaitOngoingQueries(task: RangeDeletionTask): Promise<void> {
    if (!this.queries) return;
    const n = this.queries.count(task.nss, task.range.min, task.range.max);
    if (n === 0) return;
    this.logger.info({ c: 'SHARDING', nss: task.nss, range: task.range, queries: n }, 'Waiting for ongoing queries before deleting the range');
    await this.queries.completion(task.nss, task.range.min, task.range.max);
  }

  // A task still pending (or gone) is not run: its migration has not been decided for this shard.
  private readTask(id: UUID): RangeDeletionTask | undefined {
    const raw = this.local.findOne(RANGE_DELETIONS_NS, { _id: id });
    if (raw === undefined) return undefined;
    const task = rangeDeletionTaskFromBSON(raw);
    return task.pending ? undefined : task;
  }

  // Through the index on the range's fields (the shard key index), in key order.
  private deleteBatch(task: RangeDeletionTask): number {
    const coll = this.storage.getCollection(task.nss);
    if (coll === undefined) return 0;
    const fields = Object.keys(task.range.min);
    const index = coll.indexes.find((i) => sameFields(Object.keys(i.keyPattern), fields));
    if (index === undefined) {
      this.logger.warn({ c: 'SHARDING', nss: task.nss, range: task.range }, 'No shard key index for range deletion; nothing deleted');
      return 0;
    }
    const batch = [...prepareFind(this.storage, coll, { filter: {}, hint: index.name, min: task.range.min, max: task.range.max, limit: this.options.batchSize }).results];
    // A removal reads only the indexed fields (index entries, and the observers' _id and shard
    // key), so the rest of each document stays undecoded.
    const paths = coll.pathsIndexed();
    this.storage.write((unit) => {
      for (const r of batch) {
        // Without a projection every result is the stored document, bytes included.
        const bytes = r.bytes ?? serializeDocument(r.doc);
        unit.remove(coll, r.recordId, paths === null ? r.doc : new LazyDocument(bytes).fields(paths), bytes.length);
      }
    });
    return batch.length;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.timers.delete(t); resolve(); }, ms);
      this.timers.set(t, resolve);
    });
  }
}

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((f, i) => f === b[i]);
}

function keyOf(id: unknown): string {
  return encodeKey([id]).toString('hex');
}
