import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { requireDoc, requireString } from '../../command_layer/args.js';
import { checkWriteConcern } from '../../wire/remote_cursor.js';
import type { RouterCommand, RouterContext } from '../router_services.js';

// Zone commands (mongosh's sh.addShardToZone, sh.removeShardFromZone, sh.updateZoneKeyRange and
// sh.removeRangeFromZone): the router checks the arguments' types and the config server does the
// rest (_configsvr*, MongoDB's names). Zones change no chunks, so no routing cache is refreshed.
async function toConfig(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  checkWriteConcern(await ctx.router.client.command(ctx.router.options.configHost, 'admin', cmd));
  return { ok: 1 };
}

export const addShardToZoneCommand: RouterCommand = {
  names: ['addShardToZone', 'addshardtozone'],
  adminOnly: true,
  run(ctx, cmd) {
    const shard = requireString(cmd, Object.keys(cmd)[0]!);
    return toConfig(ctx, { _configsvrAddShardToZone: shard, zone: requireString(cmd, 'zone') });
  },
};

export const removeShardFromZoneCommand: RouterCommand = {
  names: ['removeShardFromZone', 'removeshardfromzone'],
  adminOnly: true,
  run(ctx, cmd) {
    const shard = requireString(cmd, Object.keys(cmd)[0]!);
    return toConfig(ctx, { _configsvrRemoveShardFromZone: shard, zone: requireString(cmd, 'zone') });
  },
};

// {updateZoneKeyRange: ns, min, max, zone}: zone null removes the range [min, max).
export const updateZoneKeyRangeCommand: RouterCommand = {
  names: ['updateZoneKeyRange', 'updatezonekeyrange'],
  adminOnly: true,
  run(ctx, cmd) {
    const name = Object.keys(cmd)[0]!;
    const ns = requireString(cmd, name);
    const dot = ns.indexOf('.');
    if (dot <= 0 || dot === ns.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, 'invalid namespace specified for request');
    const min = requireDoc(cmd, 'min');
    const max = requireDoc(cmd, 'max');
    if (cmd.zone === undefined) throw new MongoError(40414, `BSON field '${name}.zone' is missing but a required field`);
    if (cmd.zone !== null && typeof cmd.zone !== 'string') {
      throw new MongoError(ErrorCodes.TypeMismatch, `"zone" had the wrong type. Expected string or null, found ${bsonTypeName(cmd.zone)}`);
    }
    return toConfig(ctx, { _configsvrUpdateZoneKeyRange: ns, min, max, zone: cmd.zone });
  },
};

export const zoneRouterCommands: readonly RouterCommand[] = [addShardToZoneCommand, removeShardFromZoneCommand, updateZoneKeyRangeCommand];
