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
import type { LocalCollections } from '../query/exec/local_collection.js';
import { OwnershipFilter } from '../shard/ownership_filter.js';
import type { Collection, StorageEngine, WriteUnit } from '../storage/storage_engine.js';
import type { SessionCatalog } from '../sessions/session_catalog.js';
import { migratedHistoryFromBSON } from '../sessions/session_migration.js';
import type { Network } from '../wire/network.js';
import type { Clock } from '../base/clock.js';
import type { FailPoints } from '../base/fail_points.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import { recipientWriteFor, type ApplyContext } from './recipient_apply.js';
import { isTransient } from './resharding_coordinator_state_machine.js';

// Where each recipient keeps its part of a resharding (MongoDB's namespace of the same name).
export const RECIPIENT_DOCS_NS = 'config.localReshardingOperations.recipient';

// The recipient's states, as MongoDB's RecipientStateEnum names those it goes through.
type RecipientState = 'cloning' | 'applying' | 'strict-consistency' | 'error' | 'done';

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

// One donor's change stream as this recipient reads it: where it is, and how far the donor has
// promised nothing more is to come (the high-water mark of its postBatchResumeToken).
interface DonorStream {
  readonly donor: { shardId: string; host: string };
  readonly owned: OwnershipFilter;
  promisedThrough: Timestamp;
  caughtUp: boolean;
}

// A recipient of one resharding (MongoDB's RecipientStateMachine): creates the temporary
// collection with the new key's index and the source's, clones from every donor at cloneTimestamp
// the documents whose new key falls in its chunks, then applies each donor's change events from
// there on (their oplog, read through a change stream on the donor, which waits out prepared
// transactions and unfinished commits and shows no migration's writes), until the coordinator
// commits or aborts it. Its writes are marked fromMigrate: no change stream shows the copy.
export class ReshardingRecipient {
  private state: RecipientState = 'cloning';
  private error: MongoError | undefined;
  private stopped = false;
  private documentsCopied = 0;
  private oplogEntriesApplied = 0;
  private readonly streams: DonorStream[];
  private readonly mine: OwnershipFilter;
  private readonly startedMs: number;

  constructor(private readonly node: RecipientNode, readonly params: RecipientParams) {
    const oldKey = new ShardKeyPattern(params.sourceKey);
    this.streams = params.donors.map((donor) => ({
      donor, owned: ownership(oldKey, params.sourceChunks, donor.shardId), promisedThrough: params.cloneTimestamp, caughtUp: false,
    }));
    this.mine = ownership(new ShardKeyPattern(params.reshardingKey), params.recipientChunks, params.shardId);
    this.startedMs = node.wallClock.now();
  }

  start(): void {
    this.node.local.write((w) => w.update(RECIPIENT_DOCS_NS, { _id: this.params.reshardingUUID }, { $set: this.stateDocument() }, { upsert: true }));
    void this.run().catch((err: unknown) => {
      if (this.stopped) return;
      this.error = err instanceof MongoError ? err : new MongoError(ErrorCodes.InternalError, String(err));
      this.state = 'error';
      this.node.logger.warn({ c: 'RESHARD', ns: this.params.ns, err: this.error.message }, 'resharding recipient failed');
    });
  }

  // The recipient as $currentOp shows it (MongoDB's recipient metrics).
  currentOp(): Doc {
    return {
      desc: `ReshardingRecipientService ${this.params.reshardingUUID.toString('hex')}`, op: 'command', ns: this.params.ns, reshardingUUID: this.params.reshardingUUID,
      recipientState: this.state, documentsCopied: this.documentsCopied, oplogEntriesApplied: this.oplogEntriesApplied,
      totalOperationTimeElapsedSecs: Math.floor((this.node.wallClock.now() - this.startedMs) / 1000),
    };
  }

  status(): Doc {
    return {
      state: this.state,
      documentsCopied: this.documentsCopied,
      oplogEntriesApplied: this.oplogEntriesApplied,
      caughtUp: this.state !== 'cloning' && this.streams.every((s) => s.caughtUp),
      ...(this.error === undefined ? {} : { abortReason: { code: this.error.code, errmsg: this.error.message } }),
    };
  }

