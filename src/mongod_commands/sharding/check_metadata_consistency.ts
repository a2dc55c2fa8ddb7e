import { Long } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import type { ChunkType, CollectionType, DatabaseType, ShardType } from '../../catalog/type_chunk.js';
import {
  checkChunksInconsistencies, checkCollectionMetadataInconsistencies, checkHiddenShardedCollections, checkIndexesInconsistencies,
  checkZonesInconsistencies, type LocalCollection, type ShardIndexes,
} from '../../catalog_decisions/metadata_consistency.js';
import type { ZoneRangeType } from '../../catalog_decisions/zones.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { Network } from '../../wire/network.js';
import { fetchAll } from '../../wire/remote_cursor.js';
import type { CommandContext, CommandDefinition } from '../command.js';

// checkMetadataConsistency's parts on the nodes, as MongoDB splits it: the router asks the config
// server for what only config.* can show (_configsvrCheckMetadataConsistency) and each database's
// primary shard for the database (_shardsvrCheckMetadataConsistency), which checks the routing
// tables and asks every shard to compare its local catalog with config.collections
// (_shardsvrCheckMetadataConsistencyParticipant). The checks themselves are pure
// (catalog_decisions/metadata_consistency.ts). Each answers one batch: the router's cluster
// cursor does the batching.

// The command's value: 1 for the whole database, a collection name for one collection.
function collectionOf(cmd: Doc, name: string): string | undefined {
  const target = cmd[name];
  if (typeof target === 'string') return target;
  if (target !== 1) throw new MongoError(ErrorCodes.BadValue, `${name} takes 1 or a collection name`);
  return undefined;
}

function answer(ns: string, docs: Doc[]): Doc {
  return { cursor: { id: Long.ZERO, ns, firstBatch: docs }, ok: 1 };
}

interface ConfigAccess {
  read(coll: string, filter: Doc, sort?: Doc): Promise<Doc[]>;
}

function configOf(ctx: CommandContext): ConfigAccess {
  const configHost = ctx.node.sharding.state.configHost;
  if (configHost === undefined) throw new MongoError(ErrorCodes.IllegalOperation, 'this node is not a shard');
  return { read: (coll, filter, sort = { _id: 1 }) => fetchAll(ctx.node.client, configHost, 'config', { find: coll, filter, sort }) };
}

function catalogCollections(config: ConfigAccess, db: string, collection: string | undefined): Promise<CollectionType[]> {
  const filter = collection === undefined ? { _id: { $regex: `^${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.` } } : { _id: `${db}.${collection}` };
  return config.read('collections', filter) as unknown as Promise<CollectionType[]>;
}

const primaryCommand: CommandDefinition = {
  names: ['_shardsvrCheckMetadataConsistency'],
  async run(ctx, cmd) {
    const collection = collectionOf(cmd, '_shardsvrCheckMetadataConsistency');
    const config = configOf(ctx);
    const [db] = (await config.read('databases', { _id: ctx.db })) as unknown as DatabaseType[];
    if (db === undefined) return answer(`${ctx.db}.$cmd`, []);
    const shards = (await config.read('shards', {})) as unknown as ShardType[];
    const hosts = new Map(shards.map((s) => [s._id, s.host]));
    const found: Doc[] = [];
    const owners = new Map<CollectionType, string[]>();
    for (const coll of await catalogCollections(config, ctx.db, collection)) {
      // By min in BSON order, as MongoDB's config server reads them for the check.
      const chunks = (await config.read('chunks', { uuid: coll.uuid }, { min: 1 })) as unknown as ChunkType[];
      found.push(...checkChunksInconsistencies(coll, chunks));
      const zones = (await config.read('tags', { ns: coll._id }, { min: 1 })) as unknown as ZoneRangeType[];
      found.push(...checkZonesInconsistencies(coll, zones));
      owners.set(coll, [...new Set(chunks.map((c) => c.shard))]);
    }
    const request = { _shardsvrCheckMetadataConsistencyParticipant: cmd._shardsvrCheckMetadataConsistency, primaryShardId: db.primary };
    const perShard = await Promise.all(shards.map((shard) => fetchAll(ctx.node.client, shard.host, ctx.db, request)));
    found.push(...perShard.flat());
    if (cmd.checkIndexes === true) {
      for (const [coll, shardIds] of owners) {
        const indexes = await Promise.all(shardIds.map((shard) => shardIndexes(ctx.node.client, shard, hosts.get(shard), coll._id)));
        found.push(...checkIndexesInconsistencies(coll._id, indexes));
      }
    }
    return answer(`${ctx.db}.$cmd`, found);
  },
};

// The indexes of a collection on one shard that owns chunks of it, as MongoDB's $indexStats reaches
// exactly those shards: none where the collection is missing (another check reports that) or
// where config.shards no longer has the shard.
async function shardIndexes(client: Network, shard: string, host: string | undefined, ns: string): Promise<ShardIndexes> {
  if (host === undefined) return { shard, indexes: [] };
  const { db, coll } = splitNamespace(ns);
  try {
    return { shard, indexes: await fetchAll(client, host, db, { listIndexes: coll }) };
  } catch (e) {
    if (e instanceof MongoError && e.code === ErrorCodes.NamespaceNotFound) return { shard, indexes: [] };
    throw e;
  }
}

// A shard compares its own collections of the database with config.collections: MongoDB's
// participant reads the catalog itself rather than trusting the primary's copy.
const participantCommand: CommandDefinition = {
  names: ['_shardsvrCheckMetadataConsistencyParticipant'],
  async run(ctx, cmd) {
    const collection = collectionOf(cmd, '_shardsvrCheckMetadataConsistencyParticipant');
    const shardId = ctx.node.sharding.state.shardName;
    if (typeof cmd.primaryShardId !== 'string' || shardId === undefined) throw new MongoError(ErrorCodes.BadValue, 'primaryShardId is required');
    const config = configOf(ctx);
    const collections = await catalogCollections(config, ctx.db, collection);
    const owned = new Set<string>();
    for (const coll of collections) {
      if ((await config.read('chunks', { uuid: coll.uuid, shard: shardId })).length > 0) owned.add(coll._id);
    }
    const localCollections: LocalCollection[] = ctx.node.storage.listCollections(ctx.db)
      .map((c) => ({ name: splitNamespace(c.ns).coll, uuid: c.entry.uuid, indexKeys: c.entry.indexes.map((i) => i.spec.key as Doc) }))
      // System collections are no part of the sharding catalog.
      .filter((c) => !c.name.startsWith('system.') && (collection === undefined || c.name === collection));
    const found = checkCollectionMetadataInconsistencies({
      shardId, primaryShardId: cmd.primaryShardId, db: ctx.db, catalogCollections: collections, localCollections, ownedNamespaces: owned,
    });
    return answer(`${ctx.db}.$cmd`, found);
  },
};

// Sharded collections whose database config.databases no longer has, from the config server's own
// config.* (a cluster-level check only).
const configCommand: CommandDefinition = {
  names: ['_configsvrCheckMetadataConsistency'],
  adminOnly: true,
  run(ctx) {
    const databases = ctx.node.local.find('config.databases', {}) as unknown as DatabaseType[];
    const collections = ctx.node.local.find('config.collections', {}, { sort: { _id: 1 } }) as unknown as CollectionType[];
    return answer('admin.$cmd', checkHiddenShardedCollections(databases, collections));
  },
};

export const checkMetadataConsistencyNodeCommands: readonly CommandDefinition[] = [primaryCommand, participantCommand, configCommand];
