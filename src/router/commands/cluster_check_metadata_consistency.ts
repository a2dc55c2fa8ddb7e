import type { Doc } from '../../bson/values.js';
import { optionalBool, optionalDoc } from '../../command_layer/args.js';
import type { DatabaseType } from '../../catalog/type_chunk.js';
import { fetchAll } from '../../wire/remote_cursor.js';
import type { RouterCommand } from '../router_services.js';

// checkMetadataConsistency (7.0): on admin with 1 the whole cluster, on another database with 1
// that database, with a collection name that collection. As mongos does, the router asks the
// config server for the cluster-level checks and each database's primary shard for the database
// (src/mongod_commands/sharding/check_metadata_consistency.ts), and serves what they found as a cluster
// cursor. checkIndexes goes to each primary shard, which compares the indexes of each sharded
// collection across the shards owning its chunks.
export const checkMetadataConsistencyCommand: RouterCommand = {
  names: ['checkMetadataConsistency'],
  async run(ctx, cmd) {
    const { client, options, shardRegistry } = ctx.router;
    const target = typeof cmd.checkMetadataConsistency === 'string' ? cmd.checkMetadataConsistency : 1;
    const clusterLevel = ctx.db === 'admin' && target === 1;
    const checkIndexes = optionalBool(cmd, 'checkIndexes') ?? false;
    const databases = (await fetchAll(client, options.configHost, 'config', {
      find: 'databases', filter: clusterLevel ? {} : { _id: ctx.db }, sort: { _id: 1 },
    })) as unknown as DatabaseType[];
    const docs: Doc[] = clusterLevel ? await fetchAll(client, options.configHost, 'admin', { _configsvrCheckMetadataConsistency: 1 }) : [];
    for (const db of databases) {
      const primary = await shardRegistry.host(db.primary);
      docs.push(...await fetchAll(client, primary, db._id, { _shardsvrCheckMetadataConsistency: target, checkIndexes }));
    }
    const cursorSpec = optionalDoc(cmd, 'cursor') ?? {};
    const cursor = { next: () => Promise.resolve(docs.shift()), close: () => Promise.resolve() };
    const batchSize = typeof cursorSpec.batchSize === 'number' ? cursorSpec.batchSize : undefined;
    return ctx.router.cursors.firstBatch(`${ctx.db}.$cmd.aggregate`, cursor, batchSize);
  },
};
