import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { optionalString, requireString } from '../../command_layer/args.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { onPrimaryShard } from './cluster_ddl.js';
import { namespaceArg as reshardingNamespaceArg, toConfig } from './cluster_reshard.js';

// moveCollection and unshardCollection (admin; MongoDB 8.0, mongosh's sh.moveCollection and
// sh.unshardCollection): each is a resharding to the key {_id: 1} (`provenance` names which) with
// one destination shard (`shardDistribution`), sent to the database's primary shard as
// _shardsvrReshardCollection; its ReshardCollectionCoordinator (src/ddl) holds the collection's
// DDL lock while the config server's ReshardingCoordinator (src/resharding) runs. Afterwards the
// collection is tracked unsplittable in config.collections, its one chunk on the destination.
function namespaceArg(cmd: Doc, name: string): string {
  const ns = requireString(cmd, name);
  const dot = ns.indexOf('.');
  if (dot <= 0 || dot === ns.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${ns}'`);
  const db = ns.slice(0, dot);
  if (db === 'admin' || db === 'config' || db === 'local') throw new MongoError(ErrorCodes.IllegalOperation, `Can't ${name} a collection of the ${db} database`);
  if (ns.slice(dot + 1).startsWith('system.')) throw new MongoError(ErrorCodes.IllegalOperation, `Can't ${name} a system collection: ${ns}`);
  return ns;
}

async function reshardOnPrimary(ctx: RouterContext, ns: string, provenance: 'moveCollection' | 'unshardCollection', toShard: string | undefined): Promise<Doc> {
  const db = ns.slice(0, ns.indexOf('.'));
  // An unknown shard is refused before the primary registers the collection in the catalog.
  if (toShard !== undefined) await ctx.router.shardRegistry.host(toShard);
  try {
    await onPrimaryShard(ctx, db, ns, {
      _shardsvrReshardCollection: ns.slice(db.length + 1), key: { _id: 1 }, provenance, forceRedistribution: true,
      ...(toShard === undefined ? {} : { shardDistribution: [{ shard: toShard }] }),
    });
  } finally {
    ctx.router.catalogCache.invalidateCollection(ns);
  }
  return { ok: 1 };
}

export const moveCollectionCommand: RouterCommand = {
  names: ['moveCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = namespaceArg(cmd, 'moveCollection');
    return reshardOnPrimary(ctx, ns, 'moveCollection', requireString(cmd, 'toShard'));
  },
};

// toShard may be left out: the config server picks the shard holding the least data.
export const unshardCollectionCommand: RouterCommand = {
  names: ['unshardCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = namespaceArg(cmd, 'unshardCollection');
    return reshardOnPrimary(ctx, ns, 'unshardCollection', optionalString(cmd, 'toShard'));
  },
};

// abortMoveCollection and abortUnshardCollection (mongosh's sh.abortMoveCollection and
// sh.abortUnshardCollection): the config server aborts the namespace's resharding if its own
// command started it (`provenance`); another kind of resharding answers IllegalOperation, none
// NoSuchReshardCollection, one past its commit decision ReshardCollectionCommitted.
export const abortMoveCollectionCommand: RouterCommand = {
  names: ['abortMoveCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = reshardingNamespaceArg(cmd, 'abortMoveCollection');
    return toConfig(ctx, ns, { _configsvrAbortReshardCollection: ns, provenance: 'moveCollection' });
  },
};

export const abortUnshardCollectionCommand: RouterCommand = {
  names: ['abortUnshardCollection'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = reshardingNamespaceArg(cmd, 'abortUnshardCollection');
    return toConfig(ctx, ns, { _configsvrAbortReshardCollection: ns, provenance: 'unshardCollection' });
  },
};

export const moveCollectionRouterCommands: readonly RouterCommand[] = [moveCollectionCommand, unshardCollectionCommand, abortMoveCollectionCommand, abortUnshardCollectionCommand];
