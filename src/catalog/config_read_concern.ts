import type { Doc } from '../bson/values.js';

// What a router's or a shard's read of the config server's catalog asks for: from a config server
// that is a replica set (its host string `setName/h1,h2,...`), the majority-committed catalog, as
// MongoDB's ShardRegistry and CatalogCache read it, so that nothing a failover could roll back is
// routed by; a single config server's catalog is read as it is.
export function configReadConcern(configHost: string): Doc {
  return configHost.includes('/') ? { readConcern: { level: 'majority' } } : {};
}
