import type { Doc } from '../bson/values.js';

// MongoDB's Shard::kDefaultConfigCommandTimeout: a catalog read gives up after 30 s, so a refresh
// that cannot be answered (a new config primary that cannot commit yet, a member cut off in the
// middle of a request) fails and is retried by its caller instead of holding its requests.
const CONFIG_COMMAND_TIMEOUT_MS = 30_000;

// What a router's or a shard's read of the config server's catalog asks for: from a config server
// that is a replica set (its host string `setName/h1,h2,...`), the majority-committed catalog, as
// MongoDB's ShardRegistry and CatalogCache read it, so that nothing a failover could roll back is
// routed by; a single config server's catalog is read as it is. Either within the timeout.
export function configReadConcern(configHost: string): Doc {
  return { ...(configHost.includes('/') ? { readConcern: { level: 'majority' } } : {}), maxTimeMS: CONFIG_COMMAND_TIMEOUT_MS };
}

// The network's own limit on a catalog read, a little past the config server's maxTimeMS: a
// member cut off from the caller in the middle of a request sends no answer at all.
export const CATALOG_READ_TIMEOUT = { timeoutMs: CONFIG_COMMAND_TIMEOUT_MS + 5_000 };
