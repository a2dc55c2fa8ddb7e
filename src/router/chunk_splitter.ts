import { chunkSizeBytesFromSetting } from '../catalog/chunk_size.js';
import { BSON } from 'bson';
import type { Logger } from 'pino';
import type { LazyDocument } from '../bson/raw_document.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../bson/values.js';
import { valueAtPath } from '../catalog/shard_key_pattern.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { Network } from '../wire/network.js';
import { checkOk, checkWriteConcern, fetchAll } from '../wire/remote_cursor.js';
import type { CatalogCache } from './catalog_cache.js';
import type { ChunkManager } from './chunk_manager.js';
import type { ShardRegistry } from './shard_registry.js';
import type { Clock } from '../base/clock.js';

// The router's auto-splitter (seed 001 "Chunk Auto-Splitting"; MongoDB's ChunkWritesTracker +
// ChunkSplitter of the mongos era). The write path counts the bytes written to each chunk, in
// memory; once a chunk has taken enough of them, a check runs off the write path: the owning
// shard's autoSplitVector proposes split keys, _configsvrCommitChunkSplit commits them, and the
// routing of the collection is refreshed. A client's write never waits for any of it.


// MongoDB's splitThreshold heuristic (ChunkWritesTracker::shouldSplit, kSplitTestFactor = 5): a
// chunk is checked each time a fifth of the maximum chunk size has been written to it. Bytes
// written are not bytes stored (updates, deletes), so this only says "worth asking the shard".
export const SPLIT_TEST_FACTOR = 5;
// Settings are read from the config server at most this often, never on the write path; a write
// through this router to config.settings or config.collections drops them at once.
export const SETTINGS_TTL_MS = 10_000;
const SETTINGS_RETRY_MS = 1_000;
// At most this many checks at a time across the router (MongoDB ran them on a small thread pool);
// a chunk that crosses its threshold meanwhile keeps its bytes and is checked on a later write.
export const MAX_CHECKS_IN_FLIGHT = 8;
// splitChunk's limit on split points per commit (kMaxSplitPoints).
export const MAX_SPLIT_POINTS = 8192;

export interface CollectionSplitSettings {
  // config.collections noAutoSplit: the collection-level switch of MongoDB 5.x-6.x (written by
  // configureCollectionBalancing's enableAutoSplitter as its negation; 7.0 no longer auto-splits
  // and unsets the field on upgrade, so this is the last name MongoDB gave it).
  readonly noAutoSplit: boolean;
  readonly maxChunkSizeBytes: number | undefined;
}

export interface AutoSplitSettings {
  readonly enabled: boolean;
  readonly chunkSizeBytes: number;
  readonly collections: ReadonlyMap<string, CollectionSplitSettings>;
}

// From config.settings documents (those with _id 'autosplit' and 'chunksize'; others ignored) and
// config.collections documents carrying noAutoSplit or maxChunkSizeBytes. No autosplit document
// means enabled, as mongosh's sh.status() shows it.
export function parseAutoSplitSettings(settingsDocs: readonly Doc[], collectionDocs: readonly Doc[]): AutoSplitSettings {
  const autosplit = settingsDocs.find((d) => d._id === 'autosplit');
  const chunksize = settingsDocs.find((d) => d._id === 'chunksize');
  const collections = new Map<string, CollectionSplitSettings>();
  for (const doc of collectionDocs) {
    const max = isNumber(doc.maxChunkSizeBytes) ? toDouble(doc.maxChunkSizeBytes) : NaN;
    collections.set(String(doc._id), { noAutoSplit: truthy(doc.noAutoSplit, false), maxChunkSizeBytes: max > 0 ? max : undefined });
  }
  return { enabled: truthy(autosplit?.enabled, true), chunkSizeBytes: chunkSizeBytesFromSetting(chunksize?.value), collections };
}

// bsonExtractBooleanFieldWithDefault: a bool, or a number's truth; anything else is the default.
function truthy(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (isNumber(value)) return toDouble(value) !== 0;
  return fallback;
}


