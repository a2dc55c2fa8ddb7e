import { valuesEqual } from '../bson/compare.js';
import { Binary, Timestamp } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, isPlainObject, serializeDocument, type Doc } from '../bson/values.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { tickAfter } from '../change_streams/change_stream_spec.js';
import { decodeResumeToken } from '../change_streams/resume_token.js';
import { LocalWriter, type LocalCollections } from '../query/exec/local_collection.js';
import { OwnershipFilter } from '../shard/ownership_filter.js';
import type { Collection, StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { SessionCatalog } from '../sessions/session_catalog.js';
import { migratedHistoryFromBSON } from '../sessions/session_migration.js';
import type { Network } from '../wire/network.js';
import type { Clock } from '../base/clock.js';
import { hangIfFailPointEnabled, type FailPoints } from '../base/fail_points.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import { recipientWriteFor, type ApplyContext } from './recipient_apply.js';
import { isTransient } from './resharding_coordinator_state_machine.js';
import { initialRecipientProgress, recipientStep, type RecipientEffect, type RecipientEvent, type RecipientProgress } from './recipient_state_machine.js';
import { progressFields, recipientDocument, recipientParamsOf, recipientProgressOf } from './recipient_state_document.js';

// Where each recipient keeps its part of a resharding (MongoDB's namespace of the same name).
export const RECIPIENT_DOCS_NS = 'config.localReshardingOperations.recipient';

export interface RangeOwner {
  readonly min: Doc;
  readonly max: Doc;
  readonly shard: string;
}

export interface RecipientParams {
  readonly reshardingUUID: Binary;
  readonly ns: string;
  readonly tempNs: string;
  readonly sourceUUID: Binary;
  readonly sourceKey: Doc;
  readonly reshardingKey: Doc;
  readonly cloneTimestamp: Timestamp;
  readonly donors: readonly { shardId: string; host: string }[];
  readonly sourceChunks: readonly RangeOwner[];
  readonly recipientChunks: readonly RangeOwner[];
  readonly shardId: string;
}

export interface RecipientNode {
  readonly storage: StorageEngine;
  readonly sessionCatalog: SessionCatalog;
  readonly local: LocalCollections;
  readonly client: Network;
  readonly logger: Logger;
  readonly wallClock: Clock;
  readonly failPoints: FailPoints;
}

const CLONE_BATCH = 2000;
const STREAM_WAIT_MS = 100;
// A donor's stream is close enough for the critical section when a read hands out no more than
// this: what is left for the critical section is about one read's worth (clients writing on).
const CLOSE_ENOUGH_EVENTS = 100;
const STREAM_RETRY_MS = 200;

// One donor's change stream as this recipient reads it: how far the donor has promised nothing
// more is to come (the high-water mark of its postBatchResumeToken).
interface DonorStream {
  readonly donor: { shardId: string; host: string };
  readonly owned: OwnershipFilter;
  promisedThrough: Timestamp;
  caughtUp: boolean;
}

// A recipient of one resharding: the driver of the pure recipientStep (recipient_state_machine.ts).
// It creates the temporary collection with the new key's index and the source's, clones from every
// donor at cloneTimestamp the documents whose new key falls in its chunks, then applies each
// donor's change events from there on (their oplog, read through a change stream on the donor,
// which waits out prepared transactions and unfinished commits and shows no migration's writes),
// until the coordinator commits or aborts it. Its writes are marked fromMigrate: no change stream
// shows the copy. Its progress is in its state document (RECIPIENT_DOCS_NS), from which a restart
// or a step-up resumes it (ReshardingRecipientService.recover).
export class ReshardingRecipient {
  private progress: RecipientProgress;
  // The clones and streams of this run; stopWork ends them.
  private work = new AbortController();
  // A step-down: nothing of this instance writes any more.
  private stopped = false;
  private documentsCopied = 0;
  private oplogEntriesApplied = 0;
  private dropSource: (ns: string) => void = () => {};
  private readonly streams: Map<string, DonorStream>;
  private readonly mine: OwnershipFilter;
  private readonly startedMs: number;

  constructor(private readonly node: RecipientNode, readonly params: RecipientParams, progress?: RecipientProgress) {
    const oldKey = new ShardKeyPattern(params.sourceKey);
    this.streams = new Map(params.donors.map((donor) => [donor.shardId, {
      donor, owned: ownership(oldKey, params.sourceChunks, donor.shardId), promisedThrough: params.cloneTimestamp, caughtUp: false,
    }]));
    this.mine = ownership(new ShardKeyPattern(params.reshardingKey), params.recipientChunks, params.shardId);
    this.startedMs = node.wallClock.now();
    if (progress === undefined) {
      this.progress = initialRecipientProgress(params.donors.map((d) => d.shardId));
      node.local.write((w) => w.update(RECIPIENT_DOCS_NS, { _id: params.reshardingUUID }, { $set: recipientDocument(params, this.progress) }, { upsert: true }));
    } else {
      this.progress = progress;
    }
  }

  start(): void {
    this.handle({ type: 'started' });
  }

  // A step-down: the work stops where it is, its document stays for the next primary.
  stop(): void {
    this.stopped = true;
    this.work.abort();
  }

  // The recipient as $currentOp shows it (MongoDB's recipient metrics).
  currentOp(): Doc {
    return {
      desc: `ReshardingRecipientService ${this.params.reshardingUUID.toString('hex')}`, op: 'command', ns: this.params.ns, reshardingUUID: this.params.reshardingUUID,
      recipientState: this.progress.state, documentsCopied: this.documentsCopied, oplogEntriesApplied: this.oplogEntriesApplied,
      totalOperationTimeElapsedSecs: Math.floor((this.node.wallClock.now() - this.startedMs) / 1000),
    };
  }

  status(): Doc {
    const { state, abortReason } = this.progress;
    return {
      state,
      documentsCopied: this.documentsCopied,
      oplogEntriesApplied: this.oplogEntriesApplied,
      caughtUp: state === 'strict-consistency' || (state === 'applying' && [...this.streams.values()].every((s) => s.caughtUp)),
      ...(abortReason === undefined ? {} : { abortReason }),
    };
  }

  // Once the donors block writes: applies every event each donor wrote before `finalTimes`
  // (its cluster time once its critical section was held), then holds still until the commit.
  // Sent again once it has finished (after a crash of the coordinator or of this shard), it answers.
  async finish(finalTimes: ReadonlyMap<string, Timestamp>): Promise<void> {
    for (;;) {
      this.checkRunning();
      if (this.progress.state === 'strict-consistency') return;
      const behind = [...this.streams.values()].filter((s) => !s.promisedThrough.greaterThan(finalTimes.get(s.donor.shardId) ?? s.promisedThrough));
      // MongoDB's fail point of that name (--enableTestCommands): the recipient does not finish.
      const paused = this.node.failPoints.shouldFire('reshardingPauseRecipientDuringOplogApplication') !== undefined;
      if (this.progress.state === 'applying' && behind.length === 0 && !paused) break;
      await this.node.wallClock.sleep(10);
    }
    await Promise.all([...this.streams.values()].map((s) => this.copySessionHistory(s)));
    this.checkRunning();
    this.handle({ type: 'finished' });
  }

  // After the coordinator's commit: the temporary collection takes the source's name, replacing
  // this shard's copy of the source (the same drop a rename with dropTarget makes).
  commit(dropSource: (ns: string) => void): void {
    this.dropSource = dropSource;
    this.handle({ type: 'commit' });
  }

  abort(): void {
    this.handle({ type: 'abort' });
  }

  private checkRunning(): void {
    const { state, abortReason } = this.progress;
    if (state === 'error') throw new MongoError(abortReason?.code ?? ErrorCodes.InternalError, abortReason?.errmsg ?? 'the resharding recipient failed');
    if (this.stopped) throw new MongoError(ErrorCodes.InterruptedDueToReplStateChange, 'the resharding recipient stopped: this shard is no longer primary');
    if (state === 'done') throw new MongoError(ErrorCodes.ReshardCollectionAborted, 'the resharding recipient was stopped');
  }

  // `unit`: the write unit of the batch an event ends, which its persist joins.
  private handle(event: RecipientEvent, unit?: WriteUnit): void {
    if (this.stopped) return;
    const step = recipientStep(this.progress, event);
    this.progress = step.progress;
    for (const effect of step.effects) this.perform(effect, unit);
  }

  private perform(effect: RecipientEffect, unit: WriteUnit | undefined): void {
    const { node, params } = this;
    switch (effect.type) {
      case 'persist': {
        const write = (w: LocalWriter): number => w.update(RECIPIENT_DOCS_NS, { _id: params.reshardingUUID }, { $set: progressFields(this.progress) });
        if (unit === undefined) node.local.write(write);
        else write(new LocalWriter(node.storage, unit));
        return;
      }
      case 'createCollection':
        this.launch(async (signal) => {
          await this.createTemporaryCollection(signal);
          if (!signal.aborted) this.handle({ type: 'collectionCreated' });
        });
        return;
      case 'clone': {
        const stream = this.streams.get(effect.shardId)!;
        this.launch(async (signal) => {
          const started = node.wallClock.now();
          await this.cloneRetrying(stream, signal);
          if (signal.aborted) return;
          node.logger.info({ c: 'RESHARD', ns: params.ns, donor: effect.shardId, documentsCopied: this.documentsCopied, ms: node.wallClock.now() - started }, 'resharding recipient cloned a donor');
          this.handle({ type: 'donorCloned', shardId: effect.shardId });
        });
        return;
      }
      case 'follow': {
        const stream = this.streams.get(effect.shardId)!;
        this.launch((signal) => this.follow(stream, effect.resumeToken, signal));
        return;
      }
      case 'stopWork':
        this.work.abort();
        this.work = new AbortController();
        return;
      case 'renameOverSource': {
        const temp = node.storage.getCollection(params.tempNs);
        if (temp === undefined || !valuesEqual(temp.entry.uuid, params.reshardingUUID)) return;
        const source = node.storage.getCollection(params.ns);
        if (source !== undefined && !valuesEqual(source.entry.uuid, params.reshardingUUID)) this.dropSource(params.ns);
        node.storage.renameCollection(params.tempNs, params.ns);
        return;
      }
      case 'dropTemporaryCollection':
        dropTemporaryCollection(node, params.tempNs, params.reshardingUUID);
        return;
      case 'removeDocument':
        node.local.write((w) => w.delete(RECIPIENT_DOCS_NS, { _id: params.reshardingUUID }));
        return;
    }
  }

  // Runs a piece of work of this run; its failure (unless the work was stopped) fails the recipient.
  private launch(fn: (signal: AbortSignal) => Promise<void>): void {
    const signal = this.work.signal;
    void fn(signal).catch((err: unknown) => {
      if (signal.aborted || this.stopped) return;
      const error = err instanceof MongoError ? err : new MongoError(ErrorCodes.InternalError, String(err));
      this.node.logger.warn({ c: 'RESHARD', ns: this.params.ns, err: error.message }, 'resharding recipient failed');
      this.handle({ type: 'failed', error: { code: error.code, errmsg: error.message } });
    });
  }

  // The source's options and indexes, as a donor has them, and the new shard key's index, under
  // the resharding's UUID: the collection's UUID once the commit renames it.
  private async createTemporaryCollection(signal: AbortSignal): Promise<void> {
    const { storage } = this.node;
    const [db, coll] = splitNs(this.params.ns);
    const [specs, [info]] = await this.retryingTransient(signal, () => {
      const donor = this.params.donors[0]!.host;
      return Promise.all([
        fetchAll(this.node.client, donor, db, { listIndexes: coll }),
        fetchAll(this.node.client, donor, db, { listCollections: 1, filter: { name: coll } }),
      ]);
    });
    if (signal.aborted) return;
    const temp = storage.getCollection(this.params.tempNs) ?? storage.createCollection(this.params.tempNs, (info?.options as Doc | undefined) ?? {}, this.params.reshardingUUID);
    const wanted = specs.filter((s) => s.name !== '_id_').map(({ ns: _ns, ...spec }) => spec);
    const key = this.params.reshardingKey;
    if (!specs.some((s) => JSON.stringify(s.key) === JSON.stringify(key))) wanted.push({ v: 2, key, name: indexName(key) });
    const missing = wanted.filter((s) => temp.indexes.every((i) => i.name !== s.name));
    if (missing.length > 0) storage.createIndexes(temp, missing);
  }

  // A transient failure (a donor unreachable, restarting, electing a primary) runs `fn` again
  // after a pause.
  private async retryingTransient<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof MongoError) || !isTransient(err.code) || signal.aborted) throw err;
        await this.node.wallClock.sleep(STREAM_RETRY_MS);
      }
    }
  }

  // A transient failure starts the donor's clone again: its writes are upserts of the one
  // snapshot, so documents copied twice are one.
  private cloneRetrying(stream: DonorStream, signal: AbortSignal): Promise<void> {
    return this.retryingTransient(signal, () => this.clone(stream, signal));
  }

  // Every document the donor held at cloneTimestamp in its chunks whose new key falls here.
  private async clone(stream: DonorStream, signal: AbortSignal): Promise<void> {
    const [db, coll] = splitNs(this.params.ns);
    const { client } = this.node;
    const host = stream.donor.host;
    let reply = checkOk(await client.command(host, db, {
      find: coll, filter: {}, batchSize: CLONE_BATCH, readConcern: { level: 'snapshot', atClusterTime: this.params.cloneTimestamp },
    }));
    for (;;) {
      const cursor = reply.cursor as Doc;
      const docs = (cursor.firstBatch ?? cursor.nextBatch) as Doc[];
      if (signal.aborted) return;
      const kept = docs.filter((d) => stream.owned.ownsDocument(d) && this.mine.ownsDocument(d));
      this.write((unit, temp) => {
        for (const doc of kept) unit.upsertBytes(temp, serializeDocument(doc));
      });
      this.documentsCopied += kept.length;
      // MongoDB's fail point of that name (--enableTestCommands): the clone holds after a batch
      // is written, the last one included (the donor's clone is not yet known done).
      await hangIfFailPointEnabled(this.node, 'reshardingPauseRecipientDuringCloning', this.node.wallClock);
      if (isZeroId(cursor.id) || signal.aborted) return;
      reply = checkOk(await client.command(host, db, { getMore: cursor.id, collection: coll, batchSize: CLONE_BATCH }));
    }
  }

  // The donor's change events after `resumeToken` (after cloneTimestamp without one), applied in
  // their order, until stopped. A transient failure (the donor unreachable, electing a primary)
  // opens the stream again where the last batch left it (its postBatchResumeToken).
  private async follow(stream: DonorStream, from: Doc | undefined, signal: AbortSignal): Promise<void> {
    const [db, coll] = splitNs(this.params.ns);
    const { client } = this.node;
    const host = stream.donor.host;
    let resumeToken: unknown = from;
    let cursorId: unknown;
    while (!signal.aborted) {
      try {
        let reply = checkOk(await client.command(host, db, {
          aggregate: coll, cursor: {},
          pipeline: [{
            $changeStream: {
              ...(resumeToken === undefined ? { startAtOperationTime: tickAfter(this.params.cloneTimestamp) } : { resumeAfter: resumeToken }),
              fullDocument: 'updateLookup',
            },
          }],
        }));
        for (;;) {
          const cursor = reply.cursor as Doc;
          cursorId = cursor.id;
          if (signal.aborted) break;
          const events = (cursor.firstBatch ?? cursor.nextBatch) as Doc[];
          const token = isPlainObject(cursor.postBatchResumeToken) ? cursor.postBatchResumeToken : undefined;
          this.apply(stream, events, token);
          if (token !== undefined) resumeToken = token;
          const promised = promisedTime(token);
          if (promised !== undefined && promised.greaterThan(stream.promisedThrough)) stream.promisedThrough = promised;
          stream.caughtUp = events.length <= CLOSE_ENOUGH_EVENTS;
          reply = checkOk(await client.command(host, db, { getMore: cursorId, collection: coll, maxTimeMS: STREAM_WAIT_MS }));
        }
      } catch (err) {
        if (!(err instanceof MongoError) || !isTransient(err.code) || signal.aborted) throw err;
        this.node.logger.info({ c: 'RESHARD', ns: this.params.ns, donor: stream.donor.shardId, err: err.message }, 'resharding recipient opens its donor stream again');
        await this.node.wallClock.sleep(STREAM_RETRY_MS);
      }
    }
    if (cursorId !== undefined) await client.command(host, db, { killCursors: coll, cursors: [cursorId] }).catch(() => undefined);
  }

  // The retryable writes' history of the source collection on the donor, now that it holds
  // writes, applied to this shard's session catalog under the source's name (MongoDB's recipients
  // copy config.transactions): a retry that reaches this shard after the commit is answered
  // from it and never runs again. Every recipient takes all of it: a statement's record says
  // the old shard key of its document, not where its new key sends it, and a record a shard does
  // not need answers only retries that would be routed elsewhere.
  private async copySessionHistory(stream: DonorStream): Promise<void> {
    const { client, storage, sessionCatalog } = this.node;
    let after: unknown;
    for (;;) {
      const reply = checkOk(await client.command(stream.donor.host, 'admin', {
        _shardsvrReshardingDonorSessionHistory: this.params.ns, ...(after === undefined ? {} : { after }),
      }));
      const entries = (reply.entries as Doc[]).map(migratedHistoryFromBSON);
      if (entries.length > 0) storage.write((unit) => sessionCatalog.applyMigratedHistory(unit, this.params.ns, this.params.reshardingUUID, entries));
      if (reply.done === true) return;
      after = reply.last;
    }
  }

  // One batch of a donor's events, and the token after it in the same write unit: a crash leaves
  // both or neither, and the stream resumes after the last batch applied. (Applying a batch again
  // would converge all the same, recipient_apply.ts, but needs not happen.)
  private apply(stream: DonorStream, events: readonly Doc[], token: Doc | undefined): void {
    if (events.length === 0) return;
    this.write((unit, temp) => {
      const ctx: ApplyContext = {
        mine: (doc) => this.mine.ownsDocument(doc),
        fromDonor: (doc) => stream.owned.ownsDocument(doc),
        held: (id) => {
          const found = temp.findById(unit.kv, id);
          return found === undefined ? undefined : deserializeDocument(found.bytes);
        },
      };
      for (const event of events) {
        const write = recipientWriteFor(event, ctx);
        if (write.type === 'upsert') unit.upsertBytes(temp, serializeDocument(write.doc));
        else if (write.type === 'delete') unit.removeById(temp, write.id);
      }
      if (token !== undefined) this.handle({ type: 'batchApplied', shardId: stream.donor.shardId, resumeToken: token }, unit);
    });
    this.oplogEntriesApplied += events.length;
  }

  private write(fn: (unit: WriteUnit, temp: Collection) => void): void {
    const { storage } = this.node;
    storage.write((unit) => {
      unit.fromMigrate = true;
      const temp = storage.getCollection(this.params.tempNs);
      if (temp === undefined) throw new MongoError(ErrorCodes.NamespaceNotFound, `${this.params.tempNs} was dropped during resharding`);
      fn(unit, temp);
    });
  }
}