  // Once the donors block writes: applies every event each donor wrote before `finalTimes`
  // (its cluster time once its critical section was held), then holds still until the commit.
  async finish(finalTimes: ReadonlyMap<string, Timestamp>): Promise<void> {
    for (;;) {
      if (this.error !== undefined) throw this.error;
      if (this.stopped) throw new MongoError(ErrorCodes.ReshardCollectionAborted, 'the resharding recipient was stopped');
      const behind = this.streams.filter((s) => !s.promisedThrough.greaterThan(finalTimes.get(s.donor.shardId) ?? s.promisedThrough));
      // MongoDB's fail point of that name (--enableTestCommands): the recipient does not finish.
      const paused = this.node.failPoints.shouldFire('reshardingPauseRecipientDuringOplogApplication') !== undefined;
      if (this.state !== 'cloning' && behind.length === 0 && !paused) break;
      await this.node.wallClock.sleep(10);
    }
    await Promise.all(this.streams.map((s) => this.copySessionHistory(s)));
    this.state = 'strict-consistency';
    this.saveState();
  }

  // After the coordinator's commit: the temporary collection takes the source's name, replacing
  // this shard's copy of the source (the same drop a rename with dropTarget makes).
  commit(dropSource: (ns: string) => void): void {
    this.stopped = true;
    const { storage } = this.node;
    const temp = storage.getCollection(this.params.tempNs);
    if (temp !== undefined) {
      const source = storage.getCollection(this.params.ns);
      if (source !== undefined && !valuesEqual(source.entry.uuid, this.params.reshardingUUID)) dropSource(this.params.ns);
      storage.renameCollection(this.params.tempNs, this.params.ns);
    }
    this.state = 'done';
    this.node.local.write((w) => w.delete(RECIPIENT_DOCS_NS, { _id: this.params.reshardingUUID }));
  }

  abort(): void {
    this.stopped = true;
    dropTemporaryCollection(this.node, this.params.tempNs, this.params.reshardingUUID);
    this.state = 'done';
    this.node.local.write((w) => w.delete(RECIPIENT_DOCS_NS, { _id: this.params.reshardingUUID }));
  }

  // Everything the recipient was started with, so that a later recovery can start it again from
  // its document alone (not built yet: a restarted shard forgets its recipients).
  private stateDocument(): Doc {
    const p = this.params;
    return {
      ns: p.ns, tempReshardingNss: p.tempNs, sourceUUID: p.sourceUUID, sourceKey: p.sourceKey, reshardingKey: p.reshardingKey, cloneTimestamp: p.cloneTimestamp,
      donorShards: p.donors.map((d) => ({ shardId: d.shardId, host: d.host })), sourceChunks: p.sourceChunks, recipientChunks: p.recipientChunks,
      state: this.state,
    };
  }

  private saveState(): void {
    this.node.local.write((w) => w.update(RECIPIENT_DOCS_NS, { _id: this.params.reshardingUUID }, { $set: { state: this.state } }));
  }

  private async run(): Promise<void> {
    const started = this.node.wallClock.now();
    await this.createTemporaryCollection();
    await Promise.all(this.streams.map((s) => this.cloneRetrying(s)));
    if (this.stopped) return;
    this.state = 'applying';
    this.saveState();
    this.node.logger.info({ c: 'RESHARD', ns: this.params.ns, documentsCopied: this.documentsCopied, ms: this.node.wallClock.now() - started }, 'resharding recipient cloned');
    await Promise.all(this.streams.map((s) => this.follow(s)));
  }

  // The source's options and indexes, as a donor has them, and the new shard key's index, under
  // the resharding's UUID: the collection's UUID once the commit renames it.
  private async createTemporaryCollection(): Promise<void> {
    const { storage } = this.node;
    const [db, coll] = splitNs(this.params.ns);
    const donor = this.params.donors[0]!.host;
    const [specs, [info]] = await Promise.all([
      fetchAll(this.node.client, donor, db, { listIndexes: coll }),
      fetchAll(this.node.client, donor, db, { listCollections: 1, filter: { name: coll } }),
    ]);
    if (this.stopped) return;
    const temp = storage.getCollection(this.params.tempNs) ?? storage.createCollection(this.params.tempNs, (info?.options as Doc | undefined) ?? {}, this.params.reshardingUUID);
    const wanted = specs.filter((s) => s.name !== '_id_').map(({ ns: _ns, ...spec }) => spec);
    const key = this.params.reshardingKey;
    if (!specs.some((s) => JSON.stringify(s.key) === JSON.stringify(key))) wanted.push({ v: 2, key, name: indexName(key) });
    const missing = wanted.filter((s) => temp.indexes.every((i) => i.name !== s.name));
    if (missing.length > 0) storage.createIndexes(temp, missing);
  }

