import type { Doc } from '../bson/values.js';
import { fromPlacementTimestamp, shardVersionFromBSON, type ChunkVersion } from '../catalog/chunk_version.js';
import { databaseVersionFromBSON } from '../catalog/database_version.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import { OwnershipFilter } from './ownership_filter.js';
import { checkDatabaseVersion, checkShardVersion, type KnownDatabase, type KnownVersion, type VersionDecision } from './shard_version_check.js';

// What a shard reads from the config server to refresh its filtering metadata.
export interface ConfigReader {
  readCollection(ns: string): Promise<{ collection: CollectionType; chunks: ChunkType[] } | undefined>;
  readDatabase(db: string): Promise<DatabaseType | undefined>;
}

// What a shard has loaded about where a collection's data belongs, without asking anyone.
export type Placement =
  | { readonly kind: 'unknown' }
  // A donation is being recovered after a restart: ownership stays undecided until it settles.
  | { readonly kind: 'recovering' }
  | { readonly kind: 'unsharded' }
  | { readonly kind: 'sharded'; readonly ownership: OwnershipFilter };

interface CollectionMetadata {
  known: KnownVersion;
  ownership: OwnershipFilter | undefined;
}

// The shard's cache of routing metadata for the collections and databases it serves
// (MongoDB's CollectionShardingRuntime / DatabaseShardingState, filtering part): checked on every
// versioned request, refreshed from the config server when a request carries something newer.
export class ShardMetadata {
  private readonly collections = new Map<string, CollectionMetadata>();
  private readonly databases = new Map<string, KnownDatabase>();
  // Namespaces whose migration is being recovered at startup, until that recovery settles.
  private readonly recovering = new Map<string, Promise<void>>();
  // Per database name and per namespace: bumped by every forget and every refresh applied. A
  // refresh applies what it read only if nothing was forgotten or applied since it started: one
  // that read the config server before a DDL committed and answers after the DDL made the shard
  // forget would otherwise bring the old placement back (a dropped database's old primary taking
  // writes at its old version again, and creating the collection they name there).
  private readonly generations = new Map<string, number>();

  constructor(private readonly shardName: () => string | undefined, private readonly config: () => ConfigReader | undefined) {}

  // Throws StaleConfig / StaleDbVersion when the router's versions are behind this shard's.
  async checkRequest(db: string, ns: string | undefined, cmd: Doc): Promise<void> {
    await this.admit(db, ns, cmd);
  }

  // checkRequest, decided on the spot in the common case: undefined when the versions match what
  // this shard has loaded (nothing to wait for, no refresh, no recovery), else checkRequest's
  // promise. A caller that runs the command synchronously when this is undefined keeps routed
  // requests as cheap as direct ones.
  admit(db: string, ns: string | undefined, cmd: Doc): Promise<void> | undefined {
    const shardId = this.shardName();
    if (!shardId) return undefined;
    if (cmd.databaseVersion !== undefined) {
      const known = this.databases.get(db);
      if (known === undefined || checkDatabaseVersion(db, databaseVersionFromBSON(cmd.databaseVersion), known, true).kind !== 'ok') return this.checkSlowly(db, ns, cmd, shardId);
    }
    if (cmd.shardVersion !== undefined && ns !== undefined) {
      const known = this.collections.get(ns)?.known;
      if (known === undefined || this.recovering.has(ns) || checkShardVersion(ns, shardId, shardVersionFromBSON(cmd.shardVersion), known, true).kind !== 'ok') {
        return this.checkSlowly(db, ns, cmd, shardId);
      }
    }
    return undefined;
  }

  // The full check, which may wait for a recovery and refresh from the config server.
  private async checkSlowly(db: string, ns: string | undefined, cmd: Doc, shardId: string): Promise<void> {
    if (cmd.databaseVersion !== undefined) {
      const received = databaseVersionFromBSON(cmd.databaseVersion);
      await this.decide(
        (mayRefresh) => checkDatabaseVersion(db, received, this.databases.get(db) ?? { kind: 'unknown' }, mayRefresh),
        () => this.refreshDatabase(db, shardId),
      );
    }
    if (cmd.shardVersion !== undefined && ns !== undefined) {
      await this.recovering.get(ns);
      const received = shardVersionFromBSON(cmd.shardVersion);
      await this.decide(
        (mayRefresh) => checkShardVersion(ns, shardId, received, this.collections.get(ns)?.known ?? { kind: 'unknown' }, mayRefresh),
        () => this.refreshCollection(ns, shardId),
      );
    }
  }

  private async decide(check: (mayRefresh: boolean) => VersionDecision, refresh: () => Promise<void>): Promise<void> {
    let decision = check(true);
    if (decision.kind === 'refresh') {
      await refresh();
      decision = check(false);
    }
    if (decision.kind === 'stale') throw decision.error;
  }

