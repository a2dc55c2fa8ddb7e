import type { Logger } from 'pino';
import type { UUID } from 'bson';
import type { Clock, Timer } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { encodeKey } from '../bson/key_string.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { LazyDocument } from '../bson/raw_document.js';
import { LocalWriter, type LocalCollections } from '../query/exec/local_collection.js';
import type { OpObserver, StoredDocument } from '../storage/op_observer.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { OngoingQueries } from '../shard/ongoing_queries.js';
import { MIGRATION_COORDINATORS_NS } from './migration_coordinator_document.js';
import { RANGE_DELETIONS_NS, hasOrphanCounters, rangeDeletionTaskFromBSON, type RangeDeletionTask } from './range_deletion_task.js';
import { countRange, documentsInRange, rangeIndex } from './range_orphans.js';
import {
  rangeDeletionStart, rangeDeletionStep,
  type RangeDeletionEffect, type RangeDeletionEvent, type RangeDeletionOptions, type RangeDeletionState,
} from './range_deletion_state_machine.js';

export interface RangeDeleterOptions {
  // MongoDB's rangeDeleterBatchSize and rangeDeleterBatchDelayMS.
  readonly batchSize: number;
  readonly batchDelayMs: number;
  // orphanCleanupDelaySecs: how long a 'delayed' task waits, so queries that started on the
  // donor before the commit can still read the range.
  readonly orphanCleanupDelayMs: number;
}

// Cumulative figures for serverStatus.
export interface RangeDeleterStatistics {
  // Tasks run ahead of their delay because a migration wanted their range back (expedite).
  expedited: number;
  // Documents the deleter removed, and of those, the ones removed for an expedited task.
  docsDeleted: number;
  docsDeletedExpedited: number;
}

// Runs the tasks of config.rangeDeletions that are not pending (MongoDB's RangeDeleterService):
// deletes the task's range in batches with a pause between them, then the task. It learns of
// tasks by observing config.rangeDeletions (a task written ready, or made ready by an update from
// either shard's coordinator), and by scanning it at startup, so deletions resume after a restart.
// Every batch takes its documents off the task's orphan counters in the same write unit.
export class RangeDeleterService implements OpObserver {
  private readonly running = new Map<string, Promise<void>>();
  private readonly runs = new Map<string, RangeDeletionDriver>();
  // awaitTask's pending polls; stop() ends them early so nothing waits on a stopped service.
  private readonly timers = new Map<Timer, () => void>();
  // Tasks told to skip their delay (before their run began, too).
  private readonly expedited = new Set<string>();
  readonly statistics: RangeDeleterStatistics = { expedited: 0, docsDeleted: 0, docsDeletedExpedited: 0 };
  private stopped = false;
  private mayWrite: () => boolean = () => true;

  constructor(
    private readonly storage: StorageEngine,
    private readonly local: LocalCollections,
    private readonly logger: Logger,
    private readonly options: RangeDeleterOptions,
    private readonly clock: Clock,
    private readonly queries?: OngoingQueries,
  ) {}

  // At start-up, or on a replica set member when it becomes primary: `mayWrite` is false once the
  // term it started in is over, and then no batch or removal of this start's runs is written.
  start(mayWrite: () => boolean = () => true): void {
    this.stopped = false;
    this.mayWrite = mayWrite;
    this.countOrphansOfOlderTasks();
    this.storage.observers.push(this);
    for (const raw of this.local.find(RANGE_DELETIONS_NS, { pending: { $exists: false } })) this.schedule(raw);
  }

