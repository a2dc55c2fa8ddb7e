import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { Timestamp } from 'bson';
import { bsonTypeName, valuesEqual } from '../../bson/compare.js';
import { formatValue } from '../../bson/format.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { optionalBool, optionalNumber, optionalString, requireDoc, requireString } from '../../commands/args.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';

function toConfig(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  return ctx.router.client.command(ctx.router.options.configHost, 'admin', cmd);
}

export const addShardCommand: RouterCommand = {
  names: ['addShard', 'addshard'],
  adminOnly: true,
  async run(ctx, cmd) {
    const host = requireString(cmd, Object.keys(cmd)[0]!);
    const reply = checkOk(await toConfig(ctx, { _configsvrAddShard: host, name: optionalString(cmd, 'name'), maxSize: optionalNumber(cmd, 'maxSize') }));
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
    checkOk(await toConfig(ctx, { _configsvrCreateDatabase: db, primaryShard: optionalString(cmd, 'primaryShard') }));
    ctx.router.catalogCache.invalidateDatabase(db);
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
    const reply = checkOk(await toConfig(ctx, {
      _configsvrShardCollection: ns, key, unique: optionalBool(cmd, 'unique') ?? false,
      numInitialChunks: optionalNumber(cmd, 'numInitialChunks'), presplitHashedZones: optionalBool(cmd, 'presplitHashedZones'),
    }));
    ctx.router.catalogCache.invalidateDatabase(ns.slice(0, ns.indexOf('.')));
    ctx.router.catalogCache.invalidateCollection(ns);
    return { collectionsharded: ns, collectionUUID: reply.collectionUUID, ok: 1 };
  },
};

async function shardedRouting(ctx: RouterContext, ns: string) {
  ctx.router.catalogCache.invalidateCollection(ns);
  const cm = await ctx.router.catalogCache.getCollection(ns);
  if (!cm) throw new MongoError(ErrorCodes.NamespaceNotSharded, `${ns} is not sharded`);
  return cm;
}

// split {middle}: at that key; {find}: the chunk holding the matching key, at its median, asked
// of the owning shard; {bounds}: the chunk with those bounds, at its median.
export const splitCommand: RouterCommand = {
  names: ['split'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'split');
    const cm = await shardedRouting(ctx, ns);
    const pattern = new ShardKeyPattern(cm.keyPattern);
    let chunk;
    let splitPoint: Doc | undefined;
    if (isPlainObject(cmd.middle)) {
      splitPoint = cmd.middle;
      chunk = cm.findIntersectingChunk(cmd.middle);
    } else if (isPlainObject(cmd.find)) {
      chunk = cm.findIntersectingChunk(pattern.extractShardKeyFromDoc(cmd.find));
    } else if (cmd.bounds !== undefined) {
      const bounds = cmd.bounds;
      if (!Array.isArray(bounds) || bounds.length !== 2 || !isPlainObject(bounds[0]) || !isPlainObject(bounds[1])) {
        throw new MongoError(ErrorCodes.BadValue, 'split bounds must be an array of two shard key documents: [min, max]');
      }
      chunk = cm.findIntersectingChunk(bounds[0]);
      // As mongos: bounds name one chunk exactly, never a range to be cut out of one.
      if (!valuesEqual(chunk.min, bounds[0]) || !valuesEqual(chunk.max, bounds[1])) {
        throw new MongoError(ErrorCodes.BadValue, `no chunk found with the shard key bounds [${formatValue(bounds[0])}, ${formatValue(bounds[1])})`);
      }
    } else {
      throw new MongoError(ErrorCodes.BadValue, 'need to specify find, bounds or middle for split');
    }
    if (!splitPoint) {
      const host = await ctx.router.shardRegistry.host(chunk.shard);
      const reply = checkOk(await ctx.router.client.command(host, 'admin', { splitVector: ns, keyPattern: cm.keyPattern, min: chunk.min, max: chunk.max, force: true }));
      const [median] = reply.splitKeys as Doc[];
      if (!median) throw new MongoError(ErrorCodes.CannotSplit, `cannot find a split point for chunk ${JSON.stringify(chunk.min)}`);
      splitPoint = median;
    }
    checkOk(await toConfig(ctx, { _configsvrCommitChunkSplit: ns, chunkRange: { min: chunk.min, max: chunk.max }, splitPoints: [splitPoint] }));
    ctx.router.catalogCache.invalidateCollection(ns);
    return { ok: 1 };
  },
};

export const mergeChunksCommand: RouterCommand = {
  names: ['mergeChunks'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'mergeChunks');
    const bounds = cmd.bounds;
    if (!Array.isArray(bounds) || bounds.length !== 2 || !bounds.every(isPlainObject)) throw new MongoError(ErrorCodes.BadValue, 'mergeChunks requires bounds: [min, max]');
    await shardedRouting(ctx, ns);
    checkOk(await toConfig(ctx, { _configsvrCommitChunksMerge: ns, chunkRange: { min: bounds[0], max: bounds[1] } }));
    ctx.router.catalogCache.invalidateCollection(ns);
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
