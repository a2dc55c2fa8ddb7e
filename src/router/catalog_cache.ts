import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import { placementTimestamp } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import type { WireClient } from '../wire/client.js';
import { checkOk, fetchAll } from '../wire/remote_cursor.js';
import { ChunkManager } from './chunk_manager.js';

interface CollectionEntry {
  cm: ChunkManager | undefined;
  stale: boolean;
  // Counts invalidations, so a load can tell whether one came while it was reading.
  invalidations: number;
  loading: Promise<ChunkManager | undefined> | undefined;
  // `invalidations` when the running load began.
  loadingAt: number;
}

// The router's cache of the routing table (seed 001: CatalogCache -> DBConfig -> ChunkManager).
// Entries are refreshed only when a shard says they are stale; a refresh of a known collection
// reads just the chunks whose lastmod is at or above the cached collection version, and falls
// back to a full load when the generation (epoch/timestamp) changed. As MongoDB's read-through
// cache: callers asking for a database or collection while it loads share that load, and an
// invalidation that arrives during a load leaves the entry stale, so the next caller reads again
// instead of trusting an answer that may predate the change.
export class CatalogCache {
  private readonly databases = new Map<string, DatabaseType>();
  private readonly collections = new Map<string, CollectionEntry>();
  private readonly databaseLoads = new Map<string, { loading: Promise<DatabaseType | undefined>; at: number }>();
  // Counts database invalidations (of any database: they are rare), for lookUpDatabase.
  private databaseInvalidations = 0;

  constructor(private readonly client: WireClient, private readonly configHost: string) {}

  async getDatabase(db: string, options: { create: boolean }): Promise<DatabaseType | undefined> {
    const cached = this.databases.get(db);
    if (cached) return cached;
    let found = await this.lookUpDatabase(db, false);
    if (!found && options.create) {
      checkOk(await this.client.command(this.configHost, 'admin', { _configsvrCreateDatabase: db }));
      // A look-up already running may have read before the database existed.
      found = await this.lookUpDatabase(db, true);
    }
    return found;
  }

  // Shared by the callers that ask while it runs, unless a database was invalidated since it
  // began: what it read may then predate that change, so it is neither joined nor cached.
  private lookUpDatabase(db: string, fresh: boolean): Promise<DatabaseType | undefined> {
    const running = this.databaseLoads.get(db);
    if (!fresh && running && running.at === this.databaseInvalidations) return running.loading;
    const at = this.databaseInvalidations;
    const done = (): void => {
      if (this.databaseLoads.get(db)?.loading === loading) this.databaseLoads.delete(db);
    };
    const loading = fetchAll(this.client, this.configHost, 'config', { find: 'databases', filter: { _id: db } }).then((docs) => {
      done();
      const found = docs[0] as unknown as DatabaseType | undefined;
      if (found && at === this.databaseInvalidations) this.databases.set(db, found);
      return found;
    }, (err: unknown) => {
      done();
      throw err;
    });
    this.databaseLoads.set(db, { loading, at });
    return loading;
  }

  async requireDatabase(db: string, create: boolean): Promise<DatabaseType> {
    const found = await this.getDatabase(db, { create });
    if (!found) throw new MongoError(ErrorCodes.NamespaceNotFound, `database ${db} not found`);
    return found;
  }

  // The routing table of a sharded collection; undefined when the collection is not sharded.
  getCollection(ns: string): Promise<ChunkManager | undefined> {
    let entry = this.collections.get(ns);
    if (entry && !entry.stale) return Promise.resolve(entry.cm);
    if (entry === undefined) {
      entry = { cm: undefined, stale: true, invalidations: 0, loading: undefined, loadingAt: 0 };
      this.collections.set(ns, entry);
    }
    const running = entry.loading;
    if (running === undefined) return this.startLoad(ns, entry);
    if (entry.loadingAt === entry.invalidations) return running;
    // The running load may have read the config server before the change that invalidated the
    // entry: wait for it, then load again (or join the load another such caller started).
    const again = (): Promise<ChunkManager | undefined> => this.getCollection(ns);
    return running.then(again, again);
  }

  private startLoad(ns: string, entry: CollectionEntry): Promise<ChunkManager | undefined> {
    const at = entry.invalidations;
    const loading = this.load(ns, entry.cm).then((cm) => {
      entry.loading = undefined;
      entry.cm = cm;
      entry.stale = entry.invalidations !== at;
      return cm;
    }, (err: unknown) => {
      entry.loading = undefined;
      throw err;
    });
    entry.loading = loading;
    entry.loadingAt = at;
    return loading;
  }

  // The routing of `ns` when both its database and a fresh routing table are cached (what
  // requireDatabase + getCollection would answer without a round trip); undefined otherwise.
  peekRouting(ns: string): { ns: string; db: DatabaseType; cm: ChunkManager | undefined } | undefined {
    const db = this.databases.get(ns.slice(0, ns.indexOf('.')));
    if (db === undefined) return undefined;
    const entry = this.collections.get(ns);
    if (entry === undefined || entry.stale) return undefined;
    return { ns, db, cm: entry.cm };
  }

  private async load(ns: string, previous: ChunkManager | undefined): Promise<ChunkManager | undefined> {
    const [collection] = await fetchAll(this.client, this.configHost, 'config', { find: 'collections', filter: { _id: ns } }) as unknown as CollectionType[];
    if (!collection) return undefined;
    const sameGeneration = previous && previous.epoch.equals(collection.lastmodEpoch) && previous.timestamp.equals(collection.timestamp);
    if (sameGeneration) {
      const since = placementTimestamp(previous.collectionVersion());
      const changed = await this.readChunks({ uuid: collection.uuid, lastmod: { $gte: since } });
      try {
        return previous.applyChunkChanges(changed, collection);
      } catch (err) {
        // The changes did not fit the cached table (e.g. read in the middle of a commit): a full
        // load is always correct.
        if (!(err instanceof MongoError)) throw err;
      }
    }
    return ChunkManager.create(collection, await this.readChunks({ uuid: collection.uuid }));
  }

  private async readChunks(filter: Doc): Promise<ChunkType[]> {
    return await fetchAll(this.client, this.configHost, 'config', { find: 'chunks', filter, sort: { min: 1 } }) as unknown as ChunkType[];
  }

  invalidateCollection(ns: string): void {
    const entry = this.collections.get(ns);
    if (entry === undefined) return;
    entry.stale = true;
    entry.invalidations += 1;
  }

  invalidateDatabase(db: string): void {
    this.databases.delete(db);
    this.databaseInvalidations += 1;
  }

  purge(): void {
    this.databaseInvalidations += 1;
    this.databases.clear();
    this.collections.clear();
  }
}
