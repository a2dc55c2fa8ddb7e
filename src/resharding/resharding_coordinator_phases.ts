import { valuesEqual } from '../bson/compare.js';
import { Timestamp, type Binary } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import type { Network } from '../wire/network.js';
import type { Clock, Timer } from '../base/clock.js';
import { hangIfFailPointEnabled, type FailPoints } from '../base/fail_points.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { ReshardingState } from './resharding_coordinator_state_machine.js';
import type { RangeOwner } from './resharding_recipient.js';
import type { ZoneRange } from '../catalog_decisions/zones.js';

// What the coordinator reads and changes of the config server's catalog (ShardingCatalogManager).
export interface ReshardingCatalog {
  collection(ns: string): CollectionType | undefined;
  chunks(uuid: unknown): ChunkType[];
  shards(): ShardType[];
  primaryShard(db: string): string | undefined;
  zones(ns: string): ZoneRange[];
  // Each shard's data size (listDatabases' totalSize): where an unshardCollection naming no shard goes.
  shardDataSizes(): Promise<{ id: string; dataSizeBytes: number }[]>;
  now(): Timestamp;
  setAllowMigrations(ns: string, allow: boolean): Promise<void>;
  // In one write unit: the collection's entry takes the new UUID and key with a new epoch and
  // timestamp, its chunks are replaced by the new key's. Asked again after it ran, it changes nothing.
  commitReshardCollection(commit: ReshardingCommit): Promise<void>;
}

export interface ReshardingCommit {
  readonly ns: string;
  readonly sourceUUID: Binary;
  readonly reshardingUUID: Binary;
  readonly key: Doc;
  readonly chunks: readonly RangeOwner[];
  // The collection's zones under the new key (config.tags replaced).
  readonly zones: readonly ZoneRange[];
  // moveCollection and unshardCollection: the entry stays, or becomes, unsplittable.
  readonly unsplittable: boolean;
}

// The persisted state document's fields a phase reads (config.reshardingOperations).
export interface CoordinatorDocument {
  readonly _id: Binary;
  readonly ns: string;
  readonly tempNs: string;
  readonly reshardingKey: Doc;
  readonly sourceKey: Doc;
  readonly sourceUUID: Binary;
  readonly donorShards: readonly { id: string }[];
  readonly recipientShards: readonly { id: string }[];
  readonly presetReshardedChunks: readonly { min: Doc; max: Doc; recipientShardId: string }[];
  readonly zones: readonly { zone: string; min: Doc; max: Doc }[];
  readonly cloneTimestamp?: Timestamp;
  readonly provenance?: 'moveCollection' | 'unshardCollection';
}

export interface PhaseContext {
  readonly doc: CoordinatorDocument;
  readonly catalog: ReshardingCatalog;
  readonly client: Network;
  // Set when an abort overtakes the phase.
  readonly signal: AbortSignal;
  // Resolves when commitReshardCollection asks for the commit as soon as possible.
  readonly commitRequested: Promise<void>;
  readonly clock: Clock;
  readonly failPoints: FailPoints;
  readonly criticalSectionTimeoutMs: number;
}

const POLL_MS = 100;
const CRITICAL_SECTION_REASON = (doc: CoordinatorDocument): Doc => ({ command: 'reshardCollection', reshardingUUID: doc._id });

// The work of each state, run again in full when resumed: every command it sends is idempotent.
// Returns what it decided for the states after it (persisted with the next state).
export async function runCoordinatorPhase(state: ReshardingState, ctx: PhaseContext): Promise<Doc> {
  switch (state) {
    case 'initializing':
      // Migrations of the collection end, and none starts: its chunks stay where the donors are.
      await ctx.catalog.setAllowMigrations(ctx.doc.ns, false);
      return {};
    case 'preparing-to-donate': return prepareToDonate(ctx);
    case 'cloning': return clone(ctx);
    case 'applying': return awaitCloseEnough(ctx);
    case 'blocking-writes': return blockWrites(ctx);
    case 'committing': return commit(ctx);
    case 'aborting': return abort(ctx);
    case 'done': return {};
  }
}

