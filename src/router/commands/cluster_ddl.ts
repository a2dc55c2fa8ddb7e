import { Long } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { collectionArg, requireString } from '../../command_layer/args.js';
import { checkOk, drainCursor, fetchAll } from '../../wire/remote_cursor.js';
import { CATALOG_READ_TIMEOUT, configReadConcern } from '../../catalog/config_read_concern.js';
import { forwardable } from '../remote_cursor_stream.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { emptyWithoutDatabase, sendToShard, throwIfStale, versionFields, withStaleRetry, type Routing } from '../versioned_request.js';
import { proxyToConfig, targetShards } from './cluster_find.js';

// The shards a collection's DDL reaches (seed 000, "DDL operations"): every shard that owns
// chunks, and the primary shard, which holds the collection's catalog entry.
// The primary holds every sharded collection (shardCollection creates it there); an unsplittable
// one lies only where its chunk is, and a copy made on the primary would be a second UUID.
function ddlShards(routing: Routing): string[] {
  if (routing.cm?.collection.unsplittable === true) return [...routing.cm.getAllShardIds()].sort();
  const shards = new Set<string>([routing.db.primary]);
  if (routing.cm) for (const s of routing.cm.getAllShardIds()) shards.add(s);
  return [...shards].sort();
}

async function onShards(ctx: RouterContext, routing: Routing, shards: string[], cmd: Doc): Promise<Doc[]> {
  return Promise.all(shards.map(async (shard) => throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...forwardable(cmd), ...versionFields(routing, shard) }))));
}

function firstError(replies: Doc[]): Doc | undefined {
  return replies.find((r) => r.ok !== 1);
}

// Each shard's reply under its name, as mongos shows them in `raw`.
function byShard(shards: string[], replies: Doc[]): Doc {
  const raw: Doc = {};
  shards.forEach((s, i) => { raw[s] = replies[i]; });
  return raw;
}

export const clusterCreateIndexesCommand: RouterCommand = {
  names: ['createIndexes'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const shards = ddlShards(routing);
      const replies = await onShards(ctx, routing, shards, cmd);
      return firstError(replies) ?? { raw: byShard(shards, replies), ok: 1 };
    }, true);
  },
};

