import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { Timestamp } from 'bson';
import { bsonTypeName } from '../../bson/compare.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { optionalBool, optionalNumber, optionalString, requireDoc, requireString } from '../../command_layer/args.js';
import type { ChunkType } from '../../catalog/type_chunk.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { indivisibleChunk, parseSplitForm, splitTargetFor } from '../../catalog_decisions/split_point_finder.js';
import { checkOk, checkWriteConcern, fetchAll } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { onPrimaryShard } from './cluster_ddl.js';

function toConfig(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  return ctx.router.client.command(ctx.router.options.configHost, 'admin', cmd);
}

export const addShardCommand: RouterCommand = {
  names: ['addShard', 'addshard'],
  adminOnly: true,
  async run(ctx, cmd) {
    const host = requireString(cmd, Object.keys(cmd)[0]!);
    const reply = checkWriteConcern(await toConfig(ctx, { _configsvrAddShard: host, name: optionalString(cmd, 'name'), maxSize: optionalNumber(cmd, 'maxSize') }));
    await ctx.router.shardRegistry.reload();
    return { shardAdded: reply.shardAdded, ok: 1 };
  },
};

export const listShardsCommand: RouterCommand = {
  names: ['listShards', 'listshards'],
  adminOnly: true,
  async run(ctx) {
    const shards = await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', { find: 'shards', sort: { _id: 1 } });
    return { shards, ok: 1 };
  },
};