async function prepareToDonate(ctx: PhaseContext): Promise<Doc> {
  const { doc, catalog, client } = ctx;
  const donors = [...new Set(catalog.chunks(doc.sourceUUID).map((c) => c.shard))].sort();
  const cloneTimestamp = catalog.now();
  const hosts = shardHosts(catalog);
  const counts = await Promise.all(donors.map(async (id) => {
    const reply = checkOk(await client.command(hosts.get(id)!, dbOf(doc.ns), { count: collOf(doc.ns) }));
    return typeof reply.n === 'number' ? reply.n : 0;
  }));
  return { donorShards: donors.map((id) => ({ id })), cloneTimestamp, approxDocumentsToCopy: counts.reduce((a, b) => a + b, 0) };
}

async function clone(ctx: PhaseContext): Promise<Doc> {
  const { doc, catalog } = ctx;
  const hosts = shardHosts(catalog);
  const start = {
    _shardsvrReshardingRecipientStart: doc.ns, reshardingUUID: doc._id, sourceUUID: doc.sourceUUID, tempNs: doc.tempNs,
    sourceKey: doc.sourceKey, reshardingKey: doc.reshardingKey, cloneTimestamp: doc.cloneTimestamp,
    donors: doc.donorShards.map((d) => ({ shardId: d.id, host: hosts.get(d.id)! })),
    sourceChunks: catalog.chunks(doc.sourceUUID).map((c) => ({ min: c.min, max: c.max, shard: c.shard })),
    recipientChunks: recipientChunks(doc),
  };
  await onRecipients(ctx, () => start);
  await pollRecipients(ctx, (s) => s.state === 'applying' || s.state === 'strict-consistency');
  return {};
}

async function awaitCloseEnough(ctx: PhaseContext): Promise<Doc> {
  let asked = false;
  void ctx.commitRequested.then(() => { asked = true; });
  await pollRecipients(ctx, (s) => s.caughtUp === true, () => asked);
  // MongoDB's fail point of the same name (--enableTestCommands): the recipients apply, the
  // critical section waits, an abort may come.
  await hangIfFailPointEnabled(ctx, 'reshardingPauseCoordinatorBeforeBlockingWrites', ctx.clock);
  return {};
}

async function blockWrites(ctx: PhaseContext): Promise<Doc> {
  const { doc } = ctx;
  await onShards(ctx, participants(doc), { _shardsvrParticipantBlock: collOf(doc.ns), blockType: 'Writes', reason: CRITICAL_SECTION_REASON(doc) }, dbOf(doc.ns));
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = ctx.clock.setTimer(ctx.criticalSectionTimeoutMs, () => reject(new MongoError(ErrorCodes.ReshardingCriticalSectionTimeout,
      `the recipients did not catch up within reshardingCriticalSectionTimeoutMillis (${ctx.criticalSectionTimeoutMs} ms)`)));
  });
  try {
    await Promise.race([onRecipients(ctx, () => ({ _shardsvrReshardingRecipientFinish: doc.ns, reshardingUUID: doc._id })), timeout]);
  } finally {
    timer?.cancel();
  }
  return {};
}

async function commit(ctx: PhaseContext): Promise<Doc> {
  const { doc, catalog } = ctx;
  await catalog.commitReshardCollection({ ns: doc.ns, sourceUUID: doc.sourceUUID, reshardingUUID: doc._id, key: doc.reshardingKey, chunks: recipientChunks(doc),
    zones: doc.zones.map((z) => ({ tag: z.zone, min: z.min, max: z.max })), unsplittable: doc.provenance !== undefined,
  });
  // MongoDB's fail point of the same name (--enableTestCommands): the decision is in the catalog,
  // no participant has been told.
  await hangIfFailPointEnabled(ctx, 'reshardingPauseBeforeTellingParticipantsToCommit', ctx.clock);
  const reason = CRITICAL_SECTION_REASON(doc);
  const coll = collOf(doc.ns);
  // The recipients rename under their critical section, so no write reaches a recipient's name
  // before the collection of the new UUID holds it; then they let writes in.
  await onRecipients(ctx, () => ({ _shardsvrReshardingRecipientCommit: doc.ns, reshardingUUID: doc._id, tempNs: doc.tempNs }));
  const recipients = doc.recipientShards.map((r) => r.id);
  await onShards(ctx, recipients, { _shardsvrParticipantBlock: coll, blockType: 'Unblock', reason }, dbOf(doc.ns));
  // Donors that are no recipient: a write held there refreshes and goes to the new owners; then
  // every copy of the old UUID on a shard that is no recipient goes (a donor's, and an empty one
  // shardCollection left on a shard that never owned a chunk).
  const donorsOnly = doc.donorShards.map((d) => d.id).filter((id) => !recipients.includes(id));
  await onShards(ctx, donorsOnly, { _shardsvrParticipantBlock: coll, blockType: 'Unblock', reason }, dbOf(doc.ns));
  const others = catalog.shards().map((s) => s._id).filter((id) => !recipients.includes(id));
  await onShards(ctx, others, { _shardsvrDropCollectionParticipant: coll, collectionUUID: doc.sourceUUID }, dbOf(doc.ns));
  return {};
}

