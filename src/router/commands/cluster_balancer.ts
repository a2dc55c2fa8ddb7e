import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { optionalBool, optionalNumber, requireBool, requireString } from '../../command_layer/args.js';
import { checkWriteConcern } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';

function toConfig(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  return ctx.router.client.command(ctx.router.options.configHost, 'admin', cmd);
}

// The router's balancer commands are the config server's, under their _configsvr names.
function forwarded(name: string, configName: string): RouterCommand {
  return {
    names: [name],
    adminOnly: true,
    run: async (ctx) => checkWriteConcern(await toConfig(ctx, { [configName]: 1 })),
  };
}

export const balancerStartRouterCommand = forwarded('balancerStart', '_configsvrBalancerStart');
export const balancerStopRouterCommand = forwarded('balancerStop', '_configsvrBalancerStop');
export const balancerStatusRouterCommand = forwarded('balancerStatus', '_configsvrBalancerStatus');

export const balancerCollectionStatusRouterCommand: RouterCommand = {
  names: ['balancerCollectionStatus'],
  adminOnly: true,
  run: async (ctx, cmd) => checkWriteConcern(await toConfig(ctx, { _configsvrBalancerCollectionStatus: requireString(cmd, 'balancerCollectionStatus') })),
};

export const setAllowMigrationsRouterCommand: RouterCommand = {
  names: ['setAllowMigrations'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'setAllowMigrations');
    checkWriteConcern(await toConfig(ctx, { _configsvrSetAllowMigrations: ns, allowMigrations: requireBool(cmd, 'allowMigrations') }));
    return { ok: 1 };
  },
};

// clearJumboFlag {find} or {bounds}: the chunk is found in the router's routing table.
export const clearJumboFlagRouterCommand: RouterCommand = {
  names: ['clearJumboFlag'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'clearJumboFlag');
    ctx.router.catalogCache.invalidateCollection(ns);
    const cm = await ctx.router.catalogCache.getCollection(ns);
    if (!cm) throw new MongoError(ErrorCodes.NamespaceNotSharded, `clearJumboFlag: ${ns} is not sharded`);
    let key: Doc;
    if (isPlainObject(cmd.find)) key = new ShardKeyPattern(cm.keyPattern).extractShardKeyFromDoc(cmd.find);
    else if (Array.isArray(cmd.bounds) && cmd.bounds.length === 2 && isPlainObject(cmd.bounds[0])) key = cmd.bounds[0] as Doc;
    else throw new MongoError(ErrorCodes.BadValue, 'clearJumboFlag needs find or bounds');
    const chunk = cm.findIntersectingChunk(key);
    checkWriteConcern(await toConfig(ctx, { _configsvrClearJumboFlag: ns, minKey: chunk.min, maxKey: chunk.max }));
    return { ok: 1 };
  },
};

export const configureCollectionBalancingRouterCommand: RouterCommand = {
  names: ['configureCollectionBalancing'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, 'configureCollectionBalancing');
    checkWriteConcern(await toConfig(ctx, {
      _configsvrConfigureCollectionBalancing: ns, chunkSize: optionalNumber(cmd, 'chunkSize'), enableAutoMerger: optionalBool(cmd, 'enableAutoMerger'),
    }));
    return { ok: 1 };
  },
};

export const balancerRouterCommands: readonly RouterCommand[] = [
  configureCollectionBalancingRouterCommand,
  balancerStartRouterCommand, balancerStopRouterCommand, balancerStatusRouterCommand, balancerCollectionStatusRouterCommand,
  setAllowMigrationsRouterCommand, clearJumboFlagRouterCommand,
];
