import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ShardType } from '../catalog/type_chunk.js';
import type { Network } from '../wire/network.js';
import { fetchAll } from '../wire/remote_cursor.js';
import { CATALOG_READ_TIMEOUT, configReadConcern } from '../catalog/config_read_concern.js';

// The router's cache of config.shards (MongoDB's ShardRegistry): reloaded when a shard id is not
// known, or when told to.
export class ShardRegistry {
  private shards = new Map<string, ShardType>();
  private loaded = false;
  private allSets = false;

  constructor(private readonly client: Network, private readonly configHost: string) {}

  async reload(): Promise<void> {
    const docs = await fetchAll(this.client, this.configHost, 'config', { find: 'shards', sort: { _id: 1 }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT);
    this.shards = new Map(docs.map((d) => [String(d._id), d as unknown as ShardType]));
    this.loaded = true;
    // Asked by every command the router dispatches: worked out once per load.
    this.allSets = this.shards.size > 0 && [...this.shards.values()].every((s) => s.host.includes('/'));
  }

  async all(): Promise<ShardType[]> {
    if (!this.loaded) await this.reload();
    return [...this.shards.values()];
  }

  // Whether every shard known is a replica set (its host in `setName/...` form), as MongoDB's shards
  // are; false before config.shards is loaded.
  allReplicaSets(): boolean {
    return this.allSets;
  }

  // host() of a shard already known, without waiting; undefined when host() would reload.
  cachedHost(shardId: string): string | undefined {
    return this.shards.get(shardId)?.host;
  }

  async host(shardId: string): Promise<string> {
    if (!this.shards.has(shardId)) await this.reload();
    const shard = this.shards.get(shardId);
    if (!shard) throw new MongoError(ErrorCodes.ShardNotFound, `Shard ${shardId} not found`);
    return shard.host;
  }
}