  // A transient failure starts the donor's clone again: its writes are upserts, so documents
  // copied twice are one.
  private async cloneRetrying(stream: DonorStream): Promise<void> {
    for (;;) {
      try {
        return await this.clone(stream);
      } catch (err) {
        if (!(err instanceof MongoError) || !isTransient(err.code) || this.stopped) throw err;
        await this.node.wallClock.sleep(STREAM_RETRY_MS);
      }
    }
  }

  // Every document the donor held at cloneTimestamp in its chunks whose new key falls here.
  private async clone(stream: DonorStream): Promise<void> {
    const [db, coll] = splitNs(this.params.ns);
    const { client } = this.node;
    const host = stream.donor.host;
    let reply = checkOk(await client.command(host, db, {
      find: coll, filter: {}, batchSize: CLONE_BATCH, readConcern: { level: 'snapshot', atClusterTime: this.params.cloneTimestamp },
    }));
    for (;;) {
      const cursor = reply.cursor as Doc;
      const docs = (cursor.firstBatch ?? cursor.nextBatch) as Doc[];
      if (this.stopped) return;
      const kept = docs.filter((d) => stream.owned.ownsDocument(d) && this.mine.ownsDocument(d));
      this.write((unit, temp) => {
        for (const doc of kept) unit.upsertBytes(temp, serializeDocument(doc));
      });
      this.documentsCopied += kept.length;
      if (isZeroId(cursor.id)) return;
      reply = checkOk(await client.command(host, db, { getMore: cursor.id, collection: coll, batchSize: CLONE_BATCH }));
    }
  }

  // The donor's change events after cloneTimestamp, applied in their order, until stopped. A
  // transient failure (the donor unreachable, electing a primary) opens the stream again where
  // the last batch left it (its postBatchResumeToken).
  private async follow(stream: DonorStream): Promise<void> {
    const [db, coll] = splitNs(this.params.ns);
    const { client } = this.node;
    const host = stream.donor.host;
    let resumeToken: unknown;
    let cursorId: unknown;
    while (!this.stopped) {
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
          const events = (cursor.firstBatch ?? cursor.nextBatch) as Doc[];
          this.apply(stream, events);
          if (cursor.postBatchResumeToken !== undefined) resumeToken = cursor.postBatchResumeToken;
          const promised = promisedTime(cursor.postBatchResumeToken);
          if (promised !== undefined && promised.greaterThan(stream.promisedThrough)) stream.promisedThrough = promised;
          stream.caughtUp = events.length <= CLOSE_ENOUGH_EVENTS;
          if (this.stopped) break;
          reply = checkOk(await client.command(host, db, { getMore: cursorId, collection: coll, maxTimeMS: STREAM_WAIT_MS }));
        }
      } catch (err) {
        if (!(err instanceof MongoError) || !isTransient(err.code) || this.stopped) throw err;
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

  private apply(stream: DonorStream, events: readonly Doc[]): void {
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


// The recipients of one shard, by resharding UUID (hex).
export class ReshardingRecipientService {
  private readonly recipients = new Map<string, ReshardingRecipient>();

  constructor(private readonly node: RecipientNode) {}

  // Joins a recipient already started for the same resharding (the coordinator sending again).
  start(params: RecipientParams): ReshardingRecipient {
    const id = params.reshardingUUID.toString('hex');
    const running = this.recipients.get(id);
    if (running !== undefined) return running;
    const recipient = new ReshardingRecipient(this.node, params);
    this.recipients.set(id, recipient);
    recipient.start();
    return recipient;
  }

  get(uuid: Binary): ReshardingRecipient | undefined {
    return this.recipients.get(uuid.toString('hex'));
  }

  forget(uuid: Binary): void {
    this.recipients.delete(uuid.toString('hex'));
  }

  currentOps(): Doc[] {
    return [...this.recipients.values()].map((r) => r.currentOp());
  }
}