  // Shutdown or step-down: the runs end at their next step, and a later start runs their tasks again.
  stop(): void {
    this.stopped = true;
    for (const run of this.runs.values()) run.step({ type: 'stop' });
    this.runs.clear();
    this.running.clear();
    for (const [t, resolve] of this.timers) {
      t.cancel();
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

  // Runs a ready task now rather than after its delay (a migration wants the range back); still
  // waits for the routed reads that hold the range. Resolves when the task is gone.
  expedite(id: UUID): Promise<void> {
    const key = keyOf(id);
    if (!this.expedited.has(key)) {
      this.expedited.add(key);
      this.statistics.expedited += 1;
    }
    this.runs.get(key)?.step({ type: 'expedite' });
    return this.awaitTask(id);
  }

  private schedule(raw: Doc): void {
    if (raw.pending === true || this.stopped) return;
    const key = keyOf(raw._id);
    if (this.running.has(key)) return;
    const driver = new RangeDeletionDriver(this.runEnv(this.mayWrite), raw._id as UUID, this.options, this.expedited.has(key));
    this.runs.set(key, driver);
    const run = driver.done.catch((err: unknown) => {
      this.logger.error({ c: 'SHARDING', err, taskId: key }, 'Range deletion failed');
    }).finally(() => {
      // A stop forgot this run; a later start's run of the same task is not this one's to end.
      if (this.runs.get(key) !== driver) return;
      this.running.delete(key);
      this.runs.delete(key);
      this.expedited.delete(key);
    });
    this.running.set(key, run);
  }

  // What a task's run does with the shard; its writes are refused once its start's term is over.
  private runEnv(mayWrite: () => boolean): RangeDeletionEnv {
    const fence = (): void => {
      if (!mayWrite()) throw new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'range deletion interrupted: this node stepped down since it started');
    };
    return {
      wait: (ms, fn) => this.clock.setTimer(ms, fn),
      readTask: (id) => this.readTask(id),
      awaitQueries: (task) => this.awaitOngoingQueries(task),
      deleteBatch: (task) => {
        fence();
        return this.deleteBatch(task);
      },
      countDeleted: (docs, expedited) => {
        this.statistics.docsDeleted += docs;
        if (expedited) this.statistics.docsDeletedExpedited += docs;
      },
      removeTask: async (task) => {
        fence();
        this.local.write((w) => w.delete(RANGE_DELETIONS_NS, { _id: task._id }, { multi: false }));
        await this.storage.flushed();
      },
      logFinished: (task, deleted, expedited) => {
        this.logger.info({ c: 'SHARDING', nss: task.nss, range: task.range, deleted, expedited }, 'Finished deleting documents in range');
      },
    };
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

  // Through the index on the shard key, in key order. The first batch marks the task processing;
  // each takes what it removed off the task's counters, in the same write unit.
  private deleteBatch(task: RangeDeletionTask): number {
    const coll = this.storage.getCollection(task.nss);
    const index = coll === undefined ? undefined : rangeIndex(coll, task.range, task.keyPattern);
    if (coll !== undefined && index === undefined) {
      this.logger.warn({ c: 'SHARDING', nss: task.nss, range: task.range }, 'No shard key index for range deletion; nothing deleted');
    }
    const batch = coll === undefined || index === undefined ? [] : [...documentsInRange(this.storage, coll, index, task.range, this.options.batchSize)];
    // A removal reads only the indexed fields (index entries, and the observers' _id and shard
    // key), so the rest of each document stays undecoded.
    const paths = coll?.pathsIndexed() ?? null;
    this.storage.write((unit) => {
      unit.fromMigrate = true;
      let bytesRemoved = 0;
      for (const r of batch) {
        // Without a projection every result is the stored document, bytes included.
        const bytes = r.bytes ?? serializeDocument(r.doc);
        unit.remove(coll!, r.recordId, paths === null ? r.doc : new LazyDocument(bytes).fields(paths), bytes.length);
        bytesRemoved += bytes.length;
      }
      // Never below zero: a direct write into the range after the count is deleted here too.
      const counters = {
        processing: true,
        numOrphanDocs: Math.max(0, task.numOrphanDocs - batch.length),
        orphanedSizeBytes: Math.max(0, task.orphanedSizeBytes - bytesRemoved),
      };
      new LocalWriter(this.storage, unit).update(RANGE_DELETIONS_NS, { _id: task._id }, { $set: counters });
    });
    return batch.length;
  }

  // Tasks written before the counters existed get them once, from the documents in their range:
  // all orphans, except under a pending task of a donation in flight (this shard's coordinator
  // document has its id), whose range this shard still owns.
  private countOrphansOfOlderTasks(): void {
    for (const raw of this.local.find(RANGE_DELETIONS_NS)) {
      if (hasOrphanCounters(raw)) continue;
      const task = rangeDeletionTaskFromBSON(raw);
      const donating = task.pending && this.local.findOne(MIGRATION_COORDINATORS_NS, { _id: task._id }) !== undefined;
      const count = donating ? { docs: 0, bytes: 0 } : countRange(this.storage, task.nss, task.range, task.keyPattern);
      this.local.write((w) => w.update(RANGE_DELETIONS_NS, { _id: task._id }, { $set: { numOrphanDocs: count.docs, orphanedSizeBytes: count.bytes } }));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = this.clock.setTimer(ms, () => { this.timers.delete(t); resolve(); });
      this.timers.set(t, resolve);
    });
  }
}

function keyOf(id: unknown): string {
  return encodeKey([id]).toString('hex');
}

interface RangeDeletionEnv {
  wait(ms: number, fn: () => void): Timer;
  readTask(id: UUID): RangeDeletionTask | undefined;
  awaitQueries(task: RangeDeletionTask): Promise<void>;
  deleteBatch(task: RangeDeletionTask): number;
  countDeleted(docs: number, expedited: boolean): void;
  removeTask(task: RangeDeletionTask): Promise<void>;
  logFinished(task: RangeDeletionTask, deleted: number, expedited: boolean): void;
}

// Runs one task: steps its machine (range_deletion_state_machine.ts) and runs the effects in
// order, feeding the answers of those that wait back as events. `done` settles when the run ends,
// rejected when an effect failed.
class RangeDeletionDriver {
  private state: RangeDeletionState;
  private readonly queue: RangeDeletionEffect[] = [];
  private draining = false;
  private wait: Timer | undefined;
  private settled = false;
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  readonly done = new Promise<void>((resolve, reject) => { this.resolve = resolve; this.reject = reject; });