// A temporary collection of this resharding's UUID only: a name taken again since is left alone.
export function dropTemporaryCollection(node: RecipientNode, tempNs: string, uuid: Binary): void {
  const temp = node.storage.getCollection(tempNs);
  if (temp !== undefined && valuesEqual(temp.entry.uuid, uuid)) node.storage.dropCollection(tempNs);
}

function ownership(pattern: ShardKeyPattern, chunks: readonly RangeOwner[], shard: string): OwnershipFilter {
  return new OwnershipFilter(pattern, chunks.filter((c) => c.shard === shard) as unknown as ChunkType[]);
}

function promisedTime(token: unknown): Timestamp | undefined {
  if (!isPlainObject(token)) return undefined;
  return decodeResumeToken(token).clusterTime;
}

function indexName(key: Doc): string {
  return Object.entries(key).map(([f, v]) => `${f}_${String(v)}`).join('_');
}

function splitNs(ns: string): [string, string] {
  const dot = ns.indexOf('.');
  return [ns.slice(0, dot), ns.slice(dot + 1)];
}

function isZeroId(id: unknown): boolean {
  return id === undefined || (typeof id === 'number' ? id === 0 : String(id) === '0');
}


// The recipients of one shard, by resharding UUID (hex): MongoDB's ReshardingRecipientService, a
// primary-only service. At step-up (a restart among them) every state document resumes its
// recipient where it was persisted; a step-down stops them where they are.
export class ReshardingRecipientService {
  private readonly recipients = new Map<string, ReshardingRecipient>();

