import { Binary, ObjectId, UUID } from 'bson';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { Timer } from '../base/clock.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { fromPlacementTimestamp, placementTimestamp, shardVersionToBSON } from '../catalog/chunk_version.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import type { MigrationNode } from './migration_node.js';
import { hangIfFailPointEnabled } from '../base/fail_points.js';
import { RemoteConfigReader } from '../shard/remote_config_reader.js';
import { CATALOG_READ_TIMEOUT, configReadConcern } from '../catalog/config_read_concern.js';
import { checkOk, checkWriteConcern, fetchAll } from '../wire/remote_cursor.js';
import type { DonationOutcome } from './active_migrations_registry.js';
import { donorEffectClass, type DonorEffect, type DonorTaskDetails } from './donor_effects.js';
import { asMongoError, commitReplyOf, donorInitialState, donorStep, isDonorDone, type CloneProgress, type DonorEvent, type DonorPhase, type DonorState } from './donor_state_machine.js';
import { ClonePacer, DEFAULT_LOADED_OPS_PER_SECOND } from './clone_pacer.js';
import { MigrationChunkClonerSource } from './migration_chunk_cloner_source.js';
import { withDonorFailPoints, type FailPointHang } from './migration_fail_points.js';
import {
  MIGRATION_COORDINATORS_NS, migrationCoordinatorDocumentFromBSON, migrationCoordinatorDocumentToBSON, type MigrationCoordinatorDocument,
} from './migration_coordinator_document.js';
import { RANGE_DELETIONS_NS, rangeDeletionTaskFromBSON, rangeDeletionTaskToBSON, taskTimestamp } from './range_deletion_task.js';
import { countRange } from './range_orphans.js';
import { migrationStatistics } from './migration_statistics.js';
import { DONOR_STEPS, moveChunkErrorEntry, moveChunkFromEntry, moveChunkStartEntry } from '../catalog_decisions/migration_changelog.js';
import type { RecvChunkStatus } from './recipient_effects.js';
import { refusedByStepDown } from './step_down.js';

// Per-phase limits; the state machine ignores a timer armed in a phase it has left. From the
// commit on only the config server decides, so those phases have none.
const PHASE_TIMEOUT_MS: Partial<Record<DonorPhase, number>> = {
  kCloning: 6 * 60 * 60 * 1000,
  kCloneCaughtUp: 60_000,
  kCriticalSection: 60_000,
  kCloneCompleted: 60_000,
};
const STATUS_POLL_MS = 20;
const RETRY_MS = 200;
const REQUEST_TIMEOUT_MS = 60_000;

export interface MoveRangeRequest {
  readonly nss: string;
  readonly range: ChunkRange;
  readonly toShard: string;
  readonly waitForDelete: boolean;
}

// _shardsvrMoveRange: runs the migration on this (donor) shard, or joins the identical one in
// flight; resolves when it committed, throws the reason it aborted.
export async function moveRange(node: MigrationNode, request: MoveRangeRequest): Promise<void> {
  const shardId = requireShardName(node);
  const scoped = node.migrations.registry.registerDonateChunk({
    nss: request.nss, range: request.range, fromShardId: shardId, toShardId: request.toShard, waitForDelete: request.waitForDelete, forceJumbo: false,
  });
  if (scoped.mode === 'join') return throwIfFailed(await scoped.completion);
  let outcome: DonationOutcome = { ok: true };
  try {
    const manager = await MigrationSourceManager.forNewMigration(node, shardId, request);
    outcome = await manager.run({ type: 'start', doc: manager.doc, waitForDelete: request.waitForDelete, task: manager.taskDetails });
  } catch (err) {
    outcome = { ok: false, error: err instanceof MongoError ? err : new MongoError(ErrorCodes.InternalError, String(err)) };
  } finally {
    scoped.signalComplete(outcome);
  }
  throwIfFailed(outcome);
}