// The collection's maxChunkSizeBytes when it has one, else the cluster's chunk size.
export function chunkSizeFor(settings: AutoSplitSettings, ns: string): number {
  return settings.collections.get(ns)?.maxChunkSizeBytes ?? settings.chunkSizeBytes;
}

export function splitThreshold(chunkSizeBytes: number): number {
  return chunkSizeBytes / SPLIT_TEST_FACTOR;
}

// Whether writes to the collection are worth counting: not when auto-splitting is known to be off
// for it (unknown settings count, so the bytes are there once the settings arrive).
export function tracksWrites(settings: AutoSplitSettings | undefined, ns: string): boolean {
  return settings === undefined || (settings.enabled && settings.collections.get(ns)?.noAutoSplit !== true);
}

export interface ChunkCheckState {
  readonly bytesWritten: number;
  readonly checkInFlight: boolean;
  readonly checksRunning: number;
}

// The decision of the write path: ask the shard about this chunk now?
export function shouldCheckChunk(state: ChunkCheckState, settings: AutoSplitSettings | undefined, ns: string): boolean {
  if (settings === undefined || !tracksWrites(settings, ns)) return false;
  if (state.checkInFlight || state.checksRunning >= MAX_CHECKS_IN_FLIGHT) return false;
  return state.bytesWritten >= splitThreshold(chunkSizeFor(settings, ns));
}

export interface StatementWrite {
  shardKey: Doc;
  bytes: number;
}

// The shard key a successful write statement went to and the bytes it wrote: an insert's document,
// or an update's update/replacement document, placed by the shard key its filter pins (or, for a
// replacement without one, the key the replacement carries). undefined when the write cannot be
// placed in one chunk (a range or multi update).
export function statementWrite(cm: ChunkManager, kind: 'insert' | 'update', body: Doc): StatementWrite | undefined {
  const pattern = cm.shardKeyPattern;
  if (kind === 'insert') return { shardKey: pattern.extractShardKeyFromDoc(body), bytes: BSON.calculateObjectSize(body, { ignoreUndefined: true }) };
  if (body.multi === true) return undefined;
  const u = body.u;
  const bytes = BSON.calculateObjectSize(isPlainObject(u) ? u : { u }, { ignoreUndefined: true });
  const fromFilter = isPlainObject(body.q) ? pattern.extractShardKeyFromQuery(body.q) : undefined;
  if (fromFilter) return { shardKey: fromFilter, bytes };
  const replacement = isPlainObject(u) && Object.keys(u).every((k) => !k.startsWith('$'));
  if (replacement && pattern.fields.every((f) => valueAtPath(u, f) !== undefined)) return { shardKey: pattern.extractShardKeyFromDoc(u), bytes };
  return undefined;
}

// The chunk of a shard key that is one plain number, found without a key string (as the insert
// was targeted); undefined when that path does not apply.
function numericChunk(cm: ChunkManager, shardKey: Doc): ChunkType | undefined {
  const fields = cm.shardKeyPattern.fields;
  const value = fields.length === 1 ? shardKey[fields[0]!] : undefined;
  return typeof value === 'number' ? cm.chunkForNumericKey(value) : undefined;
}

// What a check needs from the rest of the router (fakes in the unit test).
export interface ChunkSplitterDeps {
  readSettings(): Promise<{ settings: Doc[]; collections: Doc[] }>;
  autoSplitVector(shard: string, db: string, cmd: Doc): Promise<Doc>;
  commitSplit(cmd: Doc): Promise<void>;
  invalidateRouting(ns: string): void;
  logger: Logger;
  now(): number;
}

// Per chunk, keyed by the ChunkType object of the routing table: a refresh keeps the objects of
// unchanged chunks and brings new ones for chunks that were split, merged or moved, so a chunk's
// count starts over exactly when its routing changes (MongoDB kept the tracker in its ChunkInfo).
interface ChunkWrites {
  bytes: number;
  checking: boolean;
}

export interface ChunkSplitterStats {
  checks: number;
  splits: number;
  splitPoints: number;
  failures: number;
}

export class ChunkSplitter {
  readonly stats: ChunkSplitterStats = { checks: 0, splits: 0, splitPoints: 0, failures: 0 };
  private readonly chunks = new WeakMap<ChunkType, ChunkWrites>();
  private settings: AutoSplitSettings | undefined;
  private nextRefreshAt = 0;
  private refreshing = false;
  private generation = 0;
  private running = 0;