  constructor(private readonly node: RecipientNode) {}

  // Joins a recipient already started for the same resharding (the coordinator sending again),
  // resumed from its document if this shard restarted since.
  start(params: RecipientParams): ReshardingRecipient {
    const known = this.get(params.reshardingUUID);
    if (known !== undefined) return known;
    const recipient = new ReshardingRecipient(this.node, params);
    this.recipients.set(params.reshardingUUID.toString('hex'), recipient);
    recipient.start();
    return recipient;
  }

  // The recipient running, or the one its state document resumes.
  get(uuid: Binary): ReshardingRecipient | undefined {
    const running = this.recipients.get(uuid.toString('hex'));
    if (running !== undefined) return running;
    const doc = this.node.local.findOne(RECIPIENT_DOCS_NS, { _id: uuid });
    return doc === undefined ? undefined : this.resume(doc);
  }

  forget(uuid: Binary): void {
    this.recipients.delete(uuid.toString('hex'));
  }

  recover(): number {
    let resumed = 0;
    for (const doc of this.node.local.find(RECIPIENT_DOCS_NS)) {
      if (this.recipients.has((doc._id as Binary).toString('hex'))) continue;
      this.resume(doc);
      resumed++;
    }
    return resumed;
  }

  stepDown(): void {
    for (const r of this.recipients.values()) r.stop();
    this.recipients.clear();
  }

  currentOps(): Doc[] {
    return [...this.recipients.values()].map((r) => r.currentOp());
  }

  private resume(doc: Doc): ReshardingRecipient {
    const recipient = new ReshardingRecipient(this.node, recipientParamsOf(doc), recipientProgressOf(doc));
    this.recipients.set(recipient.params.reshardingUUID.toString('hex'), recipient);
    this.node.logger.info({ c: 'RESHARD', ns: recipient.params.ns, state: doc.state }, 'resharding recipient resumed from its state document');
    recipient.start();
    return recipient;
  }
}