// At startup, before migrations are accepted: finish every migration a coordinator document says
// was in flight when the process stopped.
export function recoverDonations(node: MigrationNode): Promise<void>[] {
  return node.local.find(MIGRATION_COORDINATORS_NS).map(async (raw) => {
    const doc = migrationCoordinatorDocumentFromBSON(raw);
    const scoped = node.migrations.registry.registerDonateChunk({
      nss: doc.nss, range: doc.range, fromShardId: doc.donorShardId, toShardId: doc.recipientShardId, waitForDelete: false, forceJumbo: false,
    });
    if (scoped.mode === 'join') return;
    const recovery = new MigrationSourceManager(node, doc, undefined).run({ type: 'crashRecovered', doc });
    node.sharding.metadata.holdUntilRecovered(doc.nss, recovery);
    scoped.signalComplete(await recovery);
  });
}

// The donor's driver (MongoDB's MigrationSourceManager + MigrationCoordinator): steps the donor
// machine and runs its effects strictly one after another (donor_effects.ts).
export class MigrationSourceManager {
  private state: DonorState = donorInitialState();
  private readonly queue: (DonorEffect | FailPointHang)[] = [];
  private draining = false;
  private timer: Timer | undefined;
  private hosts: Map<string, string> | undefined;
  private finish!: (outcome: DonationOutcome) => void;
  private readonly finished = new Promise<DonationOutcome>((r) => { this.finish = r; });
  // When run() was called, for currentOp's secs_running.
  startedAt: Date | undefined;
  // Milliseconds spent in each of MongoDB's six donor steps (the phases from kCloning to
  // kCommitted), for the moveChunk.from changelog entry.
  private readonly stepMillis: number[] = [];
  private lastStepAt = 0;

  // For a new migration: what its range deletion tasks record besides the coordinator document.
  taskDetails: DonorTaskDetails = {};
  // Set by a step-down: nothing more is run, and the next primary takes the migration up from its
  // coordinator document.
  private interrupted = false;
  private holdsCriticalSection = false;

  constructor(private readonly node: MigrationNode, readonly doc: MigrationCoordinatorDocument, readonly cloner: MigrationChunkClonerSource | undefined) {}

