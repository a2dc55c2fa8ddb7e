import { Long } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import type { CommandDefinition, ConfigServerServices } from '../command.js';
import { optionalBool, optionalNumber, requireBool, requireDoc, requireString } from '../../command_layer/args.js';
import { checkDDLCoordinatorSession } from '../sharding/ddl_participant_session.js';

// Registered only in a config server's table (src/process/config_server_process.ts).
type ConfigCommand = CommandDefinition<ConfigServerServices>;

export const balancerStartCommand: ConfigCommand = {
  names: ['balancerStart', '_configsvrBalancerStart'],
  adminOnly: true,
  async run(ctx) {
    await ctx.node.balancer.setMode('full');
    return { ok: 1 };
  },
};

// Answers once no round is running, so nothing moves after the reply.
export const balancerStopCommand: ConfigCommand = {
  names: ['balancerStop', '_configsvrBalancerStop'],
  adminOnly: true,
  async run(ctx) {
    await ctx.node.balancer.setMode('off');
    return { ok: 1 };
  },
};

export const balancerStatusCommand: ConfigCommand = {
  names: ['balancerStatus', '_configsvrBalancerStatus'],
  adminOnly: true,
  run(ctx) {
    const s = ctx.node.balancer.status();
    return { mode: s.mode, inBalancerRound: s.inBalancerRound, numBalancerRounds: Long.fromNumber(Number(s.numBalancerRounds)), ok: 1 };
  },
};

export const balancerCollectionStatusCommand: ConfigCommand = {
  names: ['balancerCollectionStatus', '_configsvrBalancerCollectionStatus'],
  adminOnly: true,
  async run(ctx, cmd) {
    const ns = requireString(cmd, Object.keys(cmd)[0]!);
    const result = await ctx.node.balancer.collectionStatus(ns);
    const violation = result.firstComplianceViolation;
    return violation === undefined ? { balancerCompliant: true, ok: 1 } : { balancerCompliant: false, firstComplianceViolation: violation, ok: 1 };
  },
};

export const setAllowMigrationsCommand: ConfigCommand = {
  names: ['_configsvrSetAllowMigrations'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_configsvrSetAllowMigrations');
    await ctx.node.catalogManager.migrations.setAllowMigrations(requireString(cmd, '_configsvrSetAllowMigrations'), requireBool(cmd, 'allowMigrations'));
    return { ok: 1 };
  },
};

// clearJumboFlag names a chunk by its exact bounds; the balancer will consider it again.
export const clearJumboFlagCommand: ConfigCommand = {
  names: ['_configsvrClearJumboFlag'],
  adminOnly: true,
  run(ctx, cmd) {
    const ns = requireString(cmd, '_configsvrClearJumboFlag');
    const minKey = requireDoc(cmd, 'minKey');
    const maxKey = requireDoc(cmd, 'maxKey');
    const manager = ctx.node.catalogManager;
    const collection = manager.requireSharded(ns);
    const chunk = manager.chunks(collection.uuid).find((c) => compareValues(c.min, minKey) === 0 && compareValues(c.max, maxKey) === 0);
    if (!chunk) throw new MongoError(ErrorCodes.BadValue, `Can't find chunk with bounds ${JSON.stringify({ min: minKey, max: maxKey })} in ${ns}`);
    if (chunk.jumbo) manager.migrations.clearJumbo(ns, minKey);
    return { ok: 1 };
  },
};

export const configureCollectionBalancingCommand: ConfigCommand = {
  names: ['_configsvrConfigureCollectionBalancing'],
  adminOnly: true,
  run(ctx, cmd) {
    ctx.node.catalogManager.migrations.configureCollectionBalancing(
      requireString(cmd, '_configsvrConfigureCollectionBalancing'), optionalNumber(cmd, 'chunkSize'), optionalBool(cmd, 'enableAutoMerger'),
    );
    return { ok: 1 };
  },
};

export const balancerCommands: readonly ConfigCommand[] = [
  configureCollectionBalancingCommand, balancerStartCommand, balancerStopCommand, balancerStatusCommand, balancerCollectionStatusCommand, setAllowMigrationsCommand, clearJumboFlagCommand,
];