  constructor(private readonly env: RangeDeletionEnv, private readonly id: UUID, options: RangeDeletionOptions, expedited: boolean) {
    const first = rangeDeletionStart(options, expedited);
    this.state = first.state;
    this.run(first.effects);
  }

  step(event: RangeDeletionEvent): void {
    if (this.settled) return;
    const { state, effects } = rangeDeletionStep(this.state, event);
    this.state = state;
    this.run(effects);
  }

  private run(effects: RangeDeletionEffect[]): void {
    this.queue.push(...effects);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined && !this.settled; e = this.queue.shift()) this.execute(e);
    } catch (err) {
      this.end(err);
    } finally {
      this.draining = false;
    }
    if (this.state.phase === 'done') this.end(undefined);
  }

  private execute(e: RangeDeletionEffect): void {
    const { env } = this;
    switch (e.type) {
      case 'wait':
        this.wait = env.wait(e.ms, () => {
          this.wait = undefined;
          this.step({ type: 'waited' });
        });
        return;
      case 'cancelWait':
        this.wait?.cancel();
        this.wait = undefined;
        return;
      case 'readTask':
        return this.step({ type: 'taskRead', task: env.readTask(this.id) });
      case 'awaitQueries':
        return this.answer(env.awaitQueries(e.task), () => ({ type: 'queriesDrained' }));
      case 'deleteBatch':
        return this.step({ type: 'batchDeleted', docs: env.deleteBatch(e.task) });
      case 'countDeleted':
        return env.countDeleted(e.docs, e.expedited);
      case 'removeTask':
        return this.answer(env.removeTask(e.task), () => ({ type: 'taskRemoved' }));
      case 'logFinished':
        return env.logFinished(e.task, e.deleted, e.expedited);
    }
  }

  private answer<T>(work: Promise<T>, event: (value: T) => RangeDeletionEvent): void {
    work.then((value) => this.step(event(value)), (err: unknown) => this.end(err));
  }

  private end(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.wait?.cancel();
    if (err === undefined) this.resolve();
    else this.reject(err);
  }
}
