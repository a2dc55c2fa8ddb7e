import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { bsonTypeName } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import { ZonesCatalog } from '../../configsvr/zones_catalog.js';
import type { CommandContext, CommandDefinition, ConfigServerServices } from '../command.js';
import { requireDoc, requireString } from '../../command_layer/args.js';

// Registered only in a config server's table (src/process/config_server_process.ts).
type ConfigCommand = CommandDefinition<ConfigServerServices>;

function zones(ctx: CommandContext<ConfigServerServices>): ZonesCatalog {
  return new ZonesCatalog(ctx.node.local, ctx.node.catalogManager);
}

function checkZoneNamespace(ns: string): void {
  const dot = ns.indexOf('.');
  if (dot <= 0 || dot === ns.length - 1) throw new MongoError(ErrorCodes.InvalidNamespace, `${ns} is not a valid namespace`);
}

// The `zone` of updateZoneKeyRange: a name, or null to remove the range (StringOrNull).
function zoneOrNull(cmd: Doc, command: string): string | null {
  if (!('zone' in cmd) || cmd.zone === undefined) throw new MongoError(40414, `BSON field '${command}.zone' is missing but a required field`);
  if (cmd.zone === null || typeof cmd.zone === 'string') return cmd.zone;
  throw new MongoError(ErrorCodes.TypeMismatch, `"zone" had the wrong type. Expected string or null, found ${bsonTypeName(cmd.zone)}`);
}

export const configsvrAddShardToZoneCommand: ConfigCommand = {
  names: ['_configsvrAddShardToZone'],
  adminOnly: true,
  run(ctx, cmd) {
    zones(ctx).addShardToZone(requireString(cmd, '_configsvrAddShardToZone'), requireString(cmd, 'zone'));
    ctx.node.balancer.wake();
    return { ok: 1 };
  },
};

export const configsvrRemoveShardFromZoneCommand: ConfigCommand = {
  names: ['_configsvrRemoveShardFromZone'],
  adminOnly: true,
  run(ctx, cmd) {
    zones(ctx).removeShardFromZone(requireString(cmd, '_configsvrRemoveShardFromZone'), requireString(cmd, 'zone'));
    ctx.node.balancer.wake();
    return { ok: 1 };
  },
};

export const configsvrUpdateZoneKeyRangeCommand: ConfigCommand = {
  names: ['_configsvrUpdateZoneKeyRange'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = requireString(cmd, '_configsvrUpdateZoneKeyRange');
    checkZoneNamespace(ns);
    zones(ctx).updateZoneKeyRange(ns, requireDoc(cmd, 'min'), requireDoc(cmd, 'max'), zoneOrNull(cmd, '_configsvrUpdateZoneKeyRange'));
    ctx.node.balancer.wake();
    return { ok: 1 };
  },
};

export const zoneCommands: readonly ConfigCommand[] = [
  configsvrAddShardToZoneCommand, configsvrRemoveShardFromZoneCommand, configsvrUpdateZoneKeyRangeCommand,
];
