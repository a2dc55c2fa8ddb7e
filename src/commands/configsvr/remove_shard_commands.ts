import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { ShardingCatalogManager } from '../../configsvr/sharding_catalog_manager.js';
import { MovePrimaryCoordinator } from '../../configsvr/move_primary_coordinator.js';
import { RemoveShardCatalog } from '../../configsvr/remove_shard_catalog.js';
import { hangIfFailPointEnabled } from '../../base/fail_points.js';
import type { CommandContext, CommandDefinition, NodeServices } from '../command.js';
import { requireString } from '../args.js';

interface DrainingServices {
  removal: RemoveShardCatalog;
  movePrimary: MovePrimaryCoordinator;
}

// One of each per config server, made with its catalog manager.
const byManager = new WeakMap<ShardingCatalogManager, DrainingServices>();

function draining(node: NodeServices): DrainingServices {
  const manager = node.catalogManager;
  if (!manager) throw new MongoError(ErrorCodes.IllegalOperation, '_configsvr commands can only be run on a config server');
  let services = byManager.get(manager);
  if (!services) {
    const selfHost = `${node.options.bindIp}:${node.options.port}`;
    services = {
      removal: new RemoveShardCatalog(node.local, manager, selfHost, node.logger),
      movePrimary: new MovePrimaryCoordinator(node.local, node.client, manager, selfHost, node.logger, { hang: (name) => hangIfFailPointEnabled(node, name) }),
    };
    byManager.set(manager, services);
  }
  return services;
}

// {_configsvrRemoveShard: shardNameOrHost}: one step of the removal; the reply is the state.
export const configsvrRemoveShardCommand: CommandDefinition = {
  names: ['_configsvrRemoveShard'],
  adminOnly: true,
  run(ctx: CommandContext, cmd) {
    return draining(ctx.node).removal.removeShard(requireString(cmd, '_configsvrRemoveShard'));
  },
};

// {_configsvrMovePrimary: db, to: shard}: answers once the move committed and was cleaned up
// (or aborted); {ok: 1} also when the shard already is the primary.
export const configsvrMovePrimaryCommand: CommandDefinition = {
  names: ['_configsvrMovePrimary'],
  adminOnly: true,
  async run(ctx, cmd) {
    await draining(ctx.node).movePrimary.movePrimary(requireString(cmd, '_configsvrMovePrimary'), requireString(cmd, 'to'));
    return { ok: 1 };
  },
};

export const removeShardCommands: readonly CommandDefinition[] = [configsvrRemoveShardCommand, configsvrMovePrimaryCommand];

// Startup of a config server, once its catalog manager exists: settle the moves a crash interrupted.
export function recoverMovePrimaries(node: NodeServices): void {
  if (node.catalogManager) draining(node).movePrimary.recover();
}
