import { ObjectId, Timestamp, UUID, type Binary } from 'bson';
import type { Logger } from 'pino';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import type { ChunkType, CollectionType, DatabaseType, ShardType } from '../catalog/type_chunk.js';
import { decideCreateDatabase } from '../catalog_decisions/create_database.js';
import { decideShardCollection, type ShardCollectionRequest } from '../catalog_decisions/shard_collection.js';
import { decideSplit } from '../catalog_decisions/split_chunk.js';
import { decideMerge } from '../catalog_decisions/merge_chunks.js';
import { DEFAULT_CHUNK_HISTORY_WINDOW_SECS } from '../catalog_decisions/commit_chunk_migration.js';
import { extendBound } from '../catalog_decisions/refine_shard_key.js';
import {
  checkShardIdentity, checkShardName, existingShardFor, formatConnectionString, validateHostAsShard,
} from '../catalog_decisions/add_shard.js';
import { parseConnectionString, type ConnectionString } from '../client/connection_string.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import type { DDLLockManager } from '../ddl/ddl_lock_manager.js';
import { changeLogEntry, CONFIG_SHARD, type ChangeLogContext } from '../catalog_decisions/changelog.js';
import { MoveRangeCatalog } from './move_range_catalog.js';
import type { Clock } from '../base/clock.js';

// How long addShard waits for a set's members to name a primary, and how often it asks.
const PRIMARY_WAIT_MS = 15_000;
const PRIMARY_POLL_MS = 250;

// Who the config server is to its shards: the cluster id of config.version (read when needed: a
// member that becomes primary answers with the id its set replicated), and the connection string
// shards reach it by (a replica set's `setName/members`).
export interface ConfigServerIdentity {
  clusterId(): ObjectId;
  connectionString(): string;
}

// The config server's catalog operations (MongoDB's ShardingCatalogManager): each reads the
// config.* documents it needs, asks a pure decision function in src/config what to change, writes
// the changes in one local write unit, and only then tells the shards to refresh. createDatabase
// asks the shards between its read and its write, so it and the commits of the primary shards' DDL
// coordinators hold the DDL locks of their database and collection throughout: a second operation
// on the same namespace reads what the first wrote.
export class ShardingCatalogManager {
  readonly migrations: MoveRangeCatalog;

  constructor(
    private readonly local: LocalCollections,
    readonly client: Network,
    // Known once the port is bound: a process given port 0 learns it then.
    private readonly selfHost: () => string,
    private readonly cluster: ConfigServerIdentity,
    private readonly logger: Logger,
    private readonly ddlLocks: DDLLockManager,
    // The config server's cluster time (sessions/logical_clock.ts): catalog times (chunk history's
    // validAfter, onCurrentShardSince, topologyTime, collection and database timestamps) are
    // cluster times, comparable with the times snapshots and transactions read at.
    private readonly clock: { tick(): Timestamp },
    // The wall clock: collections' lastmod and changelog entries' times.
    private readonly wallClock: Clock,
    // How far back a migration's commit keeps chunk history (chunkHistoryWindowSecs).
    historyWindowSecs = DEFAULT_CHUNK_HISTORY_WINDOW_SECS,
  ) {
    this.migrations = new MoveRangeCatalog(this, local, client, () => this.log(), () => this.now(), logger, historyWindowSecs);
  }

  now(): Timestamp {
    return this.clock.tick();
  }

  shards(): ShardType[] {
    return this.local.find('config.shards', {}, { sort: { _id: 1 } }) as unknown as ShardType[];
  }

