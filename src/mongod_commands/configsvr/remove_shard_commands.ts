import { databaseVersionFromBSON } from '../../catalog/database_version.js';
import type { ShardingCatalogManager } from '../../configsvr/sharding_catalog_manager.js';
import { commitMovePrimaryOnCatalog } from '../../configsvr/move_primary_catalog.js';
import { RemoveShardCatalog } from '../../configsvr/remove_shard_catalog.js';
import type { CommandDefinition, ConfigServerServices } from '../command.js';
import { requireString } from '../../command_layer/args.js';
import { checkDDLCoordinatorSession } from '../sharding/ddl_participant_session.js';

// One per config server, made with its catalog manager.
const byManager = new WeakMap<ShardingCatalogManager, RemoveShardCatalog>();

// Registered only in a config server's table (src/process/config_server_process.ts).
type ConfigCommand = CommandDefinition<ConfigServerServices>;

function removal(node: ConfigServerServices): RemoveShardCatalog {
  const m = node.catalogManager;
  let catalog = byManager.get(m);
  if (!catalog) {
    catalog = new RemoveShardCatalog(node.local, m, `${node.options.bindIp}:${node.options.port}`, node.logger, node.wallClock);
    byManager.set(m, catalog);
  }
  return catalog;
}

// {_configsvrRemoveShard: shardNameOrHost}: one step of the removal; the reply is the state.
export const configsvrRemoveShardCommand: ConfigCommand = {
  names: ['_configsvrRemoveShard'],
  adminOnly: true,
  run(ctx, cmd) {
    return removal(ctx.node).removeShard(requireString(cmd, '_configsvrRemoveShard'));
  },
};

// {_configsvrCommitMovePrimary: db, from, to, expectedDatabaseVersion}: the commit of the
// donor's MovePrimaryCoordinator, a retryable write of its session.
export const configsvrCommitMovePrimaryCommand: ConfigCommand = {
  names: ['_configsvrCommitMovePrimary'],
  retryableWrite: true,
  adminOnly: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrCommitMovePrimary');
    commitMovePrimaryOnCatalog(ctx.node.local, `${ctx.node.options.bindIp}:${ctx.node.options.port}`, ctx.node.logger, ctx.node.wallClock, {
      db: requireString(cmd, '_configsvrCommitMovePrimary'), from: requireString(cmd, 'from'), to: requireString(cmd, 'to'),
      expectedDatabaseVersion: databaseVersionFromBSON(cmd.expectedDatabaseVersion),
    });
    return { ok: 1 };
  },
};

export const removeShardCommands: readonly ConfigCommand[] = [configsvrRemoveShardCommand, configsvrCommitMovePrimaryCommand];
