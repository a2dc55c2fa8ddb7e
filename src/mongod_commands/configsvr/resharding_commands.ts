import type { CommandDefinition, ConfigServerServices } from '../command.js';
import { optionalBool, optionalDoc, optionalNumber, requireDoc, requireString } from '../../command_layer/args.js';
import { parseZones } from '../../resharding/resharding_request.js';
import { parseDestination, parseProvenance } from '../../resharding/move_collection_request.js';
import { checkDDLCoordinatorSession } from '../sharding/ddl_participant_session.js';

// The config server's side of reshardCollection, abortReshardCollection and
// commitReshardCollection (MongoDB's _configsvr* names), sent by a router (reshardCollection by
// way of the database's primary shard; abortMoveCollection and abortUnshardCollection as
// _configsvrAbortReshardCollection with their `provenance`): the
// ReshardingCoordinatorService (src/resharding) answers each once the resharding has ended.
type ConfigCommand = CommandDefinition<ConfigServerServices>;

// Sent by the primary shard's ReshardCollectionCoordinator (src/ddl), under its session; with
// `provenance` moveCollection or unshardCollection and `shardDistribution` [{shard}], MongoDB 8.0's
// moveCollection and unshardCollection.
export const configsvrReshardCollectionCommand: ConfigCommand = {
  names: ['_configsvrReshardCollection'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrReshardCollection');
    await ctx.node.resharding.reshardCollection({
      ns: requireString(cmd, '_configsvrReshardCollection'), key: requireDoc(cmd, 'key'), unique: optionalBool(cmd, 'unique') ?? false,
      numInitialChunks: optionalNumber(cmd, 'numInitialChunks'), zones: parseZones(cmd.zones),
      forceRedistribution: optionalBool(cmd, 'forceRedistribution') ?? false, collation: optionalDoc(cmd, 'collation'),
      provenance: parseProvenance(cmd.provenance), toShard: parseDestination(cmd.shardDistribution),
    });
    return { ok: 1 };
  },
};

export const configsvrAbortReshardCollectionCommand: ConfigCommand = {
  names: ['_configsvrAbortReshardCollection'],
  adminOnly: true,
  async run(ctx, cmd) {
    await ctx.node.resharding.abort(requireString(cmd, '_configsvrAbortReshardCollection'), parseProvenance(cmd.provenance));
    return { ok: 1 };
  },
};

export const configsvrCommitReshardCollectionCommand: ConfigCommand = {
  names: ['_configsvrCommitReshardCollection'],
  adminOnly: true,
  async run(ctx, cmd) {
    await ctx.node.resharding.commit(requireString(cmd, '_configsvrCommitReshardCollection'));
    return { ok: 1 };
  },
};

export const reshardingConfigCommands: readonly ConfigCommand[] = [
  configsvrReshardCollectionCommand, configsvrAbortReshardCollectionCommand, configsvrCommitReshardCollectionCommand,
];
