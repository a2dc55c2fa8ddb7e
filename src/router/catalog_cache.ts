import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { placementTimestamp } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import type { Network } from '../wire/network.js';
import { checkWriteConcern, fetchAll } from '../wire/remote_cursor.js';
import { ChunkManager } from './chunk_manager.js';
import { ReadThroughEntry } from './read_through.js';
import { inStatementAtReadTime, statementReadTime } from './transaction_router.js';
import { CATALOG_READ_TIMEOUT, configReadConcern } from '../catalog/config_read_concern.js';

// A database config.databases does not name, where a command needs its primary shard. Reads answer
// nothing for it instead (emptyWithoutDatabase).
export class DatabaseNotFound extends MongoError {
  constructor(db: string) {
    super(ErrorCodes.NamespaceNotFound, `database ${db} not found`);
  }
}

// The router's cache of the routing table (seed 001: CatalogCache -> DBConfig -> ChunkManager).
// Entries are refreshed only when a shard says they are stale; a refresh of a known collection
// reads just the chunks whose lastmod is at or above the cached collection version, and falls
// back to a full load when the generation (epoch/timestamp) changed. Each database and collection
// is a ReadThroughEntry: callers share a running load, and an invalidation during one is kept.
// A statement of a transaction or a snapshot read gets the routing table as of the time it reads
// at (MongoDB's getCollectionRoutingInfoAt): the cache keeps the current table, with every chunk's
// history, and the table at a time is made from it on the spot (ChunkManager.atClusterTime).
export class CatalogCache {
  // Routing table loads, for the router's metrics: incremental ones (the chunks changed since the
  // cached version) and full ones; and requests sent again because a shard answered them stale
  // (versioned_request.ts counts those).
  readonly statistics = { incrementalRefreshes: 0, fullRefreshes: 0, staleConfigRetries: 0 };
  private readonly databases = new Map<string, ReadThroughEntry<DatabaseType | undefined>>();
  private readonly collections = new Map<string, ReadThroughEntry<ChunkManager | undefined>>();

  constructor(private readonly client: Network, private readonly configHost: string) {}

  async getDatabase(db: string, options: { create: boolean }): Promise<DatabaseType | undefined> {
    const entry = this.databaseEntry(db);
    let found = await entry.get();
    if (!found && options.create) {
      checkWriteConcern(await this.client.command(this.configHost, 'admin', { _configsvrCreateDatabase: db }));
      // A look-up already running may have read before the database existed.
      entry.invalidate();
      found = await entry.get();
    }
    // A database that is not there is not remembered, so made-up names do not pile up.
    if (entry.idle && this.databases.get(db) === entry) this.databases.delete(db);
    return found;
  }

  private databaseEntry(db: string): ReadThroughEntry<DatabaseType | undefined> {
    let entry = this.databases.get(db);
    if (entry === undefined) {
      const lookUp = async (): Promise<DatabaseType | undefined> => {
        const [found] = await fetchAll(this.client, this.configHost, 'config', { find: 'databases', filter: { _id: db }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT) as unknown as DatabaseType[];
        return found;
      };
      entry = new ReadThroughEntry(lookUp, (found) => found !== undefined);
      this.databases.set(db, entry);
    }
    return entry;
  }

  async requireDatabase(db: string, create: boolean): Promise<DatabaseType> {
    const found = await this.getDatabase(db, { create });
    if (!found) throw new DatabaseNotFound(db);
    return found;
  }

  // The routing table of a sharded collection; undefined when the collection is not sharded.
  getCollection(ns: string): Promise<ChunkManager | undefined> {
    let entry = this.collections.get(ns);
    if (entry === undefined) {
      entry = new ReadThroughEntry((previous) => this.load(ns, previous));
      this.collections.set(ns, entry);
    }
    if (!inStatementAtReadTime()) return entry.get();
    // The read time is asked once the table is loaded: a transaction picks it then.
    return entry.get().then((cm) => {
      const at = statementReadTime();
      return at === undefined ? cm : cm?.atClusterTime(at);
    });
  }

  // The routing of `ns` when both its database and a fresh routing table are cached (what
  // requireDatabase + getCollection would answer without a round trip); undefined otherwise.
  peekRouting(ns: string): { ns: string; db: DatabaseType; cm: ChunkManager | undefined } | undefined {
    const db = this.databases.get(ns.slice(0, ns.indexOf('.')));
    if (db === undefined || !db.fresh) return undefined;
    const entry = this.collections.get(ns);
    if (entry === undefined || !entry.fresh) return undefined;
    const at = statementReadTime();
    return { ns, db: db.value!, cm: at === undefined ? entry.value : entry.value?.atClusterTime(at) };
  }

  private async load(ns: string, previous: ChunkManager | undefined): Promise<ChunkManager | undefined> {
    const [collection] = await fetchAll(this.client, this.configHost, 'config', { find: 'collections', filter: { _id: ns }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT) as unknown as CollectionType[];
    if (!collection) return undefined;
    const sameGeneration = previous && previous.epoch.equals(collection.lastmodEpoch) && previous.timestamp.equals(collection.timestamp);
    if (sameGeneration) {
      const since = placementTimestamp(previous.collectionVersion());
      const changed = await this.readChunks({ uuid: collection.uuid, lastmod: { $gte: since } });
      try {
        const refreshed = previous.applyChunkChanges(changed, collection);
        this.statistics.incrementalRefreshes += 1;
        return refreshed;
      } catch (err) {
        // The changes did not fit the cached table (e.g. read in the middle of a commit): a full
        // load is always correct.
        if (!(err instanceof MongoError)) throw err;
      }
    }
    const loaded = ChunkManager.create(collection, await this.readChunks({ uuid: collection.uuid }));
    this.statistics.fullRefreshes += 1;
    return loaded;
  }

  private async readChunks(filter: Doc): Promise<ChunkType[]> {
    return await fetchAll(this.client, this.configHost, 'config', { find: 'chunks', filter, sort: { min: 1 }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT) as unknown as ChunkType[];
  }

  invalidateCollection(ns: string): void {
    this.collections.get(ns)?.invalidate();
  }

  invalidateDatabase(db: string): void {
    this.databases.get(db)?.invalidate();
  }

  purge(): void {
    for (const entry of this.databases.values()) entry.invalidate();
    for (const entry of this.collections.values()) entry.invalidate();
    this.databases.clear();
    this.collections.clear();
  }
}
