import type { Doc } from '../bson/values.js';
import {
  checkRemoveShardFromZone, checkShardExists, decideAssignKeyRange, decideRemoveKeyRange, sortZoneRanges, type ZoneRangeType,
} from '../catalog_decisions/zones.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { ShardingCatalogManager } from './sharding_catalog_manager.js';

// The config server's zone operations (seed 001, "zones"): zone names in config.shards' `tags`,
// zone ranges in config.tags. Each one reads, decides (src/catalog_decisions/zones.ts) and writes in the same
// synchronous step, so two zone operations never interleave (MongoDB's zone op lock). Zones do not
// change chunks or versions: nothing is refreshed; the balancer moves chunks to their zones.
export class ZonesCatalog {
  constructor(
    private readonly local: LocalCollections,
    private readonly catalog: ShardingCatalogManager,
  ) {}

  addShardToZone(shard: string, zone: string): void {
    checkShardExists(this.catalog.shards(), shard);
    this.local.write((w) => { w.update('config.shards', { _id: shard }, { $addToSet: { tags: zone } }); });
  }

  removeShardFromZone(shard: string, zone: string): void {
    const zoneHasRanges = this.local.findOne('config.tags', { tag: zone }) !== undefined;
    checkRemoveShardFromZone({ shards: this.catalog.shards(), shard, zone, zoneHasRanges });
    this.local.write((w) => { w.update('config.shards', { _id: shard }, { $pull: { tags: zone } }); });
  }

  // updateZoneKeyRange: `zone` null removes the range (as stored), a string assigns it.
  updateZoneKeyRange(ns: string, min: Doc, max: Doc, zone: string | null): void {
    const collection = this.catalog.collection(ns);
    if (zone === null) {
      const range = decideRemoveKeyRange({ ns, min, max, collection });
      this.local.write((w) => { w.delete('config.tags', range); });
      return;
    }
    const { range, alreadyAssigned } = decideAssignKeyRange({ ns, min, max, zone, shards: this.catalog.shards(), collection, existing: this.ranges(ns) });
    if (alreadyAssigned) return;
    this.local.write((w) => { w.update('config.tags', { ns, min: range.min }, range as unknown as Doc, { upsert: true }); });
  }

  // config.tags of a namespace, by min (ShardingCatalogClient::getTagsForCollection).
  ranges(ns: string): ZoneRangeType[] {
    return sortZoneRanges(this.local.find('config.tags', { ns }) as unknown as ZoneRangeType[]);
  }
}
