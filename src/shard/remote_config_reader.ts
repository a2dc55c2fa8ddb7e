import type { Doc } from '../bson/values.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
import type { Network } from '../wire/network.js';
import { fetchAll } from '../wire/remote_cursor.js';
import type { ConfigReader } from './shard_metadata.js';
import { CATALOG_READ_TIMEOUT, configReadConcern } from '../catalog/config_read_concern.js';

// Reads routing metadata from the config server's config.* collections. `beforeCollectionRead`
// lets a test hold a collection's refresh (the hangBeforeFilteringMetadataRefresh fail point).
export class RemoteConfigReader implements ConfigReader {
  constructor(private readonly client: Network, private readonly configHost: string, private readonly beforeCollectionRead: () => Promise<void> = async () => undefined) {}

  async readCollection(ns: string): Promise<{ collection: CollectionType; chunks: ChunkType[] } | undefined> {
    await this.beforeCollectionRead();
    const [collection] = await fetchAll(this.client, this.configHost, 'config', { find: 'collections', filter: { _id: ns }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT) as unknown as CollectionType[];
    if (!collection) return undefined;
    const chunks = await fetchAll(this.client, this.configHost, 'config', { find: 'chunks', filter: { uuid: collection.uuid }, sort: { min: 1 }, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT) as unknown as ChunkType[];
    return { collection, chunks };
  }

  async readDatabase(db: string): Promise<DatabaseType | undefined> {
    const [found] = await fetchAll(this.client, this.configHost, 'config', { find: 'databases', filter: { _id: db } as Doc, ...configReadConcern(this.configHost) }, CATALOG_READ_TIMEOUT);
    return found as unknown as DatabaseType | undefined;
  }
}