  shard(id: string): ShardType {
    const found = this.local.findOne('config.shards', { _id: id }) as unknown as ShardType | undefined;
    if (!found) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${id} not found`);
    return found;
  }

  // maxSize (MB) is seed 002's cap: the balancer moves nothing onto a shard holding more.
  // `host` is MongoDB's connection string: `host:port`, or `setName/host:port,...` for a set,
  // whose members are asked who they are and which is primary before anything is written.
  async addShard(host: string, name: string | undefined, maxSizeMB?: number): Promise<string> {
    const connectionString = parseConnectionString(host);
    const existing = existingShardFor({ connectionString, name, maxSizeMB }, this.shards());
    if (existing) return existing._id;
    const { target, hello } = await this.helloShard(connectionString);
    const validated = validateHostAsShard(connectionString, hello);
    const [identity] = await fetchAll(this.client, target, 'admin', { find: 'system.version', filter: { _id: 'shardIdentity' } }).catch(() => []);
    checkShardIdentity(identity, this.cluster.clusterId());
    const shardName = name ?? this.previousShardName(identity) ?? validated.defaultName ?? this.nextShardName();
    checkShardName(shardName);
    if (this.local.findOne('config.shards', { _id: shardName })) {
      throw new MongoError(ErrorCodes.IllegalOperation, `A shard named ${shardName} already exists`);
    }
    checkOk(await this.client.command(target, 'admin', {
      _addShard: 1,
      shardIdentity: { shardName, clusterId: this.cluster.clusterId(), configsvrConnectionString: this.cluster.connectionString() },
    }));
    const now = this.now();
    const stored = validated.host;
    this.local.write((w) => {
      w.insert('config.shards', { _id: shardName, host: stored, state: 1, topologyTime: now, ...(maxSizeMB !== undefined && maxSizeMB > 0 ? { maxSize: maxSizeMB } : {}) });
      w.insert('config.changelog', this.entry('addShard', '', { name: shardName, host: stored }));
    });
    this.logger.info({ c: 'SHARDING', shardName, host: stored }, 'Added shard');
    return shardName;
  }

  // The node addShard talks to and its hello: a standalone's own; for a set, its primary, found
  // among the seeds that say they are of the named set or where they say it is. A seed of another
  // set is left out, as a replica set monitor leaves it (the primary's member list then refuses
  // it); when no seed is of the named set, the first that answered says what it is.
  // A set whose members do not know their primary yet (an election under way, or a secondary
  // that has not heard the primary's heartbeat) is asked again for a while, as MongoDB's replica
  // set monitor waits for a primary, before addShard says it has none.
  private async helloShard(cs: ConnectionString): Promise<{ target: string; hello: Doc }> {
    for (let waitedMs = 0; ; waitedMs += PRIMARY_POLL_MS) {
      const found = await this.helloShardOnce(cs);
      if (cs.setName === undefined || found.hello.isWritablePrimary === true || found.hello.setName !== cs.setName || waitedMs >= PRIMARY_WAIT_MS) return found;
      await this.wallClock.sleep(PRIMARY_POLL_MS);
    }
  }

  private async helloShardOnce(cs: ConnectionString): Promise<{ target: string; hello: Doc }> {
    const text = formatConnectionString(cs);
    const ask = (h: string): Promise<Doc> => this.client.command(h, 'admin', { hello: 1 });
    const failures: string[] = [];
    const answers = await Promise.all(cs.hosts.map((h) => ask(h).then((hello) => ({ target: h, hello }), (err: unknown) => { failures.push((err as Error).message); })));
    const answered = answers.filter((a): a is { target: string; hello: Doc } => a !== undefined && a.hello.ok === 1);
    // Why no host answered (it refused internal authentication, it is down) is what the client is told.
    if (answered.length === 0) throw new MongoError(ErrorCodes.OperationFailed, `failed to reach ${text}: ${failures.join('; ') || 'no host answered hello'}`);
    if (cs.setName === undefined) return answered[0]!;
    const ofSet = answered.filter((a) => a.hello.setName === cs.setName);
    if (ofSet.length === 0) return answered[0]!;
    const primary = ofSet.find((a) => a.hello.isWritablePrimary === true);
    if (primary) return primary;
    const named = ofSet.map((a) => a.hello.primary).find((p): p is string => typeof p === 'string');
    if (named === undefined) return ofSet[0]!;
    return { target: named, hello: await ask(named).catch(() => ofSet[0]!.hello) };
  }

  // A node removed from this cluster keeps its shard identity (removeShard leaves it alone), and
  // _addShard refuses another name: added again without a name, it gets its old one back.
  private previousShardName(identity: Doc | undefined): string | undefined {
    const previous = identity?.shardName;
    const sameCluster = identity?.clusterId instanceof ObjectId && identity.clusterId.equals(this.cluster.clusterId());
    return sameCluster && typeof previous === 'string' && !this.local.findOne('config.shards', { _id: previous }) ? previous : undefined;
  }

  private nextShardName(): string {
    const taken = new Set(this.shards().map((s) => s._id));
    for (let i = 0; ; i++) {
      const candidate = `shard${String(i).padStart(4, '0')}`;
      if (!taken.has(candidate)) return candidate;
    }
  }

  createDatabase(name: string, primaryShard?: string): Promise<DatabaseType> {
    return this.ddlLocks.withLocks({ db: databaseLockName(name) }, 'createDatabase', () => this.createDatabaseLocked(name, primaryShard));
  }

  private async createDatabaseLocked(name: string, primaryShard?: string): Promise<DatabaseType> {
    const existing = this.local.findOne('config.databases', { _id: name }) as unknown as DatabaseType | undefined;
    if (existing && primaryShard === undefined) return existing;
    const shards = await Promise.all(this.shards().map(async (s) => ({ id: s._id, dataSizeBytes: await this.dataSize(s), draining: s.draining === true })));
    const allDatabases = this.local.find('config.databases') as unknown as DatabaseType[];
    const { database, created } = decideCreateDatabase({ name, existing, shards, primaryShard, now: this.now(), allDatabases, newUuid: new UUID() });
    if (created) {
      this.local.write((w) => {
        w.insert('config.databases', database as unknown as Doc);
        w.insert('config.changelog', this.entry('createDatabase', name, { primary: database.primary }));
      });
    }
    return database;
  }

  shardDataSizes(): Promise<{ id: string; dataSizeBytes: number }[]> {
    return Promise.all(this.shards().map(async (s) => ({ id: s._id, dataSizeBytes: await this.dataSize(s) })));
  }

  private async dataSize(shard: ShardType): Promise<number> {
    const reply = await this.client.command(shard.host, 'admin', { listDatabases: 1 });
    return typeof reply.totalSize === 'number' ? reply.totalSize : 0;
  }

  collection(ns: string): CollectionType | undefined {
    return this.local.findOne('config.collections', { _id: ns }) as unknown as CollectionType | undefined;
  }

  chunks(uuid: unknown): ChunkType[] {
    return this.local.find('config.chunks', { uuid }, { sort: { min: 1 } }) as unknown as ChunkType[];
  }

  // The commit of a CreateCollectionCoordinator (src/ddl), which has created the collection on the
  // primary and on the shards its layout gives chunks, their writes blocked: config.collections and
  // config.chunks in one write unit. Run again after a crash it finds the collection sharded with the
  // same UUID and key and changes nothing. The coordinator's release of its critical sections makes
  // those shards refresh.
  commitShardCollection(req: ShardCollectionCommit): Promise<CollectionType> {
    const db = req.ns.slice(0, req.ns.indexOf('.'));
    return this.ddlLocks.withLocks({ db: databaseLockName(db), collections: [req.ns] }, 'shardCollection', async () => {
      const decision = decideShardCollection({
        ...req, existing: this.collection(req.ns), knownShards: this.shards().map((s) => s._id),
        newEpoch: new ObjectId(), now: this.now(), chunkIdFactory: () => new ObjectId(), log: this.log(),
      });
      if (decision.alreadySharded) return decision.collection;
      const replaced = this.collection(req.ns);
      this.local.write((w) => {
        if (replaced !== undefined) {
          w.delete('config.chunks', { uuid: replaced.uuid });
          w.delete('config.collections', { _id: req.ns });
        }
        w.insert('config.collections', decision.collection as unknown as Doc);
        for (const chunk of decision.chunks) w.insert('config.chunks', chunk as unknown as Doc);
        for (const entry of decision.changelog) w.insert('config.changelog', entry);
      });
      this.logger.info({ c: 'SHARDING', ns: req.ns, key: req.key, chunks: decision.chunks.length }, 'Sharded collection');
      return decision.collection;
    });
  }

  async splitChunk(ns: string, chunkRange: { min: Doc; max: Doc }, splitPoints: Doc[]): Promise<void> {
    const collection = this.requireSharded(ns);
    const chunks = this.chunks(collection.uuid);
    const owner = chunks.find((c) => sameKey(c.min, chunkRange.min));
    if (!owner) throw new MongoError(ErrorCodes.BadValue, `no chunk starts at ${JSON.stringify(chunkRange.min)} in ${ns}`);
    const decision = decideSplit({ collection, chunks, chunkRange, splitPoints, shard: owner.shard, chunkIdFactory: () => new ObjectId(), log: this.log() });
    this.local.write((w) => {
      for (const c of decision.updated) w.update('config.chunks', { _id: c._id }, c as unknown as Doc);
      for (const c of decision.inserted) w.insert('config.chunks', c as unknown as Doc);
      for (const entry of decision.changelog) w.insert('config.changelog', entry);
    });
    await this.notifyShards(ns, new Set([owner.shard]));
  }

  async mergeChunks(ns: string, range: { min: Doc; max: Doc }): Promise<void> {
    const collection = this.requireSharded(ns);
    const chunks = this.chunks(collection.uuid);
    const first = chunks.find((c) => sameKey(c.min, range.min));
    if (!first) throw new MongoError(ErrorCodes.IllegalOperation, `could not merge chunks: no chunk starts at ${JSON.stringify(range.min)}`);
    const decision = decideMerge({ collection, chunks, range, shard: first.shard, now: this.now(), log: this.log() });
    if (decision.alreadyMerged || !decision.merged) return;
    const merged = decision.merged;
    this.local.write((w) => {
      for (const c of decision.removed) w.delete('config.chunks', { _id: c._id });
      w.insert('config.chunks', merged as unknown as Doc);
      for (const entry of decision.changelog) w.insert('config.changelog', entry);
    });
    await this.notifyShards(ns, new Set([first.shard]));
  }

  // The commit of a drop coordinator (src/ddl, on the primary shard, which has blocked the
  // collection on every shard): the collection's entry, its chunks and its zones in one write unit.
  // With a UUID only that collection goes, so that a coordinator running its phase again after a
  // crash never removes one sharded since under the same name; without one (the collection was not
  // sharded) only zones, which MongoDB 7.0 removes for a dropped namespace even then.
  commitDropCollection(ns: string, uuid: unknown): Promise<void> {
    const db = ns.slice(0, ns.indexOf('.'));
    return this.ddlLocks.withLocks({ db: databaseLockName(db), collections: [ns] }, 'dropCollection', async () => {
      const collection = this.collection(ns);
      const dropped = collection !== undefined && uuid !== undefined && compareValues(collection.uuid, uuid) === 0;
      this.local.write((w) => {
        if (dropped) {
          w.delete('config.chunks', { uuid: collection.uuid });
          w.delete('config.collections', { _id: ns });
          w.insert('config.changelog', this.entry('dropCollection', ns, {}));
        }
        w.delete('config.tags', { ns });
        // Query sampling stops with the collection, as MongoDB's drop turns its analyzer off.
        w.delete('config.queryAnalyzers', { _id: ns });
      });
    });
  }

  // The metadata step of a rename coordinator (src/ddl), while every shard blocks both namespaces:
  // in one write unit a sharded target of `targetUUID` goes (entry, chunks, zones) and a sharded
  // source of `sourceUUID` takes the target's name with a new epoch and timestamp, so that routers
  // and shards that cached either name refresh, and migrations again; its chunks, keyed by UUID,
  // stay as they are, and its zones follow it. Run again after a crash it finds the source gone and
  // changes nothing.
  renameCollectionMetadata(from: string, to: string, sourceUUID: unknown, targetUUID: unknown): Promise<void> {
    const db = from.slice(0, from.indexOf('.'));
    return this.ddlLocks.withLocks({ db: databaseLockName(db), collections: [from, to].sort() }, 'renameCollection', async () => {
      const source = this.collection(from);
      const target = this.collection(to);
      const now = this.now();
      this.local.write((w) => {
        // Query sampling stops for both names, as MongoDB's rename turns their analyzers off.
        w.delete('config.queryAnalyzers', { _id: from });
        w.delete('config.queryAnalyzers', { _id: to });
        if (target !== undefined && targetUUID !== undefined && compareValues(target.uuid, targetUUID) === 0) {
          w.delete('config.chunks', { uuid: target.uuid });
          w.delete('config.collections', { _id: to });
          w.delete('config.tags', { ns: to });
        }
        if (source !== undefined && sourceUUID !== undefined && compareValues(source.uuid, sourceUUID) === 0) {
          w.delete('config.collections', { _id: from });
          // Migrations resume under the new name (the coordinator stopped them on the source).
          const { permitMigrations: _stopped, ...entry } = source as CollectionType & { permitMigrations?: boolean };
          w.insert('config.collections', { ...entry, _id: to, lastmodEpoch: new ObjectId(), lastmod: new Date(this.wallClock.now()), timestamp: now } as unknown as Doc);
          w.update('config.tags', { ns: from }, { $set: { ns: to } }, { multi: true });
          w.insert('config.changelog', this.entry('renameCollection.metadata', from, { to }));
        }
      });
    });
  }

  // The commit of a refineCollectionShardKey coordinator (src/ddl): in one write unit the
  // collection takes the new key with a new epoch and timestamp (same UUID) and its migrations back,
  // and each chunk and zone bound gains the new fields (extendBound). Run again after a crash it
  // finds the key refined and changes nothing.
  commitRefineCollectionShardKey(ns: string, key: Doc, uuid: unknown): Promise<void> {
    const db = ns.slice(0, ns.indexOf('.'));
    return this.ddlLocks.withLocks({ db: databaseLockName(db), collections: [ns] }, 'refineCollectionShardKey', async () => {
      const collection = this.collection(ns);
      if (collection === undefined || compareValues(collection.uuid, uuid) !== 0 || compareValues(collection.key, key) === 0) return;
      const tags = this.local.find('config.tags', { ns });
      const now = this.now();
      this.local.write((w) => {
        w.update('config.collections', { _id: ns }, { $set: { key, lastmodEpoch: new ObjectId(), lastmod: new Date(this.wallClock.now()), timestamp: now }, $unset: { permitMigrations: '' } });
        for (const c of this.chunks(collection.uuid)) w.update('config.chunks', { _id: c._id }, { $set: { min: extendBound(c.min, key), max: extendBound(c.max, key) } });
        for (const t of tags) w.update('config.tags', { ns, min: t.min }, { $set: { min: extendBound(t.min as Doc, key), max: extendBound(t.max as Doc, key) } });
        w.insert('config.changelog', this.entry('refineCollectionShardKey.end', ns, { oldKey: collection.key, newKey: key }));
      });
    });
  }

  // The commit of a resharding (src/resharding), while every donor and recipient blocks writes to
  // the collection: in one write unit the entry takes the resharding's UUID (the recipients'
  // temporary collections') and the new key with a new epoch and timestamp, migrations back, and
  // the old chunks give way to the new key's, its zones to those of the new key. Asked again after it ran, it finds the new UUID and
  // changes nothing.
  commitReshardCollection(commit: {
    ns: string; sourceUUID: Binary; reshardingUUID: Binary; key: Doc; chunks: readonly { min: Doc; max: Doc; shard: string }[];
    zones: readonly { tag: string; min: Doc; max: Doc }[]; unsplittable: boolean;
  }): Promise<void> {
    const { ns } = commit;
    const db = ns.slice(0, ns.indexOf('.'));
    return this.ddlLocks.withLocks({ db: databaseLockName(db), collections: [ns] }, 'reshardCollection', async () => {
      const collection = this.collection(ns);
      if (collection === undefined || compareValues(collection.uuid, commit.sourceUUID) !== 0) return;
      const now = this.now();
      const epoch = new ObjectId();
      const { permitMigrations: _stopped, unsplittable: _was, ...entry } = collection as CollectionType & { permitMigrations?: boolean };
      this.local.write((w) => {
        w.delete('config.chunks', { uuid: collection.uuid });
        commit.chunks.forEach((c, minor) => w.insert('config.chunks', {
          _id: new ObjectId(), uuid: commit.reshardingUUID, min: c.min, max: c.max, shard: c.shard, lastmod: new Timestamp({ t: 1, i: minor }),
          onCurrentShardSince: now, history: [{ validAfter: now, shard: c.shard }],
        }));
        w.delete('config.tags', { ns });
        for (const z of commit.zones) w.insert('config.tags', { ns, tag: z.tag, min: z.min, max: z.max });
        w.delete('config.collections', { _id: ns });
        w.insert('config.collections', {
          ...entry, uuid: commit.reshardingUUID, key: commit.key, unique: false, lastmodEpoch: epoch, lastmod: new Date(this.wallClock.now()), timestamp: now,
          ...(commit.unsplittable ? { unsplittable: true } : {}),
        } as unknown as Doc);
        w.insert('config.changelog', this.entry('resharding.commit', ns, { oldKey: collection.key, newKey: commit.key, reshardingUUID: commit.reshardingUUID }));
      });
      this.logger.info({ c: 'SHARDING', ns, key: commit.key, chunks: commit.chunks.length }, 'Resharding committed');
    });
  }

  // The last step of a dropDatabase coordinator, once every shard has dropped the database: its
  // entry, and anything of it still in the catalog, in one write unit.
  commitDropDatabase(db: string): Promise<void> {
    return this.ddlLocks.withLocks({ db: databaseLockName(db) }, 'dropDatabase', async () => {
      const inDatabase = { $regex: `^${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.` };
      const collections = this.local.find('config.collections', { _id: inDatabase }) as unknown as CollectionType[];
      this.local.write((w) => {
        w.delete('config.queryAnalyzers', { _id: inDatabase });
        for (const c of collections) {
          w.delete('config.chunks', { uuid: c.uuid });
          w.delete('config.collections', { _id: c._id });
          w.delete('config.tags', { ns: c._id });
        }
        w.delete('config.databases', { _id: db });
        w.insert('config.changelog', this.entry('dropDatabase', db, {}));
      });
    });
  }

  // The catalog's sharded collections: an unsplittable entry (moveCollection, unshardCollection)
  // is tracked but not sharded, so no split, merge, chunk migration or balancing takes it.
  requireSharded(ns: string): CollectionType {
    const collection = this.collection(ns);
    if (!collection || collection.unsplittable === true) throw new MongoError(ErrorCodes.NamespaceNotSharded, `${ns} is not sharded`);
    return collection;
  }

  private async notifyShards(ns: string, shardIds: Set<string>): Promise<void> {
    await Promise.all([...shardIds].map(async (id) => {
      await this.client.command(this.shard(id).host, 'admin', { _flushRoutingTableCacheUpdates: ns }).catch((err: unknown) => {
        this.logger.warn({ c: 'SHARDING', ns, shard: id, err }, 'Shard did not refresh; it will on its next versioned request');
      });
    }));
  }

  private log(): ChangeLogContext {
    return { server: this.selfHost(), clientAddr: '', time: new Date(this.wallClock.now()), newId: () => new ObjectId() };
  }

  private entry(what: string, ns: string, details: Doc): Doc {
    return changeLogEntry(this.log(), CONFIG_SHARD, what, ns, details);
  }
}

// A database's lock is named in lower case, as MongoDB's createDatabase names it: two databases whose
// names differ only in case are decided one after the other, so the second answers DatabaseDifferCase.
function databaseLockName(db: string): string {
  return db.toLowerCase();
}

// What the coordinator sends: its request and what it translated it to.
type ShardCollectionCommit = Pick<ShardCollectionRequest, 'ns' | 'key' | 'unique' | 'numInitialChunks' | 'presplitHashedZones' | 'layout' | 'uuid' | 'unsplittable'>;

function sameKey(a: Doc, b: Doc): boolean {
  return compareValues(a, b) === 0;
}