  constructor(private readonly deps: ChunkSplitterDeps) {}

  // The write path, after a shard accepted a batch: count the bytes of each statement that did not
  // fail against its chunk, and start a check of each chunk that crossed its threshold. Synchronous
  // and never throws.
  noteWrites(cm: ChunkManager, kind: 'insert' | 'update', bodies: readonly Doc[], reply: Doc): void {
    this.noteEach(cm, bodies.length, reply, (i) => statementWrite(cm, kind, bodies[i]!));
  }

  // noteWrites for inserts forwarded as the bytes they arrived in: the shard key is read from the
  // bytes, and a document's size is theirs (what statementWrite computes for its decoded form).
  noteReceivedInserts(cm: ChunkManager, docs: readonly LazyDocument[], reply: Doc): void {
    const pattern = cm.shardKeyPattern;
    this.noteEach(cm, docs.length, reply, (i) => ({ shardKey: pattern.extractShardKeyFromDoc(docs[i]!.fields(pattern.fields)), bytes: docs[i]!.bytes.length }));
  }

  // noteWrites for inserts that were all stored: each document's bytes, in the chunk targeting
  // found for it.
  noteStoredInserts(cm: ChunkManager, chunks: readonly ChunkType[], documents: readonly Uint8Array[]): void {
    const settings = this.currentSettings();
    if (!tracksWrites(settings, cm.ns)) return;
    for (let i = 0; i < chunks.length; i++) this.add(cm, settings, chunks[i]!, documents[i]!.length);
  }

  // noteWrites for an update of one document the shard applied without a write error, sent to the
  // chunk its filter's shard key is in: the bytes of its update document.
  noteStoredUpdate(cm: ChunkManager, chunk: ChunkType, bytes: number): void {
    const settings = this.currentSettings();
    if (tracksWrites(settings, cm.ns)) this.add(cm, settings, chunk, bytes);
  }

  private noteEach(cm: ChunkManager, count: number, reply: Doc, writeOf: (i: number) => StatementWrite | undefined): void {
    const settings = this.currentSettings();
    if (!tracksWrites(settings, cm.ns)) return;
    const failed = new Set(Array.isArray(reply.writeErrors) ? (reply.writeErrors as Doc[]).map((e) => Number(e.index)) : []);
    for (let i = 0; i < count; i++) {
      if (failed.has(i)) continue;
      let chunk: ChunkType;
      let bytes: number;
      try {
        const w = writeOf(i);
        if (!w) continue;
        chunk = numericChunk(cm, w.shardKey) ?? cm.findIntersectingChunk(w.shardKey);
        bytes = w.bytes;
      } catch {
        continue;
      }
      this.add(cm, settings, chunk, bytes);
    }
  }

  // An unsplittable collection (moveCollection, unshardCollection) keeps its one chunk.
  private add(cm: ChunkManager, settings: AutoSplitSettings | undefined, chunk: ChunkType, bytes: number): void {
    if (cm.collection.unsplittable === true) return;
    let state = this.chunks.get(chunk);
    if (!state) this.chunks.set(chunk, state = { bytes: 0, checking: false });
    state.bytes += bytes;
    if (shouldCheckChunk({ bytesWritten: state.bytes, checkInFlight: state.checking, checksRunning: this.running }, settings, cm.ns)) {
      this.startCheck(cm, chunk, state, chunkSizeFor(settings!, cm.ns));
    }
  }

  // A write through this router to config.settings or config.collections may have changed what
  // the settings say: forget them, and split nothing until they have been read again.
  noteConfigWrite(db: string, coll: unknown): void {
    if (db === 'config' && (coll === 'settings' || coll === 'collections')) this.invalidateSettings();
  }

  invalidateSettings(): void {
    this.generation += 1;
    this.settings = undefined;
    this.nextRefreshAt = 0;
  }

  // The cached settings, starting a background refresh when they are due; undefined until the first
  // read (or after an invalidation) has answered.
  currentSettings(): AutoSplitSettings | undefined {
    if (!this.refreshing && this.deps.now() >= this.nextRefreshAt) this.refresh();
    return this.settings;
  }