export const enableShardingCommand: RouterCommand = {
  names: ['enableSharding', 'enablesharding'],
  adminOnly: true,
  async run(ctx, cmd) {
    const db = requireString(cmd, Object.keys(cmd)[0]!);
    if (db === '' || db.includes('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `invalid db name specified: ${db}`);
    try {
      checkWriteConcern(await toConfig(ctx, { _configsvrCreateDatabase: db, primaryShard: optionalString(cmd, 'primaryShard') }));
    } finally {
      ctx.router.catalogCache.invalidateDatabase(db);
    }
    return { ok: 1 };
  },
};

export const shardCollectionCommand: RouterCommand = {
  names: ['shardCollection', 'shardcollection'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, Object.keys(cmd)[0]!);
    if (!ns.includes('.') || ns.endsWith('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
    const key = requireDoc(cmd, 'key');
    const db = ns.slice(0, ns.indexOf('.'));
    const reply = await onPrimaryShard(ctx, db, ns, {
      _shardsvrCreateCollection: ns.slice(db.length + 1), shardKey: key, unique: optionalBool(cmd, 'unique') ?? false,
      numInitialChunks: optionalNumber(cmd, 'numInitialChunks'), presplitHashedZones: optionalBool(cmd, 'presplitHashedZones'),
    }, true);
    ctx.router.catalogCache.invalidateDatabase(ns.slice(0, ns.indexOf('.')));
    ctx.router.catalogCache.invalidateCollection(ns);
    return { collectionsharded: ns, collectionUUID: reply.collectionUUID, ok: 1 };
  },
};

// refineCollectionShardKey (admin): the database's primary shard coordinates it (src/ddl).
export const refineCollectionShardKeyCommand: RouterCommand = {
  names: ['refineCollectionShardKey'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'refineCollectionShardKey');
    if (!ns.includes('.') || ns.endsWith('.') || ns.startsWith('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
    const key = requireDoc(cmd, 'key');
    void new ShardKeyPattern(key); // BadValue for a key that is no shard key
    const db = ns.slice(0, ns.indexOf('.'));
    try {
      await onPrimaryShard(ctx, db, ns, { _shardsvrRefineCollectionShardKey: ns.slice(db.length + 1), newShardKey: key });
    } finally {
      ctx.router.catalogCache.invalidateCollection(ns);
    }
    return { ok: 1 };
  },
};

async function shardedRouting(ctx: RouterContext, ns: string) {
  ctx.router.catalogCache.invalidateCollection(ns);
  const cm = await ctx.router.catalogCache.getCollection(ns);
  if (!cm) throw new MongoError(ErrorCodes.NamespaceNotSharded, `${ns} is not sharded`);
  return cm;
}

// split {middle}: at that key; {find}: the chunk holding the matching key, at its median, asked
// of the owning shard; {bounds}: the chunk with those bounds, at its median. Which chunk and where
// is config/split_point_finder.ts's decision, with mongos's refusals.
export const splitCommand: RouterCommand = {
  names: ['split'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'split');
    const form = parseSplitForm(cmd);
    const cm = await shardedRouting(ctx, ns);
    const { chunk, splitPoint } = splitTargetFor(form, cm.shardKeyPattern, (key) => cm.findIntersectingChunk(key));
    const at = splitPoint ?? await medianKey(ctx, ns, cm.keyPattern, chunk);
    // A commit answered with a writeConcernError fails the command (as mongos's getEffectiveStatus
    // makes it), and may still have happened: the routing is read again either way.
    try {
      checkWriteConcern(await toConfig(ctx, { _configsvrCommitChunkSplit: ns, chunkRange: { min: chunk.min, max: chunk.max }, splitPoints: [at] }));
    } finally {
      ctx.router.catalogCache.invalidateCollection(ns);
    }
    return { ok: 1 };
  },
};

async function medianKey(ctx: RouterContext, ns: string, keyPattern: Doc, chunk: ChunkType): Promise<Doc> {
  const host = await ctx.router.shardRegistry.host(chunk.shard);
  const reply = checkOk(await ctx.router.client.command(host, 'admin', { splitVector: ns, keyPattern, min: chunk.min, max: chunk.max, force: true }));
  const [median] = reply.splitKeys as Doc[];
  if (median === undefined) throw indivisibleChunk();
  return median;
}

export const mergeChunksCommand: RouterCommand = {
  names: ['mergeChunks'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'mergeChunks');
    const bounds = cmd.bounds;
    if (!Array.isArray(bounds) || bounds.length !== 2 || !bounds.every(isPlainObject)) throw new MongoError(ErrorCodes.BadValue, 'mergeChunks requires bounds: [min, max]');
    await shardedRouting(ctx, ns);
    try {
      checkWriteConcern(await toConfig(ctx, { _configsvrCommitChunksMerge: ns, chunkRange: { min: bounds[0], max: bounds[1] } }));
    } finally {
      ctx.router.catalogCache.invalidateCollection(ns);
    }
    return { ok: 1 };
  },
};

// What this router's cache holds for a database (its primary shard and version) or a sharded
// collection (its collection version, and with fullMetadata every chunk's bounds), as mongos
// answers it.
export const getShardVersionCommand: RouterCommand = {
  names: ['getShardVersion', 'getshardversion'],
  adminOnly: true,
  async run(ctx, cmd) {
    const target = cmd[Object.keys(cmd)[0]!];
    if (typeof target !== 'string') throw new MongoError(ErrorCodes.BadValue, `namespace has invalid type ${bsonTypeName(target)}`);
    if (!target.includes('.')) {
      const db = await ctx.router.catalogCache.requireDatabase(target, false);
      return { primaryShard: db.primary, version: db.version, ok: 1 };
    }
    const cm = await ctx.router.catalogCache.getCollection(target);
    if (!cm) throw new MongoError(ErrorCodes.NamespaceNotSharded, `Collection ${target} is not sharded.`);
    const version = cm.collectionVersion();
    const reply: Doc = { version: new Timestamp({ t: version.major, i: version.minor }), versionEpoch: version.epoch, versionTimestamp: version.timestamp };
    if (cmd.fullMetadata === true || (typeof cmd.fullMetadata === 'number' && cmd.fullMetadata !== 0)) reply.chunks = cm.allChunks().map((c) => [c.min, c.max]);
    return { ...reply, ok: 1 };
  },
};

export const flushRouterConfigCommand: RouterCommand = {
  names: ['flushRouterConfig', 'flushrouterconfig'],
  adminOnly: true,
  async run(ctx) {
    ctx.router.catalogCache.purge();
    ctx.router.chunkSplitter.invalidateSettings();
    await ctx.router.shardRegistry.reload();
    return { flushed: true, ok: 1 };
  },
};
