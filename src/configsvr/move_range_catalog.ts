import { ObjectId, type Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Logger } from 'pino';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import { placementTimestamp, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ChangeLogContext } from '../catalog_decisions/changelog.js';
import { decideCommitChunkMigration } from '../catalog_decisions/commit_chunk_migration.js';
import { decideMoveChunk, decideMoveRange, type MoveRangeDecision } from '../catalog_decisions/move_range.js';
import { migrationId } from '../catalog_decisions/migration_request.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

export interface MoveRequest {
  ns: string;
  toShard: string;
  min?: Doc;
  max?: Doc;
  find?: Doc;
  bounds?: Doc[];
  waitForDelete: boolean;
}

// The config server's part of chunk migration (seed 001, "The Balancer" and the commit): it starts
// a migration on the donor (an identical one in flight is joined), and commits the donor's result
// into config.chunks with the version bumps of decideCommitChunkMigration.
export class MoveRangeCatalog {
  private readonly inFlight = new Map<string, { ns: string; promise: Promise<void> }>();

  constructor(
    private readonly catalog: ShardingCatalogManager,
    private readonly local: LocalCollections,
    private readonly client: Network,
    private readonly log: () => ChangeLogContext,
    private readonly now: () => Timestamp,
    private readonly logger: Logger,
    // chunkHistoryWindowSecs of the process's parameters: how far back a commit keeps chunk history.
    private readonly historyWindowSecs: number,
  ) {}

  async move(req: MoveRequest): Promise<void> {
    const collection = this.catalog.requireSharded(req.ns);
    if ((collection as { permitMigrations?: boolean }).permitMigrations === false) {
      throw new MongoError(ErrorCodes.ConflictingOperationInProgress, 'Collection is undergoing changes so moveChunk is not allowed.');
    }
    const chunks = this.catalog.chunks(collection.uuid);
    const shards = this.catalog.shards();
    const decision: MoveRangeDecision = req.find !== undefined || req.bounds !== undefined
      ? decideMoveChunk({ collection, chunks, find: req.find, bounds: req.bounds, to: req.toShard, shards })
      : decideMoveRange({ collection, chunks, min: req.min, max: req.max, toShard: req.toShard, shards });
    const migration = decision.migration;
    if (!migration) return;
    const id = migrationId(migration);
    const running = this.inFlight.get(id);
    if (running) return running.promise;
    const donorHost = this.catalog.shard(migration.fromShard).host;
    const started = (async () => {
      this.logger.info({ c: 'MIGRATION', ns: req.ns, from: migration.fromShard, to: migration.toShard, min: migration.min, max: migration.max }, 'Starting migration');
      checkOk(await this.client.command(donorHost, 'admin', {
        _shardsvrMoveRange: req.ns, min: migration.min, max: migration.max, toShard: migration.toShard, waitForDelete: req.waitForDelete,
      }));
    })();
    this.inFlight.set(id, { ns: req.ns, promise: started });
    try {
      await started;
    } finally {
      this.inFlight.delete(id);
    }
  }

  commit(body: {
    ns: string; fromShard: string; toShard: string; migratedChunk: { min: Doc; max: Doc; lastmod?: Timestamp };
    fromShardCollectionVersion: ChunkVersion; validAfter?: Timestamp; counts?: Doc;
  }): Doc {
    const collection = this.catalog.requireSharded(body.ns);
    const chunks = this.catalog.chunks(collection.uuid);
    const decision = decideCommitChunkMigration({
      collection, chunks, shards: this.catalog.shards(), migratedChunk: body.migratedChunk,
      fromShardCollectionVersion: body.fromShardCollectionVersion, fromShard: body.fromShard, toShard: body.toShard,
      validAfter: body.validAfter ?? this.now(), historyWindowSecs: this.historyWindowSecs, counts: body.counts ?? {}, chunkIdFactory: () => new ObjectId(), log: this.log(),
    });
    if (!decision.alreadyCommitted) {
      this.local.write((w) => {
        for (const c of decision.updated) w.update('config.chunks', { _id: c._id }, c as unknown as Doc);
        for (const c of decision.inserted) w.insert('config.chunks', c as unknown as Doc);
        for (const entry of decision.changelog) w.insert('config.changelog', entry);
      });
    }
    return {
      shardVersion: placementTimestamp(decision.shardVersions.donor),
      collectionVersion: placementTimestamp(decision.collectionVersion),
      ok: 1,
    };
  }

