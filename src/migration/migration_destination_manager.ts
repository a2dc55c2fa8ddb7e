import { idOfBytes } from '../bson/raw_document.js';
import { Binary, deserializeWithRawArrays, isPlainObject, serializeDocument, type Doc } from '../bson/values.js';
import type { Timer } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { MigrationNode } from './migration_node.js';
import { hangIfFailPointEnabled } from '../base/fail_points.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { ScopedReceiveChunk } from './active_migrations_registry.js';
import { withRecipientFailPoints, type FailPointHang } from './migration_fail_points.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskToBSON, taskTimestamp } from './range_deletion_task.js';
import { addOrphans, overlappingTasks } from './range_orphans.js';
import { migratedHistoryFromBSON } from '../sessions/session_migration.js';
import { LocalWriter } from '../query/exec/local_collection.js';
import type { Collection, WriteUnit } from '../storage/storage_engine.js';
import { migrationStatistics } from './migration_statistics.js';
import { refusedByStepDown } from './step_down.js';
import type { RecipientCommand, RecipientEffect, RecvChunkStartRequest, RecvChunkStatus } from './recipient_effects.js';
import {
  isRecipientDone, recipientInitialState, recipientStatus, recipientStep, type RecipientEvent, type RecipientPhase, type RecipientState,
} from './recipient_state_machine.js';

// How long the recipient waits before asking again after an empty _transferMods.
const MODS_PAUSE_MS = 10;
const REQUEST_TIMEOUT_MS = 60_000;

interface Waiter {
  resolve(status: RecvChunkStatus): void;
  reject(error: MongoError): void;
}

// The recipient's driver (MongoDB's MigrationDestinationManager): steps the recipient machine,
// pulls documents and modifications from the donor, applies them through the storage write path,
// and answers the donor's commands once the machine says so.
export class MigrationDestinationManager {
  private state: RecipientState = recipientInitialState();
  // One entry per step: a failed local effect drops the rest of its own list only.
  private readonly queue: (RecipientEffect | FailPointHang)[][] = [];
  private draining = false;
  private readonly waiters = new Map<RecipientCommand, Waiter[]>();
  // _transferMods batches received from the donor, empty ones included; for currentOp.
  private modsBatches = 0;
  // How long the last clone batch took to apply and commit; the donor paces the clone by it under
  // load. The commit counts: its wait for the disk is the clone's share of a disk the donor's own
  // writes wait for too.
  private lastApplyMs = 0;
  // Clone and mods batches whose commits lmdb-js's write thread has not finished.
  private readonly writesInFlight: Promise<void>[] = [];
  readonly startedAt: Date;
  // Set by a step-down: the reception fails where it is; its pending range deletion task, replicated,
  // stays for the donor's decision to settle.
  private interrupted = false;

  private constructor(private readonly node: MigrationNode, readonly request: RecvChunkStartRequest, readonly donorHost: string, private readonly scoped: ScopedReceiveChunk) {
    this.startedAt = new Date(node.migrations.clock.now());
  }

  // _recvChunkStart: registers the reception (117 when busy), then lets the machine decide.
  static async start(node: MigrationNode, request: RecvChunkStartRequest, donorHost: string): Promise<{ manager: MigrationDestinationManager; status: RecvChunkStatus }> {
    const scoped = node.migrations.registry.registerReceiveChunk(request.nss, request.range, request.donorShardId);
    migrationStatistics(node).countRecipientMoveChunkStarted += 1;
    const manager = new MigrationDestinationManager(node, request, donorHost, scoped);
    node.migrations.destination = manager;
    await deleteOverlappingOrphans(node, request);
    const overlapping = overlappingTasks(node.local, request.nss, request.range).length;
    const status = await manager.command('_recvChunkStart', { type: 'recvChunkStart', request, overlappingRangeDeletions: overlapping, timestamp: taskTimestamp(node.migrations.clock.now()) });
    return { manager, status };
  }

  get done(): boolean {
    return isRecipientDone(this.state);
  }

  get phase(): RecipientPhase {
    return this.state.phase;
  }

  get transferModsBatches(): number {
    return this.modsBatches;
  }

  status(): RecvChunkStatus {
    return recipientStatus(this.state);
  }

