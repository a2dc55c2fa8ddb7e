import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { optionalBool, optionalDoc, requireString } from '../../command_layer/args.js';
import { checkWriteConcern } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';

// moveChunk and moveRange go to the config server, which starts the migration on the donor (or
// joins an identical one in flight) and answers when it has committed or aborted.
async function move(ctx: RouterContext, ns: string, body: Doc): Promise<Doc> {
  const started = ctx.router.wallClock.now();
  checkWriteConcern(await ctx.router.client.command(ctx.router.options.configHost, 'admin', { _configsvrMoveRange: ns, ...body }));
  ctx.router.catalogCache.invalidateCollection(ns);
  return { millis: ctx.router.wallClock.now() - started, ok: 1 };
}

export const moveChunkCommand: RouterCommand = {
  names: ['moveChunk', 'movechunk'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = requireString(cmd, Object.keys(cmd)[0]!);
    const to = requireString(cmd, 'to');
    const bounds = cmd.bounds;
    if (bounds !== undefined && (!Array.isArray(bounds) || !bounds.every(isPlainObject))) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'moveChunk.bounds' is the wrong type, expected type 'array'");
    return move(ctx, ns, {
      toShard: to, find: optionalDoc(cmd, 'find'), bounds,
      waitForDelete: optionalBool(cmd, '_waitForDelete') ?? optionalBool(cmd, 'waitForDelete') ?? false,
    });
  },
};

export const moveRangeCommand: RouterCommand = {
  names: ['moveRange'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = requireString(cmd, 'moveRange');
    return move(ctx, ns, {
      toShard: requireString(cmd, 'toShard'), min: optionalDoc(cmd, 'min'), max: optionalDoc(cmd, 'max'),
      waitForDelete: optionalBool(cmd, '_waitForDelete') ?? false,
    });
  },
};
