import type { Doc } from '../../bson/values.js';
import { optionalDoc } from '../../commands/args.js';
import type { ChunkType, CollectionType, DatabaseType, ShardType } from '../../catalog/type_chunk.js';
import {
  checkChunksInconsistencies, checkCollectionMetadataInconsistencies, checkHiddenShardedCollections,
  type LocalCollection, type MetadataInconsistency,
} from '../../configsvr_decisions/metadata_consistency.js';
import { fetchAll } from '../../wire/remote_cursor.js';
import type { Binary } from 'bson';
import type { RouterCommand, RouterContext } from '../router_services.js';

// checkMetadataConsistency (7.0): on admin with 1 every database, on another database with 1
// that database, with a collection name that collection. The catalog is read from the config
// server and each shard's local catalog from the shard, unversioned, as they are now; the pure
// checks (configsvr_decisions/metadata_consistency.ts) compare them, and the inconsistencies are
// a cluster cursor like any other.
export const checkMetadataConsistencyCommand: RouterCommand = {
  names: ['checkMetadataConsistency'],
  async run(ctx, cmd) {
    const target = cmd.checkMetadataConsistency;
    const collection = typeof target === 'string' ? target : undefined;
    const config = (coll: string, filter: Doc, sort: Doc = { _id: 1 }): Promise<Doc[]> =>
      fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', { find: coll, filter, sort });
    const clusterLevel = ctx.db === 'admin' && collection === undefined;
    const databases = (await config('databases', clusterLevel ? {} : { _id: ctx.db })) as unknown as DatabaseType[];
    const found: MetadataInconsistency[] = [];
    if (clusterLevel) {
      found.push(...checkHiddenShardedCollections(databases, (await config('collections', {})) as unknown as CollectionType[]));
    }
    const shards = await ctx.router.shardRegistry.all();
    for (const db of databases) {
      const nsFilter = collection === undefined ? { _id: { $regex: `^${escapeRegex(db._id)}\\.` } } : { _id: `${db._id}.${collection}` };
      const collections = (await config('collections', nsFilter)) as unknown as CollectionType[];
      const owners = new Map<string, Set<string>>();
      for (const coll of collections) {
        // By min in BSON order, as MongoDB's config server reads them for the check.
        const chunks = (await config('chunks', { uuid: coll.uuid }, { min: 1 })) as unknown as ChunkType[];
        found.push(...checkChunksInconsistencies(coll, chunks));
        owners.set(coll._id, new Set(chunks.map((c) => c.shard)));
      }
      for (const shard of shards) {
        const localCollections = await localCatalog(ctx, shard, db._id, collection, new Set(collections.map((c) => c._id)));
        const ownedNamespaces = new Set(collections.filter((c) => owners.get(c._id)?.has(shard._id)).map((c) => c._id));
        found.push(...checkCollectionMetadataInconsistencies({
          shardId: shard._id, db, catalogCollections: collections, localCollections, ownedNamespaces,
        }));
      }
    }
    const docs = found.map((i): Doc => ({ type: i.type, description: i.description, details: i.details }));
    const cursorSpec = optionalDoc(cmd, 'cursor') ?? {};
    const cursor = { next: () => Promise.resolve(docs.shift()), close: () => Promise.resolve() };
    const batchSize = typeof cursorSpec.batchSize === 'number' ? cursorSpec.batchSize : undefined;
    return ctx.router.cursors.firstBatch(`${ctx.db}.$cmd.aggregate`, cursor, batchSize);
  },
};

// A shard's collections of a database (system collections and views are no part of the sharding
// catalog), with the index keys of those the config server knows.
async function localCatalog(ctx: RouterContext, shard: ShardType, db: string, collection: string | undefined, sharded: ReadonlySet<string>): Promise<LocalCollection[]> {
  const filter: Doc = collection === undefined ? { type: 'collection' } : { type: 'collection', name: collection };
  const listed = await fetchAll(ctx.router.client, shard.host, db, { listCollections: 1, filter });
  const out: LocalCollection[] = [];
  for (const entry of listed) {
    const name = String(entry.name);
    if (name.startsWith('system.')) continue;
    const indexKeys = sharded.has(`${db}.${name}`)
      ? (await fetchAll(ctx.router.client, shard.host, db, { listIndexes: name, cursor: {} })).map((idx) => idx.key as Doc)
      : [];
    out.push({ name, uuid: (entry.info as Doc).uuid as Binary, indexKeys });
  }
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