  // Feeds a donor command to the machine; resolves with the reply the machine gives it.
  command(name: RecipientCommand, event: RecipientEvent): Promise<RecvChunkStatus> {
    const reply = new Promise<RecvChunkStatus>((resolve, reject) => {
      const list = this.waiters.get(name) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(name, list);
    });
    this.step(event);
    return reply;
  }

  // Step-down (MongoDB interrupts the recipient's thread): the effects queued are dropped, the one
  // running meets the storage's refusal, and the donor, seeing the failure, aborts the migration.
  interrupt(): void {
    this.interrupted = true;
    this.queue.length = 0;
    this.step({ type: 'failed', error: new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'migration interrupted by a step-down') });
    // Not yet started, the machine has nothing to fail; either way this shard receives nothing now.
    this.scoped.release();
  }

  private step(event: RecipientEvent): void {
    const before = this.state;
    const { state, effects } = recipientStep(this.state, event);
    this.state = state;
    const list = withRecipientFailPoints(before, state, effects);
    if (list.length > 0) this.queue.push(list);
    if (isRecipientDone(state)) this.scoped.release();
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let list = this.queue.shift(); list !== undefined; list = this.queue.shift()) {
        for (const e of list) {
          if (e.type === 'hang') {
            await hangIfFailPointEnabled(this.node, e.failPoint, this.node.migrations.clock);
            continue;
          }
          const paused = this.node.migrations.testingKnobs?.beforeEffect?.({ driver: 'recipient', effect: e });
          if (paused !== undefined) await paused;
          // Interrupted: the donor's commands still get their answers; nothing else runs.
          if (this.interrupted && e.type !== 'reply') continue;
          try {
            await this.execute(e);
          } catch (err) {
            // A step-down refuses the write before it interrupts the migration: that is no lost
            // write to stop the process for, the new primary's recovery takes it from here.
            if (e.type === 'persistRangeDeletionTask' && !this.interrupted && !refusedByStepDown(err)) {
              this.node.logger.fatal({ c: 'MIGRATION', err }, 'Persisting the recipient range deletion task failed');
              process.exit(1);
            }
            this.step({ type: 'failed', error: asMongoError(err) });
            break;
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async execute(e: RecipientEffect): Promise<void> {
    // Clone and mods batches commit behind the loop that fetches them (applyCloneBatch,
    // applyMods; lmdb-js commits them in the order they were queued); anything else the state
    // machine asks for comes after every batch before it, so it waits for them: the sync before
    // the catch-up, and a reply that lets the donor commit or clean up.
    if (!PIPELINED.has(e.type)) await this.writesCommitted();
    switch (e.type) {
      case 'persistRangeDeletionTask':
        // Majority-committed before the donor hears the reception started: a new primary here must
        // find the task that deletes what this reception copies in if it aborts.
        this.node.local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(e.task)));
        await this.node.storage.flushed();
        return this.node.replicationWaits?.awaitMajority();
      case 'reply':
        // The range is committed to this shard only once what it received is majority-committed
        // here (MongoDB's recipient waits so before it answers the commit): a primary deposed by a
        // partition would otherwise answer for documents its successor never had, and the donor
        // would delete its copy.
        if (e.command === '_recvChunkCommit' && !(e.result instanceof MongoError)) {
          try {
            await this.node.replicationWaits?.awaitMajority();
          } catch (err) {
            return this.reply(e.command, asMongoError(err));
          }
        }
        return this.reply(e.command, e.result);
      case 'createCollectionAndIndexes':
        return this.createCollectionAndIndexes(e.nss);
      case 'requestCloneBatch':
        return this.pull({ _migrateClone: 1, sessionId: e.migrationId, applyMillis: this.lastApplyMs }, ['objects'], (reply) => ({
          type: 'cloneBatch', documents: reply.objects as Buffer[],
        }));
      case 'requestTransferMods':
        if (e.pause) await this.node.migrations.clock.sleep(MODS_PAUSE_MS);
        return this.pull({ _transferMods: 1, sessionId: e.migrationId }, ['deleted', 'reload'], (reply) => {
          this.modsBatches += 1;
          migrationStatistics(this.node).countTransferModsBatchesOnRecipient += 1;
          return {
            type: 'transferModsBatch',
            deleted: reply.deleted as Buffer[],
            reload: reply.reload as Buffer[],
            ...(typeof reply.pending === 'number' ? { pending: reply.pending } : {}),
          };
        });
      case 'applyCloneBatch':
        return this.applyCloneBatch(e.nss, e.documents);
      case 'syncClonedDocuments':
        return this.node.storage.sync();
      case 'applyMods':
        return this.applyMods(e.nss, e.deleted, e.reload);
      case 'requestSessionMods':
        return this.pull({ _getNextSessionMods: 1, sessionId: e.migrationId, ...(e.after !== undefined ? { after: e.after } : {}) }, [], (reply) => ({
          type: 'sessionModsBatch', entries: (reply.entries as Doc[] | undefined) ?? [], last: reply.last, done: reply.done === true,
        }));
      case 'applySessionMods': {
        const { sessionCatalog, storage } = this.node;
        storage.write((unit) => sessionCatalog.applyMigratedHistory(unit, e.nss, e.migrationId, e.entries.map(migratedHistoryFromBSON)));
        await storage.flushed();
        if (e.last) this.step({ type: 'sessionModsApplied' });
        return;
      }
    }
  }

  private reply(command: RecipientCommand, result: RecvChunkStatus | MongoError): void {
    const waiter = this.waiters.get(command)?.shift();
    if (waiter === undefined) return;
    if (result instanceof MongoError) waiter.reject(result);
    else waiter.resolve(result);
  }

  // A request completes once sent; its reply comes back as an event, a failure as `failed`.
  // `rawArrays` name the reply's arrays of documents, which stay as the donor's bytes.
  private pull(cmd: Doc, rawArrays: readonly string[], onReply: (reply: Doc) => RecipientEvent): void {
    void (async () => {
      let event: RecipientEvent;
      try {
        const body = serializeDocument({ ...cmd, $db: 'admin' });
        const reply = await this.node.client.commandRaw(this.donorHost, 'admin', body, { timeoutMs: REQUEST_TIMEOUT_MS });
        event = onReply(checkOk(deserializeWithRawArrays(reply, rawArrays)));
      } catch (err) {
        event = { type: 'failed', error: asMongoError(err) };
      }
      this.step(event);
    })();
  }

  // The donor's collection options (a validator, for one) and indexes, so the shard key index
  // (and unique indexes) exist before any document.
  private async createCollectionAndIndexes(nss: string): Promise<void> {
    const { storage } = this.node;
    const dot = nss.indexOf('.');
    const [db, name] = [nss.slice(0, dot), nss.slice(dot + 1)];
    const [specs, [info]] = await Promise.all([
      fetchAll(this.node.client, this.donorHost, db, { listIndexes: name }),
      fetchAll(this.node.client, this.donorHost, db, { listCollections: 1, filter: { name } }),
    ]);
    // With the donor's UUID, as MongoDB's recipient: a collection has one UUID on every shard, which
    // a command's collectionUUID is checked against.
    const uuid = isPlainObject(info?.info) && info.info.uuid instanceof Binary ? info.info.uuid : undefined;
    const coll = storage.getCollection(nss) ?? storage.createCollection(nss, (info?.options as Doc | undefined) ?? {}, uuid);
    const missing = specs.filter((s) => s.name !== '_id_' && coll.indexes.every((i) => i.name !== s.name)).map(({ ns: _ns, ...spec }) => spec);
    if (missing.length > 0) storage.createIndexes(coll, missing);
  }

  private applyCloneBatch(nss: string, documents: readonly Uint8Array[]): void {
    const { storage } = this.node;
    let started = 0;
    const applied = storage.writeAsync((unit) => {
      unit.fromMigrate = true;
      // Looked up when the batch runs, which is later than it was queued.
      const coll = storage.getCollection(nss);
      if (coll === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `${nss} was dropped during the migration`);
      started = performance.now();
      for (const bytes of documents) unit.insertBytes(coll, bytes);
      this.countOrphans(unit, coll);
    }).then(() => {
      this.lastApplyMs = performance.now() - started;
      const stats = migrationStatistics(this.node);
      stats.countDocsClonedOnRecipient += documents.length;
      for (const bytes of documents) stats.countBytesClonedOnRecipient += bytes.byteLength;
    });
    // Not awaited: the next batch is applied while lmdb-js commits this one (on its own thread,
    // with the wait for the disk); a failure fails the migration.
    this.inFlight(applied);
  }

  // Not awaited: a failure fails the migration.
  private inFlight(commit: Promise<void>): void {
    this.writesInFlight.push(commit.catch((err: unknown) => this.step({ type: 'failed', error: asMongoError(err) })));
  }

  private async writesCommitted(): Promise<void> {
    await Promise.all(this.writesInFlight.splice(0));
  }

  // Reloads replace (or insert) by _id, deletions remove by _id: both are idempotent, so a batch
  // applied twice after a retry changes nothing. The documents stay the donor's bytes and go
  // straight to the records and index entries: the catch-up is not paced, and while it runs its
  // cost is shared by the donor's users.
  private applyMods(nss: string, deleted: readonly Uint8Array[], reload: readonly Uint8Array[]): void {
    const { storage } = this.node;
    this.inFlight(storage.writeAsync((unit) => {
      unit.fromMigrate = true;
      const coll = storage.getCollection(nss);
      if (coll === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `${nss} was dropped during the migration`);
      for (const bytes of deleted) unit.removeById(coll, idOfBytes(bytes));
      for (const bytes of reload) unit.upsertBytes(coll, bytes);
      this.countOrphans(unit, coll);
    }));
  }

  // Until the commit, what arrives is not this shard's: the unit that applies a batch adds what it
  // changed in the range to the task's orphan counters, so they are exact even after a crash.
  private countOrphans(unit: WriteUnit, coll: Collection): void {
    const change = unit.changeOf(coll);
    addOrphans(new LocalWriter(this.node.storage, unit), this.request.migrationId, { docs: change.count, bytes: change.size });
  }
}

