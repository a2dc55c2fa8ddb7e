import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { optionalArray, optionalBool, optionalDoc, optionalNumber, requireDoc, requireString } from '../../command_layer/args.js';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { onPrimaryShard } from './cluster_ddl.js';

// reshardCollection, abortReshardCollection and commitReshardCollection (admin; mongosh's
// sh.reshardCollection, sh.abortReshardCollection, sh.commitReshardCollection): the router checks
// the namespace and the arguments' types; reshardCollection goes to the database's primary shard,
// whose ReshardCollectionCoordinator (src/ddl) holds the collection's DDL lock while the config
// server's ReshardingCoordinator (src/resharding) runs, the other two to the config server; each
// answers once the resharding has ended. abortReshardCollection aborts a reshardCollection only
// (`provenance`), not a moveCollection nor an unshardCollection, as in MongoDB 8.0. Routers learn the new routing from
// StaleConfig, as after any DDL; this one's cache is dropped at once.
export function namespaceArg(cmd: Doc, name: string): string {
  const ns = requireString(cmd, name);
  if (!ns.includes('.') || ns.endsWith('.') || ns.startsWith('.')) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
  return ns;
}

export async function toConfig(ctx: RouterContext, ns: string, cmd: Doc): Promise<Doc> {
  try {
    checkOk(await ctx.router.client.command(ctx.router.options.configHost, 'admin', cmd));
  } finally {
    ctx.router.catalogCache.invalidateCollection(ns);
  }
  return { ok: 1 };
}

// A collection the config server does not know as sharded: NamespaceNotSharded if its database's
// primary holds it, NamespaceNotFound otherwise, as MongoDB answers.
async function requireSharded(ctx: RouterContext, ns: string): Promise<void> {
  ctx.router.catalogCache.invalidateCollection(ns);
  if (await ctx.router.catalogCache.getCollection(ns) !== undefined) return;
  const db = ns.slice(0, ns.indexOf('.'));
  const database = await ctx.router.catalogCache.getDatabase(db, { create: false });
  const name = ns.slice(db.length + 1);
  const found = database === undefined ? [] : await fetchAll(ctx.router.client, await ctx.router.shardRegistry.host(database.primary), db, { listCollections: 1, filter: { name } });
  if (found.length === 0) throw new MongoError(ErrorCodes.NamespaceNotFound, `Collection ${ns} does not exist`);
  throw new MongoError(ErrorCodes.NamespaceNotSharded, `Collection ${ns} is not sharded`);
}

export const reshardCollectionCommand: RouterCommand = {
  names: ['reshardCollection'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = namespaceArg(cmd, 'reshardCollection');
    const body = {
      _shardsvrReshardCollection: ns.slice(ns.indexOf('.') + 1), key: requireDoc(cmd, 'key'), unique: optionalBool(cmd, 'unique'), numInitialChunks: optionalNumber(cmd, 'numInitialChunks'),
      zones: optionalArray(cmd, 'zones'), forceRedistribution: optionalBool(cmd, 'forceRedistribution'), collation: optionalDoc(cmd, 'collation'),
    };
    await requireSharded(ctx, ns);
    const db = ns.slice(0, ns.indexOf('.'));
    try {
      await onPrimaryShard(ctx, db, ns, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
    } finally {
      ctx.router.catalogCache.invalidateCollection(ns);
    }
    return { ok: 1 };
  },
};

export const abortReshardCollectionCommand: RouterCommand = {
  names: ['abortReshardCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = namespaceArg(cmd, 'abortReshardCollection');
    return toConfig(ctx, ns, { _configsvrAbortReshardCollection: ns, provenance: 'reshardCollection' });
  },
};

export const commitReshardCollectionCommand: RouterCommand = {
  names: ['commitReshardCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = namespaceArg(cmd, 'commitReshardCollection');
    return toConfig(ctx, ns, { _configsvrCommitReshardCollection: ns });
  },
};

export const reshardRouterCommands: readonly RouterCommand[] = [reshardCollectionCommand, abortReshardCollectionCommand, commitReshardCollectionCommand];