  private refresh(): void {
    const generation = this.generation;
    this.refreshing = true;
    this.deps.readSettings().then(
      ({ settings, collections }) => {
        // Invalidated while reading: what was read may predate the write; read again next time.
        if (generation !== this.generation) return;
        this.settings = parseAutoSplitSettings(settings, collections);
        this.nextRefreshAt = this.deps.now() + SETTINGS_TTL_MS;
      },
      (err: unknown) => {
        if (generation === this.generation) this.nextRefreshAt = this.deps.now() + SETTINGS_RETRY_MS;
        this.deps.logger.warn({ c: 'SHARDING', err }, 'Could not read the auto-split settings');
      },
    ).finally(() => { this.refreshing = false; });
  }

  private startCheck(cm: ChunkManager, chunk: ChunkType, state: ChunkWrites, maxChunkSizeBytes: number): void {
    state.checking = true;
    state.bytes = 0;
    this.running += 1;
    this.stats.checks += 1;
    this.check(cm, chunk, maxChunkSizeBytes).then(
      (split) => {
        // A split chunk is gone from the cluster: writes routed by the old table until the refresh
        // must not start another check of it.
        if (!split) state.checking = false;
      },
      (err: unknown) => {
        state.checking = false;
        this.stats.failures += 1;
        this.deps.logger.warn({ c: 'SHARDING', ns: cm.ns, min: chunk.min, max: chunk.max, err }, 'Unable to auto-split chunk');
      },
    ).finally(() => { this.running -= 1; });
  }

  // True when the chunk was split.
  private async check(cm: ChunkManager, chunk: ChunkType, maxChunkSizeBytes: number): Promise<boolean> {
    const ns = cm.ns;
    const db = ns.slice(0, ns.indexOf('.'));
    const reply = await this.deps.autoSplitVector(chunk.shard, db, {
      autoSplitVector: ns.slice(db.length + 1), keyPattern: cm.keyPattern, min: chunk.min, max: chunk.max, maxChunkSizeBytes, limit: MAX_SPLIT_POINTS,
    });
    const splitPoints = Array.isArray(reply.splitKeys) ? (reply.splitKeys as Doc[]) : [];
    if (splitPoints.length === 0) return false;
    await this.deps.commitSplit({ _configsvrCommitChunkSplit: ns, chunkRange: { min: chunk.min, max: chunk.max }, splitPoints });
    this.deps.invalidateRouting(ns);
    this.stats.splits += 1;
    this.stats.splitPoints += splitPoints.length;
    this.deps.logger.info({ c: 'SHARDING', ns, min: chunk.min, max: chunk.max, shard: chunk.shard, splitPoints: splitPoints.length }, 'Auto-split chunk');
    return true;
  }
}

// The router's splitter: settings from config.settings and config.collections, split keys from the
// owning shard, commits on the config server, refreshed routing in the catalog cache.
export function createChunkSplitter(client: Network, configHost: string, shardRegistry: ShardRegistry, catalogCache: CatalogCache, logger: Logger, clock: Clock): ChunkSplitter {
  return new ChunkSplitter({
    async readSettings() {
      const [settings, collections] = await Promise.all([
        fetchAll(client, configHost, 'config', { find: 'settings', filter: { _id: { $in: ['autosplit', 'chunksize'] } } }),
        fetchAll(client, configHost, 'config', {
          find: 'collections',
          filter: { $or: [{ noAutoSplit: { $exists: true } }, { maxChunkSizeBytes: { $exists: true } }] },
          projection: { noAutoSplit: 1, maxChunkSizeBytes: 1 },
        }),
      ]);
      return { settings, collections };
    },
    async autoSplitVector(shard, db, cmd) {
      return checkOk(await client.command(await shardRegistry.host(shard), db, cmd));
    },
    async commitSplit(cmd) {
      checkWriteConcern(await client.command(configHost, 'admin', cmd));
    },
    invalidateRouting: (ns) => catalogCache.invalidateCollection(ns),
    logger,
    now: () => clock.now(),
  });
}