// Effects that do not wait for the batches in flight: fetching the next batch and queueing one.
const PIPELINED: ReadonlySet<RecipientEffect['type']> = new Set(['applyCloneBatch', 'requestCloneBatch', 'applyMods', 'requestTransferMods']);

// _recvChunkStatus's reply, in MongoDB's shape.
export function statusReply(manager: MigrationDestinationManager, status: RecvChunkStatus): Doc {
  const r = manager.request;
  return {
    active: !manager.done, sessionId: r.migrationId, ns: r.nss, from: manager.donorHost, fromShardName: r.donorShardId,
    min: r.range.min, max: r.range.max, state: status.state, counts: status.counts, ...(status.errmsg !== undefined ? { errmsg: status.errmsg } : {}),
  };
}

// A range this shard gave away (or an aborted reception left) still has its orphans here under a
// ready task, waiting out orphanCleanupDelaySecs for reads nobody routes any more. Receiving the
// range back over them would let that deletion erase what is copied in; rather than refusing the
// range for the whole delay (as MongoDB does), the deletion runs now, waiting only for the routed
// reads that still hold the range, and the reception starts once the range is clean. A crash
// meanwhile leaves the old task (its counters exact) and no reception. Pending tasks belong to a
// migration still undecided and are refused as before.
async function deleteOverlappingOrphans(node: MigrationNode, request: RecvChunkStartRequest): Promise<void> {
  const ready = overlappingTasks(node.local, request.nss, request.range).filter((t) => !t.pending);
  if (ready.length === 0) return;
  const orphans = ready.reduce((n, t) => n + t.numOrphanDocs, 0);
  node.logger.info({ c: 'MIGRATION', nss: request.nss, range: request.range, tasks: ready.map((t) => t.range), orphans },
    'Deleting the orphans of an overlapping range now, to receive the range');
  const deleted = Promise.all(ready.map((t) => node.migrations.rangeDeleter.expedite(t._id)));
  const waitMs = node.options.parameters.receiveChunkWaitForRangeDeleterTimeoutMS;
  let timer: Timer | undefined;
  const timedOut = await Promise.race([
    deleted.then(() => false),
    new Promise<boolean>((resolve) => { timer = node.migrations.clock.setTimer(waitMs, () => resolve(true)); }),
  ]);
  timer?.cancel();
  if (timedOut) node.logger.warn({ c: 'MIGRATION', nss: request.nss, range: request.range, waitMs }, 'Orphans of an overlapping range not deleted in time; refusing the range');
}

function asMongoError(err: unknown): MongoError {
  return err instanceof MongoError ? err : new MongoError(ErrorCodes.InternalError, String(err));
}