async function abort(ctx: PhaseContext): Promise<Doc> {
  const { doc, catalog } = ctx;
  await onRecipients(ctx, () => ({ _shardsvrReshardingRecipientAbort: doc.ns, reshardingUUID: doc._id, tempNs: doc.tempNs }));
  await onShards(ctx, participants(doc), { _shardsvrParticipantBlock: collOf(doc.ns), blockType: 'Unblock', reason: CRITICAL_SECTION_REASON(doc) }, dbOf(doc.ns));
  const current = catalog.collection(doc.ns);
  if (current !== undefined && valuesEqual(current.uuid, doc.sourceUUID)) await catalog.setAllowMigrations(doc.ns, true);
  return {};
}

function recipientChunks(doc: CoordinatorDocument): RangeOwner[] {
  return doc.presetReshardedChunks.map((c) => ({ min: c.min, max: c.max, shard: c.recipientShardId }));
}

function participants(doc: CoordinatorDocument): string[] {
  return [...new Set([...doc.donorShards.map((d) => d.id), ...doc.recipientShards.map((r) => r.id)])].sort();
}

async function onRecipients(ctx: PhaseContext, cmd: () => Doc): Promise<Doc[]> {
  return onShards(ctx, ctx.doc.recipientShards.map((r) => r.id), cmd());
}

// The recipients' commands run on admin; the DDL participants' on the collection's database.
async function onShards(ctx: PhaseContext, ids: readonly string[], cmd: Doc, db = 'admin'): Promise<Doc[]> {
  checkNotAborted(ctx);
  const hosts = shardHosts(ctx.catalog);
  return Promise.all(ids.map(async (id) => {
    const host = hosts.get(id);
    if (host === undefined) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${id} not found`);
    return checkOk(await ctx.client.command(host, db, cmd));
  }));
}

// Asks every recipient its status until each satisfies `ready` (or `enough` says to stop waiting);
// a recipient that failed aborts the resharding with its reason.
async function pollRecipients(ctx: PhaseContext, ready: (status: Doc) => boolean, enough: () => boolean = () => false): Promise<void> {
  for (;;) {
    const statuses = await onShards(ctx, ctx.doc.recipientShards.map((r) => r.id), { _shardsvrReshardingRecipientStatus: 1, reshardingUUID: ctx.doc._id });
    const failed = statuses.find((s) => s.state === 'error');
    if (failed !== undefined) {
      const reason = failed.abortReason as { code?: number; errmsg?: string } | undefined;
      throw new MongoError(reason?.code ?? ErrorCodes.InternalError, reason?.errmsg ?? 'a resharding recipient failed');
    }
    if (statuses.every(ready) || enough()) return;
    await ctx.clock.sleep(POLL_MS);
  }
}

function checkNotAborted(ctx: PhaseContext): void {
  if (ctx.signal.aborted) throw new MongoError(ErrorCodes.ReshardCollectionAborted, 'the resharding was aborted');
}

function shardHosts(catalog: ReshardingCatalog): Map<string, string> {
  return new Map(catalog.shards().map((s) => [s._id, s.host]));
}

function dbOf(ns: string): string {
  return ns.slice(0, ns.indexOf('.'));
}

function collOf(ns: string): string {
  return ns.slice(ns.indexOf('.') + 1);
}
