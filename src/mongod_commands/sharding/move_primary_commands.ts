import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject } from '../../bson/values.js';
import type { DatabaseType, ShardType } from '../../catalog/type_chunk.js';
import { decideMovePrimary } from '../../catalog_decisions/move_primary.js';
import { databaseCriticalSections } from '../../shard/database_critical_section.js';
import { fetchAll } from '../../wire/remote_cursor.js';
import type { CommandContext, CommandDefinition, ShardServices } from '../command.js';
import { shardOnlyMessage } from './shard_only_refusals.js';
import { optionalArray, requireString } from '../../command_layer/args.js';
import { cloneDatabase } from './database_cloner.js';
import { checkDDLCoordinatorSession } from './ddl_participant_session.js';

// The shard side of movePrimary: the database's primary runs the MovePrimaryCoordinator
// (src/ddl/move_primary_coordinator.ts), the recipient copies what it is told to.

function requireShard(ctx: CommandContext, name: string): void {
  if (ctx.node.options.role !== 'shard' || !ctx.node.sharding.state.enabled) {
    throw new MongoError(ErrorCodes.IllegalOperation, shardOnlyMessage(name));
  }
}

// {_shardsvrMovePrimary: db, to, databaseVersion}, run on the database by the router: the
// dispatcher has checked that this shard is its primary. A move to where the database already is
// answers ok without a coordinator; the same move running joins it, another is refused.
// Registered only in a shard's table (a config server's refuses it: shard_only_refusals.ts).
export const shardsvrMovePrimaryCommand: CommandDefinition<ShardServices> = {
  names: ['_shardsvrMovePrimary'],
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrMovePrimary');
    const db = requireString(cmd, '_shardsvrMovePrimary');
    if (db !== ctx.db) throw new MongoError(ErrorCodes.InvalidNamespace, `_shardsvrMovePrimary must run on the database it moves, ${db}`);
    const to = requireString(cmd, 'to');
    const configHost = ctx.node.sharding.state.configHost!;
    const [[database], shards] = await Promise.all([
      fetchAll(ctx.node.client, configHost, 'config', { find: 'databases', filter: { _id: db } }),
      fetchAll(ctx.node.client, configHost, 'config', { find: 'shards' }),
    ]);
    const decision = decideMovePrimary({ db, to, database: database as unknown as DatabaseType | undefined, shards: shards as unknown as ShardType[] });
    if (decision.kind === 'noop') {
      ctx.node.logger.info({ c: 'SHARDING', db, to }, 'Database already on requested primary shard');
      return { ok: 1 };
    }
    await ctx.node.ddl.coordinators.run({
      id: { namespace: db, operationType: 'movePrimary' }, request: { _shardsvrMovePrimary: db, to },
      databaseVersion: isPlainObject(cmd.databaseVersion) ? cmd.databaseVersion : undefined,
    });
    return { ok: 1 };
  },
};

// Recipient: {_shardsvrCloneCatalogData: db, from: donorHost, collections: [name], shardedCollections: [name]},
// a retryable write of the donor's coordinator session.
export const cloneCatalogDataCommand: CommandDefinition = {
  names: ['_shardsvrCloneCatalogData'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrCloneCatalogData');
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrCloneCatalogData');
    const db = requireString(cmd, '_shardsvrCloneCatalogData');
    const from = requireString(cmd, 'from');
    const names = (field: string): string[] => (optionalArray(cmd, field) ?? []).map((v) => {
      if (typeof v !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, `${field} must be an array of collection names`);
      return v;
    });
    const started = ctx.node.wallClock.now();
    const clonedColls = await cloneDatabase(ctx.node, db, from, names('collections'), names('shardedCollections'));
    ctx.node.logger.info({ c: 'SHARDING', db, from, collections: clonedColls.length, millis: ctx.node.wallClock.now() - started }, 'movePrimary cloned collections');
    return { clonedColls, ok: 1 };
  },
};

// Recipient: {_shardsvrMovePrimaryEnterCriticalSection: db, reason}, a retryable write of the
// donor's coordinator session: the recipient blocks the database's versioned reads and writes
// (persisted) from before the commit until the donor has dropped its copies, so that nothing the
// new primary is asked to do (a shardCollection of a moved collection, say) meets them.
export const movePrimaryEnterCriticalSectionCommand: CommandDefinition = {
  names: ['_shardsvrMovePrimaryEnterCriticalSection'],
  retryableWrite: true,
  adminOnly: true,
  run(ctx, cmd) {
    requireShard(ctx, '_shardsvrMovePrimaryEnterCriticalSection');
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrMovePrimaryEnterCriticalSection');
    const db = requireString(cmd, '_shardsvrMovePrimaryEnterCriticalSection');
    const reason = requireString(cmd, 'reason');
    databaseCriticalSections(ctx.node).enterBlockingReads(db, reason);
    ctx.node.logger.info({ c: 'SHARDING', db, reason }, 'movePrimary recipient entered the database critical section');
    return { ok: 1 };
  },
};

// Recipient: {_shardsvrMovePrimaryExitCriticalSection: db, reason}: reloads the database's
// version, which names this shard primary once the move committed, and releases the requests it
// held. Nothing held is no error (the coordinator sends it again after a crash, and on abort).
export const movePrimaryExitCriticalSectionCommand: CommandDefinition = {
  names: ['_shardsvrMovePrimaryExitCriticalSection'],
  retryableWrite: true,
  adminOnly: true,
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrMovePrimaryExitCriticalSection');
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrMovePrimaryExitCriticalSection');
    const db = requireString(cmd, '_shardsvrMovePrimaryExitCriticalSection');
    const reason = requireString(cmd, 'reason');
    if (await databaseCriticalSections(ctx.node).exitAfterRefresh(db, reason, ctx.node.sharding.metadata)) {
      ctx.node.logger.info({ c: 'SHARDING', db, reason }, 'movePrimary recipient left the database critical section');
    }
    return { ok: 1 };
  },
};

export const movePrimaryShardCommands: readonly CommandDefinition[] = [
  cloneCatalogDataCommand, movePrimaryEnterCriticalSectionCommand, movePrimaryExitCriticalSectionCommand,
];
