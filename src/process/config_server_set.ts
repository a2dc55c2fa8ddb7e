import type { ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';
import { ensureConfigCollections } from '../configsvr/config_collections.js';
import type { ConfigServerIdentity } from '../configsvr/sharding_catalog_manager.js';
import type { NodeCore } from './mongod_services.js';

// A config server that is a replica-set member (--replSet) sets up config.* (collections, indexes,
// the cluster id) each time it becomes writable primary, through its oplog, so that every member
// holds the same catalog and cluster id; a single config server does so once as it starts. Returns
// the identity its catalog manager gives shards.
export function configServerIdentity(core: NodeCore, selfHost: () => string): ConfigServerIdentity {
  const ensure = (): ObjectId => ensureConfigCollections(core.storage, core.local);
  const repl = core.replication;
  if (repl === undefined) {
    const clusterId = ensure();
    return { clusterId: () => clusterId, connectionString: selfHost };
  }
  let primary = false;
  repl.onProgress(() => {
    const now = repl.isWritablePrimary();
    // After the event that made it primary has been handled, not inside it.
    if (now && !primary) void Promise.resolve().then(() => {
      if (repl.isWritablePrimary()) ensure();
    }).catch((err: unknown) => core.logger.warn({ c: 'SHARDING', err }, 'config.* setup on step-up failed; it runs again with the next catalog operation'));
    primary = now;
  });
  return {
    clusterId: ensure,
    connectionString: () => {
      const config = repl.config();
      return config === undefined ? selfHost() : `${String(config._id)}/${(config.members as Doc[]).map((m) => String(m.host)).join(',')}`;
    },
  };
}