// What a collMod asks, without the arguments that only say how to run it.
const NOT_MODIFICATIONS = new Set(['collMod', 'lsid', 'txnNumber', 'writeConcern', 'readConcern', 'comment', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors']);

// collMod runs on the database's primary shard through its CollModCoordinator (src/ddl), which
// applies it there and, for a sharded collection, with migrations stopped on every shard owning
// chunks. What an index modification changed (expireAfterSeconds_old/_new, hidden_old/_new) is the
// primary's answer.
export const clusterCollModCommand: RouterCommand = {
  names: ['collMod'],
  async run(ctx, cmd) {
    const coll = collectionArg(cmd);
    const ns = `${ctx.db}.${coll}`;
    if (!await ctx.router.catalogCache.getDatabase(ctx.db, { create: false })) throw new MongoError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns}`);
    const collModRequest = Object.fromEntries(Object.entries(cmd).filter(([field]) => !NOT_MODIFICATIONS.has(field) && !field.startsWith('$')));
    const { ok: _ok, ...changed } = await onPrimaryShard(ctx, ctx.db, ns, { _shardsvrCollMod: coll, collModRequest });
    return { ...changed, ok: 1 };
  },
};

export const clusterDropIndexesCommand: RouterCommand = {
  names: ['dropIndexes', 'deleteIndexes'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const replies = await onShards(ctx, routing, ddlShards(routing), cmd);
      return firstError(replies) ?? { nIndexesWas: replies[0]!.nIndexesWas, ok: 1 };
    });
  },
};

// validate on every shard that holds the collection, each shard's answer under `raw`; valid only
// when every shard says so.
export const clusterValidateCommand: RouterCommand = {
  names: ['validate'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const shards = ddlShards(routing);
      const replies = await onShards(ctx, routing, shards, cmd);
      return firstError(replies) ?? { ns, valid: replies.every((r) => r.valid === true), raw: byShard(shards, replies), ok: 1 };
    });
  },
};

// dataSize of a whole collection (or of a key range): every shard that owns chunks of it, or the
// primary shard of an unsharded one, each versioned; sizes, counts and times summed, as mongos does.
export const clusterDataSizeCommand: RouterCommand = {
  names: ['dataSize', 'datasize'],
  async run(ctx, cmd) {
    const ns = requireString(cmd, Object.keys(cmd)[0]!);
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const replies = await onShards(ctx, routing, targetShards(routing, {}), cmd);
      const failed = firstError(replies);
      if (failed) return failed;
      const sum = (field: string): number => replies.reduce((n, r) => n + (isNumber(r[field]) ? toDouble(r[field]) : 0), 0);
      return { size: sum('size'), numObjects: sum('numObjects'), millis: sum('millis'), ok: 1 };
    });
  },
};

// Single-shard reads of catalog information go to the primary shard.
function onPrimary(names: string[]): RouterCommand {
  return {
    names,
    async run(ctx, cmd) {
      if (ctx.db === 'config' || ctx.db === 'admin') return proxyToConfig(ctx, cmd);
      const target = cmd[names[0]!];
      const ns = typeof target === 'string' ? `${ctx.db}.${target}` : `${ctx.db}.$cmd`;
      const listed = withStaleRetry(ctx.router, ns, async (routing): Promise<Doc> => {
        // An unsplittable collection's indexes are where its one chunk is (moveCollection).
        const cm = routing.cm;
        const shard = cm !== undefined && cm.collection.unsplittable === true ? [...cm.getAllShardIds()][0]! : routing.db.primary;
        const [reply] = await onShards(ctx, routing, [shard], cmd);
        if (!isPlainObject(reply!.cursor)) return reply!;
        // Catalog cursors are small: answer them in one batch.
        const host = await ctx.router.shardRegistry.host(shard);
        const docs = await drainCursor(ctx.router.client, host, ctx.db, reply!);
        if (names[0] === 'listCollections') docs.push(...await movedCollections(ctx, routing.db.primary, cmd, docs));
        return { cursor: { firstBatch: docs, id: Long.ZERO, ns: (reply!.cursor as Doc).ns }, ok: 1 };
      });
      // A database that does not exist has no collections; listIndexes answers NamespaceNotFound.
      if (names[0] !== 'listCollections') return listed;
      return emptyWithoutDatabase(listed, { cursor: { firstBatch: [], id: Long.ZERO, ns: `${ctx.db}.$cmd.listCollections` }, ok: 1 });
    },
  };
}

// The database's unsplittable collections that lie on another shard than its primary
// (moveCollection): the primary does not list them, the shard holding each does, under the same
// filter and options.
async function movedCollections(ctx: RouterContext, primary: string, cmd: Doc, listed: readonly Doc[]): Promise<Doc[]> {
  const escaped = ctx.db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const tracked = await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', {
    find: 'collections', filter: { _id: { $regex: `^${escaped}\\.` }, unsplittable: true }, projection: { _id: 1 }, ...configReadConcern(ctx.router.options.configHost),
  }, CATALOG_READ_TIMEOUT);
  const byShard = new Map<string, Set<string>>();
  for (const entry of tracked) {
    const ns = String(entry._id);
    const shard = [...(await ctx.router.catalogCache.getCollection(ns))?.getAllShardIds() ?? []][0];
    const name = ns.slice(ctx.db.length + 1);
    if (shard === undefined || shard === primary || listed.some((d) => d.name === name)) continue;
    byShard.set(shard, (byShard.get(shard) ?? new Set()).add(name));
  }
  const found: Doc[] = [];
  for (const [shard, wanted] of byShard) {
    const docs = await fetchAll(ctx.router.client, await ctx.router.shardRegistry.host(shard), ctx.db, forwardable(cmd));
    found.push(...docs.filter((d) => wanted.has(String(d.name))));
  }
  return found;
}

export const clusterListIndexesCommand = onPrimary(['listIndexes']);
export const clusterListCollectionsCommand = onPrimary(['listCollections']);

export const clusterCreateCommand: RouterCommand = {
  names: ['create'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    return withStaleRetry(ctx.router, ns, async (routing) => {
      // An unsplittable collection that exists already is where its chunk is, not on the primary.
      const shard = routing.cm?.collection.unsplittable === true ? [...routing.cm.getAllShardIds()][0]! : routing.db.primary;
      const [reply] = await onShards(ctx, routing, [shard], cmd);
      return reply!;
    }, true);
  },
};

// renameCollection within a database, of a collection sharded or not, runs on the database's
// primary shard through its coordinator (src/ddl); so does, as in MongoDB 7.0, the rename of an
// unsharded collection into another database whose primary shard is the same (13137 otherwise).
export const clusterRenameCollectionCommand: RouterCommand = {
  names: ['renameCollection'],
  adminOnly: true,
  async run(ctx, cmd) {
    const from = requireString(cmd, 'renameCollection');
    const to = requireString(cmd, 'to');
    for (const ns of [from, to]) {
      if (!ns.includes('.') || ns.endsWith('.') || ns.startsWith('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
    }
    const db = from.slice(0, from.indexOf('.'));
    const toDb = to.slice(0, to.indexOf('.'));
    const source = await ctx.router.catalogCache.getDatabase(db, { create: false });
    if (!source) throw new MongoError(ErrorCodes.NamespaceNotFound, `Source collection ${from} does not exist`);
    if (toDb !== db) {
      const target = await ctx.router.catalogCache.getDatabase(toDb, { create: false });
      if (!target) throw new MongoError(ErrorCodes.NamespaceNotFound, `Database ${toDb} does not exist`);
      if (target.primary !== source.primary) throw new MongoError(13137, 'Source and destination collections must be on same shard');
    }
    try {
      await onPrimaryShard(ctx, db, from, { _shardsvrRenameCollection: from.slice(db.length + 1), to, dropTarget: cmd.dropTarget === true });
    } finally {
      ctx.router.catalogCache.invalidateCollection(from);
      ctx.router.catalogCache.invalidateCollection(to);
    }
    return { ok: 1 };
  },
};

// A DDL that the database's primary shard coordinates (src/ddl): sent there with the database's
// version, so that a router that missed a movePrimary hears StaleDbVersion and tries the new one.
export function onPrimaryShard(ctx: RouterContext, db: string, ns: string, cmd: Doc, createDatabase = false): Promise<Doc> {
  return withStaleRetry(ctx.router, ns, async (routing) => checkOk(throwIfStale(await sendToShard(ctx.router, routing.db.primary, db, { ...cmd, databaseVersion: routing.db.version }))), createDatabase);
}

export const clusterDropCommand: RouterCommand = {
  names: ['drop'],
  async run(ctx, cmd) {
    const coll = collectionArg(cmd);
    const ns = `${ctx.db}.${coll}`;
    const db = await ctx.router.catalogCache.getDatabase(ctx.db, { create: false });
    if (!db) throw new MongoError(ErrorCodes.NamespaceNotFound, 'ns not found');
    try {
      const { ok: _ok, ...result } = await onPrimaryShard(ctx, ctx.db, ns, { _shardsvrDropCollection: coll });
      return { ...result, ok: 1 };
    } finally {
      ctx.router.catalogCache.invalidateCollection(ns);
    }
  },
};

export const clusterDropDatabaseCommand: RouterCommand = {
  names: ['dropDatabase'],
  async run(ctx) {
    try {
      if (await ctx.router.catalogCache.getDatabase(ctx.db, { create: false })) await onPrimaryShard(ctx, ctx.db, `${ctx.db}.$cmd`, { _shardsvrDropDatabase: 1 });
    } finally {
      ctx.router.catalogCache.purge();
    }
    return { dropped: ctx.db, ok: 1 };
  },
};

export const clusterListDatabasesCommand: RouterCommand = {
  names: ['listDatabases'],
  adminOnly: true,
  async run(ctx, cmd) {
    const sizes = new Map<string, number>();
    for (const shard of await ctx.router.shardRegistry.all()) {
      const reply = checkOk(await ctx.router.client.command(shard.host, 'admin', { listDatabases: 1 }));
      for (const d of reply.databases as Doc[]) sizes.set(String(d.name), (sizes.get(String(d.name)) ?? 0) + (isNumber(d.sizeOnDisk) ? toDouble(d.sizeOnDisk) : 0));
    }
    const configReply = checkOk(await ctx.router.client.command(ctx.router.options.configHost, 'admin', { listDatabases: 1 }));
    for (const d of configReply.databases as Doc[]) if (d.name === 'config' || d.name === 'admin') sizes.set(String(d.name), (sizes.get(String(d.name)) ?? 0) + Number(d.sizeOnDisk ?? 0));
    const names = [...sizes.keys()].sort();
    const nameOnly = cmd.nameOnly === true;
    const databases = names.map((name) => (nameOnly ? { name } : { name, sizeOnDisk: sizes.get(name)!, empty: sizes.get(name) === 0 }));
    const totalSize = [...sizes.values()].reduce((a, b) => a + b, 0);
    return nameOnly ? { databases, ok: 1 } : { databases, totalSize, totalSizeMb: Math.floor(totalSize / 1024 / 1024), ok: 1 };
  },
};

export const clusterCollStatsCommand: RouterCommand = {
  names: ['collStats'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const shards = ddlShards(routing);
      const replies = await onShards(ctx, routing, shards, cmd);
      const ok = replies.filter((r) => r.ok === 1);
      if (ok.length === 0) return replies[0]!;
      const sum = (f: string): number => ok.reduce((n, r) => n + (isNumber(r[f]) ? toDouble(r[f]) : 0), 0);
      const perShard: Doc = {};
      shards.forEach((s, i) => { if (replies[i]!.ok === 1) perShard[s] = replies[i]; });
      // What the shards own, as count() through the router counts (cluster_coll_stats.ts).
      const stored = sum('count');
      const count = stored - sum('numOrphanDocs');
      const size = sum('size');
      return { sharded: routing.cm !== undefined && routing.cm.collection.unsplittable !== true, ns, count, size, avgObjSize: stored ? Math.floor(size / stored) : 0, storageSize: sum('storageSize'), nindexes: ok[0]!.nindexes, totalIndexSize: sum('totalIndexSize'), nchunks: routing.cm?.numChunks ?? 1, shards: perShard, ok: 1 };
    });
  },
};

export const clusterDbStatsCommand: RouterCommand = {
  names: ['dbStats', 'dbstats'],
  async run(ctx) {
    const totals: Record<string, number> = {};
    for (const shard of await ctx.router.shardRegistry.all()) {
      const reply = checkOk(await ctx.router.client.command(shard.host, ctx.db, { dbStats: 1 }));
      for (const f of ['collections', 'objects', 'dataSize', 'storageSize', 'indexes', 'indexSize', 'totalSize']) totals[f] = (totals[f] ?? 0) + Number(reply[f] ?? 0);
    }
    return { db: ctx.db, ...totals, ok: 1 };
  },
};