  // The balancer found this chunk larger than the chunk size and impossible to cut.
  markJumbo(ns: string, min: Doc): void {
    const collection = this.catalog.requireSharded(ns);
    this.local.write((w) => { w.update('config.chunks', { uuid: collection.uuid, min }, { $set: { jumbo: true } }); });
  }

  clearJumbo(ns: string, min: Doc): void {
    const collection = this.catalog.requireSharded(ns);
    this.local.write((w) => { w.update('config.chunks', { uuid: collection.uuid, min }, { $unset: { jumbo: '' } }); });
  }

  // setAllowMigrations (7.0): false sets permitMigrations: false, which stops the balancer and
  // moveChunk on the collection, and answers once the migrations of it already running have ended
  // (a DDL coordinator stops migrations before it blocks the collection); true removes the field.
  // An unsplittable collection's too: its DDL coordinators (drop, rename) stop them alike.
  async setAllowMigrations(ns: string, allow: boolean): Promise<void> {
    if (this.catalog.collection(ns) === undefined) this.catalog.requireSharded(ns);
    const update = allow ? { $unset: { permitMigrations: '' } } : { $set: { permitMigrations: false } };
    this.local.write((w) => { w.update('config.collections', { _id: ns }, update); });
    if (!allow) await Promise.allSettled([...this.inFlight.values()].filter((m) => m.ns === ns).map((m) => m.promise));
  }

  // configureCollectionBalancing (6.0+): the collection's own chunk size (0 goes back to the
  // cluster's) and whether the AutoMerger may merge its chunks.
  configureCollectionBalancing(ns: string, chunkSizeMB: number | undefined, enableAutoMerger: boolean | undefined): void {
    this.catalog.requireSharded(ns);
    const set: Doc = {};
    const unset: Doc = {};
    if (chunkSizeMB !== undefined) {
      if (chunkSizeMB < 0 || chunkSizeMB > 1024) throw new MongoError(ErrorCodes.InvalidOptions, 'chunk size is out of range, must be between 1MB and 1GB');
      if (chunkSizeMB === 0) unset.maxChunkSizeBytes = '';
      else set.maxChunkSizeBytes = chunkSizeMB * 1024 * 1024;
    }
    if (enableAutoMerger !== undefined) set.enableAutoMerge = enableAutoMerger;
    const update: Doc = {};
    if (Object.keys(set).length > 0) update.$set = set;
    if (Object.keys(unset).length > 0) update.$unset = unset;
    if (Object.keys(update).length > 0) this.local.write((w) => { w.update('config.collections', { _id: ns }, update); });
  }

  // Fences a commit that may still be in flight (MongoDB's _configsvrEnsureChunkVersionIsGreaterThan):
  // the chunk with exactly these bounds, if it is still at or below `version`, takes a new major
  // version, so a late commit at the old version is refused.
  ensureChunkVersionIsGreaterThan(ns: string, minKey: Doc, maxKey: Doc, version: ChunkVersion): void {
    const collection = this.catalog.collection(ns);
    if (!collection || !collection.lastmodEpoch.equals(version.epoch)) return;
    const chunks = this.catalog.chunks(collection.uuid);
    const chunk = chunks.find((c) => compareValues(c.min, minKey) === 0 && compareValues(c.max, maxKey) === 0);
    if (!chunk) return;
    const current = chunk.lastmod;
    if (current.high > version.major || (current.high === version.major && current.low > version.minor)) return;
    const maxMajor = Math.max(...chunks.map((c: ChunkType) => c.lastmod.high));
    const bumped = placementTimestamp({ ...version, major: maxMajor + 1, minor: 0 });
    this.local.write((w) => { w.update('config.chunks', { _id: chunk._id }, { $set: { lastmod: bumped } }); });
  }
}
