import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { checkMovePrimaryRequest } from '../../catalog_decisions/move_primary.js';
import { onPrimaryShard } from './cluster_ddl.js';
import { requireString } from '../../command_layer/args.js';
import { checkWriteConcern } from '../../wire/remote_cursor.js';
import type { RouterCommand } from '../router_services.js';

// {removeShard: shardNameOrHost}: one step of the removal on the config server; its reply (the
// state: started, ongoing, completed) goes to the client as is. The shard list is reloaded after
// each step, as mongos does.
export const removeShardCommand: RouterCommand = {
  names: ['removeShard', 'removeshard'],
  adminOnly: true,
  async run(ctx, cmd) {
    const shard = requireString(cmd, Object.keys(cmd)[0]!);
    try {
      const reply = checkWriteConcern(await ctx.router.client.command(ctx.router.options.configHost, 'admin', { _configsvrRemoveShard: shard }));
      return passthrough(reply);
    } finally {
      await ctx.router.shardRegistry.reload().catch(() => undefined);
    }
  },
};

// {movePrimary: db, to: shard}: the database's primary shard moves its unsharded collections and
// has the config server switch its primary (src/ddl/move_primary_coordinator.ts); {ok: 1} as 7.0
// answers. This router forgets the database either way, and other routers learn of the move from
// the old primary's StaleDbVersion.
export const movePrimaryCommand: RouterCommand = {
  names: ['movePrimary', 'moveprimary'],
  adminOnly: true,
  async run(ctx, cmd) {
    const db = requireString(cmd, Object.keys(cmd)[0]!);
    const to = requireString(cmd, 'to');
    checkMovePrimaryRequest(db, to);
    if (!(await ctx.router.catalogCache.getDatabase(db, { create: false }))) throw new MongoError(ErrorCodes.NamespaceNotFound, `database ${db} not found`);
    try {
      await onPrimaryShard(ctx, db, `${db}.$cmd`, { _shardsvrMovePrimary: db, to });
    } finally {
      ctx.router.catalogCache.invalidateDatabase(db);
    }
    return { ok: 1 };
  },
};

function passthrough(reply: Doc): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(reply)) if (k !== '$clusterTime' && k !== 'operationTime') out[k] = v;
  return out;
}