  // Reads the chunk's version and the collection's uuid from the config server: the coordinator
  // document pins them, so recovery can fence and read the owner of exactly this chunk.
  static async forNewMigration(node: MigrationNode, shardId: string, request: MoveRangeRequest): Promise<MigrationSourceManager> {
    const found = await new RemoteConfigReader(node.client, requireConfigHost(node)).readCollection(request.nss);
    if (found === undefined) throw new MongoError(ErrorCodes.NamespaceNotSharded, `${request.nss} is not sharded`);
    const { collection, chunks } = found;
    const chunk = chunkContaining(chunks, request.range.min);
    if (chunk === undefined || chunk.shard !== shardId) {
      throw new MongoError(ErrorCodes.OperationFailed, `Range starting at ${JSON.stringify(request.range.min)} of ${request.nss} is not owned by shard ${shardId}`);
    }
    const doc: MigrationCoordinatorDocument = {
      _id: new UUID(),
      nss: request.nss,
      collectionUuid: toUUID(collection.uuid),
      donorShardId: shardId,
      recipientShardId: request.toShard,
      range: request.range,
      preMigrationChunkVersion: fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, chunk.lastmod),
    };
    const pacer = new ClonePacer({ percentUnderLoad: node.options.parameters.migrateClonePercentUnderLoad, loadedOpsPerSecond: DEFAULT_LOADED_OPS_PER_SECOND });
    const manager = new MigrationSourceManager(node, doc, new MigrationChunkClonerSource(node.storage, request.nss, request.range, collection.key, pacer));
    // The shard's version is its newest chunk's.
    const shardLastmod = chunks.filter((c) => c.shard === shardId).map((c) => c.lastmod).reduce((a, b) => (b.greaterThan(a) ? b : a));
    manager.taskDetails = {
      timestamp: taskTimestamp(node.migrations.clock.now()),
      keyPattern: collection.key,
      preMigrationShardVersion: fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, shardLastmod),
    };
    return manager;
  }

  get phase(): DonorPhase {
    return this.state.phase;
  }

  // What the recipient last reported (documents and bytes cloned, mods pending), for currentOp.
  get progress(): CloneProgress {
    return this.state.progress;
  }

  get waitForDelete(): boolean {
    return this.state.waitForDelete;
  }

  run(first: DonorEvent): Promise<DonationOutcome> {
    if (first.type === 'start') migrationStatistics(this.node).countDonorMoveChunkStarted += 1;
    this.startedAt = new Date(this.node.migrations.clock.now());
    this.lastStepAt = this.node.migrations.clock.now();
    if (first.type === 'start') this.logChange((ctx) => moveChunkStartEntry(ctx, this.doc.donorShardId, this.logRange()));
    this.cloner?.start();
    this.node.migrations.source = this;
    this.step(first);
    return this.finished;
  }

  // Step-down (MongoDB interrupts the donor's operation): the driver ends at once without deciding
  // anything, and none of its effects runs after the one in flight, whose writes the storage
  // refuses and whose replies are ignored. It does not wait for that effect: one may wait on what
  // only a primary brings about (a prepared transaction's decision, which the new term's
  // transaction coordinator sends once the primary-only services of the new term start, and they
  // start only once this one has ended).
  async interrupt(): Promise<void> {
    this.interrupted = true;
    this.queue.length = 0;
    this.endInterrupted();
    await this.finished;
  }

  // Idempotent: the drain loop ends the driver again once the effect in flight returns.
  private endInterrupted(): void {
    this.timer?.cancel();
    this.cloner?.stop();
    if (this.holdsCriticalSection) this.node.sharding.criticalSection.exit(this.doc.nss);
    this.holdsCriticalSection = false;
    if (this.node.migrations.source === this) this.node.migrations.source = undefined;
    this.finish({ ok: false, error: new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'migration interrupted by a step-down; the next primary finishes or aborts it') });
  }

  private step(event: DonorEvent): void {
    if (this.interrupted) return;
    const before = this.state;
    const { state, effects } = donorStep(this.state, event);
    this.state = state;
    this.queue.push(...withDonorFailPoints(before, event, state, effects));
    if (state.phase !== before.phase) {
      this.armTimer(state.phase);
      if (state.phase !== 'kRecovering' && this.stepMillis.length < DONOR_STEPS) {
        this.stepMillis.push(this.node.migrations.clock.now() - this.lastStepAt);
        this.lastStepAt = this.node.migrations.clock.now();
      }
    }
    void this.drain();
  }

  private armTimer(phase: DonorPhase): void {
    this.timer?.cancel();
    this.timer = undefined;
    const ms = PHASE_TIMEOUT_MS[phase];
    if (ms === undefined) return;
    this.timer = this.node.migrations.clock.setTimer(ms, () => this.step({ type: 'timeout', phase }), { unref: true });
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined && !this.interrupted; e = this.queue.shift()) {
        if (e.type === 'hang') {
          await hangIfFailPointEnabled(this.node, e.failPoint, this.node.migrations.clock);
          continue;
        }
        const paused = this.node.migrations.testingKnobs?.beforeEffect?.({ driver: 'donor', effect: e });
        if (paused !== undefined) await paused;
        if (this.interrupted) break;
        try {
          await this.execute(e);
        } catch (err) {
          if (this.interrupted) break;
          // Refused because this node stepped down: the driver ends as the step-down's interruption
          // ends it. It does not wait for that interruption, which may have come and gone: a
          // migration whose start was still reading the config server when the step-down
          // interrupted the donors began after it, and the step-down in turn waits for it to end.
          if (refusedByStepDown(err)) {
            this.node.logger.info({ c: 'MIGRATION', err, effect: e.type }, 'Migration effect refused by a step-down; the migration ends here');
            this.interrupted = true;
            break;
          }
          // Persist and command effects are the machine's memory: going on without one would
          // break the recovery contract, so the process stops and recovery starts from disk.
          this.node.logger.fatal({ c: 'MIGRATION', err, effect: e.type, class: donorEffectClass(e) }, 'Migration effect failed');
          process.exit(1);
        }
      }
    } finally {
      this.draining = false;
    }
    if (this.interrupted) this.endInterrupted();
    else if (isDonorDone(this.state) && this.queue.length === 0) this.complete();
  }

  private complete(): void {
    this.timer?.cancel();
    this.cloner?.stop();
    if (this.node.migrations.source === this) this.node.migrations.source = undefined;
    const error = this.state.phase === 'kCommitted' ? undefined : this.state.error ?? new MongoError(ErrorCodes.OperationFailed, 'migration aborted');
    const stats = migrationStatistics(this.node);
    if (error === undefined) stats.countDonorMoveChunkCommitted += 1;
    else stats.countDonorMoveChunkAborted += 1;
    if (this.startedAt !== undefined) stats.totalDonorMoveChunkTimeMillis += this.node.migrations.clock.now() - this.startedAt.getTime();
    // A migration finished by recovery did not time its steps; it still ends in success.
    const steps = error === undefined ? [...this.stepMillis, ...Array<number>(DONOR_STEPS).fill(0)].slice(0, DONOR_STEPS) : this.stepMillis.slice(0, DONOR_STEPS - 1);
    // As MigrationSourceManager::cleanupOnError: the failure first, then the timings.
    if (error !== undefined) this.logChange((ctx) => moveChunkErrorEntry(ctx, this.doc.donorShardId, this.logRange()));
    this.logChange((ctx) => moveChunkFromEntry(ctx, this.doc.donorShardId, this.logRange(), steps, error?.message));
    this.finish(error === undefined ? { ok: true } : { ok: false, error });
  }

  private logRange() {
    return { ns: this.doc.nss, min: this.doc.range.min, max: this.doc.range.max, from: this.doc.donorShardId, to: this.doc.recipientShardId };
  }

  // Shards log to the config server's config.changelog (MongoDB's ShardingLogging); a lost entry
  // loses history, not data, so a failure is only logged.
  private logChange(entry: (ctx: { server: string; clientAddr: string; time: Date; newId: () => ObjectId }) => Doc): void {
    const { options, client, logger } = this.node;
    const doc = entry({ server: `${options.bindIp}:${options.port}`, clientAddr: '', time: new Date(this.node.migrations.clock.now()), newId: () => new ObjectId() });
    void client.command(requireConfigHost(this.node), 'config', { insert: 'changelog', documents: [doc] })
      .catch((err: unknown) => logger.warn({ c: 'MIGRATION', err, what: doc.what }, 'Could not write to config.changelog'));
  }

  private async execute(e: DonorEffect): Promise<void> {
    const { local, migrations } = this.node;
    const id = this.doc._id;
    switch (e.type) {
      case 'persistCoordinatorDoc':
        return this.persist(() => local.write((w) => w.insert(MIGRATION_COORDINATORS_NS, migrationCoordinatorDocumentToBSON(e.doc))));
      case 'persistRangeDeletionTask':
        return this.persist(() => local.write((w) => w.insert(RANGE_DELETIONS_NS, rangeDeletionTaskToBSON(e.task))));
      case 'persistDecision':
        // Decided: nothing more goes to the recipient, so writes need not be captured any more
        // (with _waitForDelete the range deleter's own deletes would otherwise all pass through it).
        this.cloner?.stop();
        return this.persist(() => local.write((w) => w.update(MIGRATION_COORDINATORS_NS, { _id: e.migrationId }, { $set: { decision: e.decision } })));
      case 'markRangeDeletionReady':
        return this.persist(() => this.markRangeDeletionReady(e.migrationId));
      case 'deleteRangeDeletionTask':
        return this.persist(() => local.write((w) => w.delete(RANGE_DELETIONS_NS, { _id: e.migrationId })));
      case 'deleteCoordinatorDoc':
        return this.persist(() => local.write((w) => w.delete(MIGRATION_COORDINATORS_NS, { _id: e.migrationId })));
      case 'sendRecvChunkStart':
        return this.request(this.doc.recipientShardId, () => this.recvChunkStartCommand(), () => ({ type: 'recipientAcknowledgedStart' }));
      case 'pollRecvChunkStatus':
        await this.node.migrations.clock.sleep(STATUS_POLL_MS);
        return this.request(e.recipientShardId, { _recvChunkStatus: this.doc.nss, sessionId: id }, (reply) => ({
          type: 'recipientStatus', status: parseStatus(reply), transferModsPending: this.cloner?.pendingMods ?? 0,
        }));
      case 'sendRecvChunkCommit':
        return this.request(e.recipientShardId, { _recvChunkCommit: this.doc.nss, sessionId: id }, () => ({ type: 'recipientCommitted' }));
      case 'sendCommitToConfig':
        return this.sendCommit();
      case 'readConfigChunkOwner':
        void this.retry(() => this.readOwner()).then((shardId) => this.step({ type: 'configChunkOwnerRead', shardId }));
        return;
      case 'sendEnsureChunkVersionIsGreaterThan':
        return this.retry(async () => {
          // Majority-committed or not done: the owner read after it must see every commit that stays.
          checkWriteConcern(await this.node.client.command(requireConfigHost(this.node), 'admin', {
            _configsvrEnsureChunkVersionIsGreaterThan: 1, nss: this.doc.nss, minKey: this.doc.range.min, maxKey: this.doc.range.max,
            version: shardVersionToBSON(this.doc.preMigrationChunkVersion),
          }, { timeoutMs: REQUEST_TIMEOUT_MS }));
        });
      case 'sendRecvChunkAbort':
        return this.commandToShard(e.recipientShardId, 'admin', { _recvChunkAbort: this.doc.nss, sessionId: id });
      case 'markRecipientRangeDeletionReady':
        return this.commandToShard(e.recipientShardId, 'config', { update: 'rangeDeletions', updates: [{ q: { _id: id }, u: { $unset: { pending: '' } } }] });
      case 'deleteRecipientRangeDeletionTask':
        return this.commandToShard(e.recipientShardId, 'config', { delete: 'rangeDeletions', deletes: [{ q: { _id: id }, limit: 1 }] });
      case 'enterCriticalSection': {
        // Writes are held back from here on; a transaction prepared on the collection may still
        // commit writes in the range, so the catch-up that follows waits for its decision.
        // Then, as MongoDB's donor persists its critical section with majority write concern,
        // everything the donor wrote before it (the writes the recipient cloned and caught up on,
        // the commits of those transactions) is majority-committed before the commit goes on: a
        // primary cut off from its set, not yet deposed, would otherwise give the recipient writes
        // it is about to roll back.
        this.node.sharding.criticalSection.enter(e.nss);
        this.holdsCriticalSection = true;
        const prepared = this.node.transactions.preparedOn(e.nss) ?? Promise.resolve();
        return prepared.then(() => this.majorityCommitted()).then(() => this.step({ type: 'criticalSectionEntered' }));
      }
      case 'enterCriticalSectionForReads':
        this.node.sharding.criticalSection.enterForReads(e.nss);
        this.holdsCriticalSection = true;
        return this.step({ type: 'criticalSectionEntered' });
      case 'exitCriticalSection':
        this.node.sharding.criticalSection.exit(e.nss);
        this.holdsCriticalSection = false;
        return;
      case 'refreshFilteringMetadata':
        return this.refresh(e.nss);
      case 'hintRecipientRefresh':
        return this.hintRecipientRefresh(e.recipientShardId, e.nss);
      case 'awaitRangeDeletion':
        return migrations.rangeDeleter.awaitTask(e.migrationId);
    }
  }

  // The range's documents here are orphans from the commit on: counted in the same write unit that
  // makes the task ready, so the deleter starts from an exact figure. Only a pending task is
  // touched: after a restart the deleter may already have taken documents off a ready one.
  private markRangeDeletionReady(migrationId: UUID): void {
    const { local, storage } = this.node;
    local.write((w) => {
      const raw = local.findOne(RANGE_DELETIONS_NS, { _id: migrationId, pending: true });
      if (raw === undefined) return;
      const task = rangeDeletionTaskFromBSON(raw);
      const orphans = countRange(storage, task.nss, task.range, task.keyPattern);
      w.update(RANGE_DELETIONS_NS, { _id: migrationId }, { $unset: { pending: '' }, $set: { numOrphanDocs: orphans.docs, orphanedSizeBytes: orphans.bytes } });
    });
  }

  // Durable, and on a replica set majority-committed, as MongoDB writes the coordinator's
  // documents: a new primary must find every state document the recipient or the config server
  // has heard of. A wait that a step-down ends ends the driver; nothing after it runs.
  private async persist(write: () => unknown): Promise<void> {
    write();
    await this.node.storage.flushed();
    await this.majorityCommitted();
  }

  // What this member has written so far, majority-committed; a wait a step-down (or shutdown)
  // ends, ends the driver as the step-down does (drain).
  private async majorityCommitted(): Promise<void> {
    try {
      await this.node.replicationWaits?.awaitMajority();
    } catch (err) {
      this.node.logger.info({ c: 'MIGRATION', err, migrationId: this.doc._id.toHexString() }, 'Migration writes not majority-committed; the migration ends here');
      throw new MongoError(ErrorCodes.InterruptedDueToReplStateChange, `migration writes not majority-committed: ${(err as Error).message}`);
    }
  }

  // A request completes once sent; its reply (or failure) comes back as an event, and so does a
  // failure to build it (_recvChunkStart names the donor's host, looked up on the config server).
  private request(shardId: string, cmd: Doc | (() => Promise<Doc>), onReply: (reply: Doc) => DonorEvent): void {
    void (async () => {
      try {
        const body = typeof cmd === 'function' ? await cmd() : cmd;
        const reply = checkOk(await this.node.client.command(await this.hostOf(shardId), 'admin', body, { timeoutMs: REQUEST_TIMEOUT_MS }));
        this.step(onReply(reply));
      } catch (err) {
        this.step({ type: 'recipientError', error: asMongoError(err) });
      }
    })();
  }

  // A lost reply is not a refusal: only an answer with ok: 0 is an 'error'.
  private sendCommit(): void {
    const doc = this.doc;
    const body = {
      _configsvrCommitChunkMigration: doc.nss, fromShard: doc.donorShardId, toShard: doc.recipientShardId,
      migratedChunk: { min: doc.range.min, max: doc.range.max, lastmod: placementTimestamp(doc.preMigrationChunkVersion) },
      fromShardCollectionVersion: shardVersionToBSON(doc.preMigrationChunkVersion),
      counts: { cloned: this.state.progress.clonedDocs, clonedBytes: this.state.progress.clonedBytes },
    };
    void (async () => {
      let reply: Doc;
      try {
        reply = await this.node.client.command(requireConfigHost(this.node), 'admin', body, { timeoutMs: REQUEST_TIMEOUT_MS });
      } catch (err) {
        return this.step({ type: 'configCommitReplied', reply: { outcome: 'unknown', error: asMongoError(err) } });
      }
      this.step({ type: 'configCommitReplied', reply: commitReplyOf(reply) });
    })();
  }

  private async readOwner(): Promise<string | null> {
    // Majority, as MongoDB reads it: a deposed config primary's commit that will be rolled back
    // must not decide the migration.
    const config = requireConfigHost(this.node);
    const chunks = await fetchAll(this.node.client, config, 'config', { find: 'chunks', filter: { uuid: this.doc.collectionUuid }, ...configReadConcern(config) }, CATALOG_READ_TIMEOUT);
    return chunkContaining(chunks as unknown as ChunkType[], this.doc.range.min)?.shard ?? null;
  }

  // "Command" effects: idempotent, retried until the target acknowledges them.
  private commandToShard(shardId: string, db: string, cmd: Doc): Promise<void> {
    return this.retry(async () => {
      checkOk(await this.node.client.command(await this.hostOf(shardId), db, cmd, { timeoutMs: REQUEST_TIMEOUT_MS }));
    });
  }

  private async retry<T>(fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        this.node.logger.warn({ c: 'MIGRATION', err, migrationId: this.doc._id.toHexString() }, 'Migration command failed; retrying');
        this.hosts = undefined;
        await this.node.migrations.clock.sleep(RETRY_MS);
      }
    }
  }

  // After the commit the cached ownership is wrong either way; a failed refresh leaves it unknown,
  // so the next versioned request reloads it.
  private async refresh(nss: string): Promise<void> {
    const { metadata } = this.node.sharding;
    metadata.forget(nss);
    try {
      await metadata.refreshCollection(nss);
    } catch (err) {
      metadata.forget(nss);
      this.node.logger.warn({ c: 'MIGRATION', err, nss }, 'Refresh after migration failed; metadata left unknown');
    }
  }

  // The recipient owns the range now. Left alone, it refreshes on the first request carrying the
  // new version: a write the critical section held back, which would then wait for that refresh
  // too. Asked now, in parallel with the donor's own refresh, it is usually done before that write
  // arrives. Best effort: a lost hint only costs that wait.
  private hintRecipientRefresh(recipientShardId: string, nss: string): void {
    void (async () => {
      try {
        const host = await this.hostOf(recipientShardId);
        await this.node.client.command(host, 'admin', { _flushRoutingTableCacheUpdates: nss }, { timeoutMs: REQUEST_TIMEOUT_MS });
      } catch (err) {
        this.node.logger.debug({ c: 'MIGRATION', err, nss }, 'The recipient did not refresh after the commit; it will on its next request');
      }
    })();
  }

  private async recvChunkStartCommand(): Promise<Doc> {
    const doc = this.doc;
    const keyPattern = this.taskDetails.keyPattern ?? Object.fromEntries(Object.keys(doc.range.min).map((f) => [f, 1]));
    return {
      _recvChunkStart: doc.nss, sessionId: doc._id, from: await this.hostOf(doc.donorShardId), fromShardName: doc.donorShardId,
      toShardName: doc.recipientShardId, min: doc.range.min, max: doc.range.max, shardKeyPattern: keyPattern, uuid: doc.collectionUuid,
    };
  }

  private async hostOf(shardId: string): Promise<string> {
    if (this.hosts === undefined) {
      const shards = await fetchAll(this.node.client, requireConfigHost(this.node), 'config', { find: 'shards' });
      this.hosts = new Map(shards.map((s) => [String(s._id), String(s.host)]));
    }
    const host = this.hosts.get(shardId);
    if (host === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${shardId} not found`);
    return host;
  }
}

function parseStatus(reply: Doc): RecvChunkStatus {
  const counts = (reply.counts ?? {}) as Doc;
  return {
    state: String(reply.state) as RecvChunkStatus['state'],
    counts: { cloned: Number(counts.cloned ?? 0), clonedBytes: Number(counts.clonedBytes ?? 0), catchup: Number(counts.catchup ?? 0), steady: Number(counts.steady ?? 0) },
    ...(typeof reply.errmsg === 'string' ? { errmsg: reply.errmsg } : {}),
  };
}

export function chunkContaining(chunks: readonly ChunkType[], key: Doc): ChunkType | undefined {
  return chunks.find((c) => compareValues(c.min, key) <= 0 && compareValues(key, c.max) < 0);
}

function toUUID(b: Binary): UUID {
  return b instanceof UUID ? b : b.toUUID();
}

function throwIfFailed(outcome: DonationOutcome): void {
  if (!outcome.ok) throw outcome.error;
}

function requireShardName(node: MigrationNode): string {
  const name = node.sharding.state.shardName;
  if (name === undefined) throw new MongoError(ErrorCodes.IllegalOperation, 'this node is not a shard');
  return name;
}

function requireConfigHost(node: MigrationNode): string {
  const host = node.sharding.state.configHost;
  if (host === undefined) throw new MongoError(ErrorCodes.IllegalOperation, 'this node is not a shard');
  return host;
}
