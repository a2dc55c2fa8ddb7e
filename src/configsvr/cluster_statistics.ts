import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Doc } from '../bson/values.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import type { BalancerSettings } from '../catalog_decisions/balancer_settings.js';
import type { CollectionSnapshot, ShardStats, ZoneRange } from '../catalog_decisions/balancer_policy.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Network } from '../wire/network.js';
import { checkOk } from '../wire/remote_cursor.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

export interface BalancedCollection extends CollectionSnapshot {
  readonly collection: CollectionType;
  readonly configChunks: readonly ChunkType[];
}

export interface ClusterSnapshot {
  readonly shards: readonly ShardStats[];
  readonly collections: readonly BalancedCollection[];
}

const MB = 1024 * 1024;

// What one balancer round decides from (MongoDB's ClusterStatisticsImpl plus the catalog reads of
// BalancerChunkSelectionPolicy): the shards with their zones, draining flags and data sizes, and
// for each balanceable collection its chunks, zone ranges and bytes per shard, as the shards
// report them (_shardsvrGetStatsForBalancing, orphans excluded).
export class ClusterStatistics {
  constructor(
    private readonly catalog: ShardingCatalogManager,
    private readonly local: LocalCollections,
    private readonly client: Network,
  ) {}

  async snapshot(settings: BalancerSettings, onlyNs?: string): Promise<ClusterSnapshot> {
    const shardDocs = this.catalog.shards();
    const collections = this.balanceableCollections(onlyNs);
    const request = collections.map((c) => ({ ns: c._id, UUID: c.uuid }));
    const sizes = new Map<string, Map<string, number>>(collections.map((c) => [c._id, new Map()]));
    const totals = new Map<string, number>();
    await Promise.all(shardDocs.map(async (shard) => {
      const reply = checkOk(await this.client.command(shard.host, 'admin', { _shardsvrGetStatsForBalancing: 1, collections: request, scaleFactor: 1 }));
      let total = 0;
      for (const s of (reply.stats as Doc[] | undefined) ?? []) {
        const bytes = Number(s.collSize ?? 0);
        sizes.get(String(s.namespace))?.set(shard._id, bytes);
        total += bytes;
      }
      totals.set(shard._id, total);
    }));
    const shards: ShardStats[] = shardDocs.map((s) => ({
      id: s._id,
      draining: s.draining === true,
      zones: s.tags ?? [],
      ...(typeof s.maxSize === 'number' && s.maxSize > 0 ? { maxSizeBytes: s.maxSize * MB } : {}),
      totalDataSizeBytes: totals.get(s._id) ?? 0,
    }));
    return {
      shards,
      collections: collections.map((collection) => {
        const configChunks = this.catalog.chunks(collection.uuid);
        return {
          ns: collection._id,
          collection,
          configChunks,
          chunks: configChunks.map((c) => ({ min: c.min, max: c.max, shard: c.shard, ...(c.jumbo ? { jumbo: true } : {}) })),
          zones: this.local.find('config.tags', { ns: collection._id }, { sort: { min: 1 } }).map((t) => ({ min: t.min as Doc, max: t.max as Doc, zone: String(t.tag) }) satisfies ZoneRange),
          dataSizeBytes: sizes.get(collection._id)!,
          maxChunkSizeBytes: typeof collection.maxChunkSizeBytes === 'number' && collection.maxChunkSizeBytes > 0 ? Number(collection.maxChunkSizeBytes) : settings.chunkSizeBytes,
        };
      }),
    };
  }

  // Collections with noBalance or permitMigrations: false, and unsplittable ones, are left alone; balancerCollectionStatus
  // asks about one collection whatever its flags.
  private balanceableCollections(onlyNs: string | undefined): CollectionType[] {
    if (onlyNs !== undefined) {
      const one = this.catalog.collection(onlyNs);
      if (!one || one.unsplittable === true) throw new MongoError(ErrorCodes.NamespaceNotSharded, `Collection ${onlyNs} is not sharded.`);
      return [one];
    }
    return (this.local.find('config.collections', {}, { sort: { _id: 1 } }) as unknown as (CollectionType & { permitMigrations?: boolean })[])
      .filter((c) => c.noBalance !== true && c.permitMigrations !== false && c.unsplittable !== true);
  }
}