  async refreshCollection(ns: string, shardId = this.shardName() ?? ''): Promise<void> {
    const reader = this.config();
    if (!reader) return;
    const started = this.generationOf(ns);
    const found = await reader.readCollection(ns);
    if (this.generationOf(ns) !== started) return;
    this.bump(ns);
    if (!found) {
      this.collections.set(ns, { known: { kind: 'unsharded' }, ownership: undefined });
      return;
    }
    const { collection, chunks } = found;
    const owned = chunks.filter((c) => c.shard === shardId);
    let version: ChunkVersion = fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, owned[0]?.lastmod ?? chunks[0]!.lastmod);
    if (owned.length === 0) version = { ...version, major: 0, minor: 0 };
    for (const c of owned) {
      const v = fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, c.lastmod);
      if (v.major > version.major || (v.major === version.major && v.minor > version.minor)) version = v;
    }
    this.collections.set(ns, { known: { kind: 'sharded', version }, ownership: OwnershipFilter.forShard(collection.key, chunks, shardId) });
  }

  async refreshDatabase(db: string, shardId = this.shardName() ?? ''): Promise<void> {
    const reader = this.config();
    if (!reader) return;
    const started = this.generationOf(db);
    const found = await reader.readDatabase(db);
    if (this.generationOf(db) !== started) return;
    this.bump(db);
    if (!found || found.primary !== shardId) {
      this.databases.set(db, { kind: 'notPrimary' });
      return;
    }
    this.databases.set(db, { kind: 'primary', version: databaseVersionFromBSON(found.version) });
  }

  // A restarted donor does not know yet whether the commit it may have sent landed: until its
  // recovery fences the config server and decides, a refresh could read the range as still owned
  // and accept writes a late commit would then give away. So the metadata stays unknown and
  // versioned requests for `ns` wait (MongoDB keeps the filtering metadata unknown until the
  // recovery refreshes it).
  holdUntilRecovered(ns: string, recovery: Promise<unknown>): void {
    this.collections.delete(ns);
    this.bump(ns);
    const gate: Promise<void> = Promise.all([this.recovering.get(ns), recovery.catch(() => undefined)]).then(() => {
      if (this.recovering.get(ns) === gate) this.recovering.delete(ns);
    });
    this.recovering.set(ns, gate);
  }

  // _flushRoutingTableCacheUpdates: forget, so the next versioned request reloads.
  forget(ns: string): void {
    this.collections.delete(ns);
    this.bump(ns);
  }

  forgetDatabase(db: string): void {
    this.databases.delete(db);
    this.bump(db);
    this.bump(`${db}\u0000`);
    for (const ns of [...this.collections.keys()]) if (ns.startsWith(`${db}.`)) this.collections.delete(ns);
  }

  // A namespace's generation moves when its database is forgotten too, so that forgetting the
  // database discards the refreshes of its collections in flight.
  private generationOf(name: string): number {
    const dot = name.indexOf('.');
    const own = this.generations.get(name) ?? 0;
    return dot < 0 ? own : own + (this.generations.get(`${name.slice(0, dot)}\u0000`) ?? 0);
  }

  private bump(name: string): void {
    this.generations.set(name, (this.generations.get(name) ?? 0) + 1);
  }

  // For work the shard starts on its own (the TTL monitor), which has no router's version to be
  // checked against: what is loaded, or that nothing is (refreshCollection loads it).
  placement(ns: string): Placement {
    if (this.recovering.has(ns)) return { kind: 'recovering' };
    const loaded = this.collections.get(ns);
    if (loaded?.known.kind === 'unsharded') return { kind: 'unsharded' };
    if (loaded?.known.kind === 'sharded' && loaded.ownership !== undefined) return { kind: 'sharded', ownership: loaded.ownership };
    return { kind: 'unknown' };
  }

  // Loads what this shard owns of `ns` when nothing is loaded (after a forget, a step-up, a
  // restart); undefined when it is loaded or this node belongs to no cluster.
  whenLoaded(ns: string): Promise<void> | undefined {
    const shardId = this.shardName();
    if (!shardId || !this.config()) return undefined;
    const kind = this.placement(ns).kind;
    if (kind !== 'unknown' && kind !== 'recovering') return undefined;
    return (async () => {
      await this.recovering.get(ns);
      if (this.placement(ns).kind === 'unknown') await this.refreshCollection(ns, shardId);
    })();
  }

  // Whether a write of a document of `ns` with these bytes may land here, as far as what is loaded
  // says: 'unknown' when a cluster's shard has nothing loaded for it.
  mayWrite(ns: string, doc: () => Doc): boolean | 'unknown' {
    const placement = this.placement(ns);
    if (placement.kind === 'sharded') return placement.ownership.ownsEverything() || placement.ownership.ownsDocument(doc());
    if (placement.kind === 'unsharded' || !this.shardName() || !this.config()) return true;
    return 'unknown';
  }

  // The shard keys this shard owns for a sharded collection whose metadata is loaded.
  ownership(ns: string): OwnershipFilter | undefined {
    return this.collections.get(ns)?.ownership;
  }
}

export function isVersionedRequest(cmd: Doc): boolean {
  return cmd.shardVersion !== undefined || cmd.databaseVersion !== undefined;
}
