import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { databaseCriticalSections } from '../../shard/database_critical_section.js';
import type { CommandContext, CommandDefinition, NodeServices } from '../command.js';
import { optionalArray, optionalBool, requireString } from '../args.js';
import { cloneDatabase } from './database_cloner.js';
import { MOVE_PRIMARY_COORDINATOR_NS } from '../../configsvr_decisions/move_primary.js';
import { fetchAll } from '../../wire/remote_cursor.js';
import { DROP_DATABASE_CRITICAL_SECTION_REASON } from '../../ddl/drop_database_coordinator.js';

// The shard side of movePrimary, driven by the config server's coordinator
// (src/configsvr/move_primary_coordinator.ts).

function requireShard(ctx: CommandContext, name: string): void {
  if (ctx.node.options.role !== 'shard' || !ctx.node.sharding.state.enabled) {
    throw new MongoError(ErrorCodes.IllegalOperation, `${name} can only be run on a shard that belongs to a cluster`);
  }
}

function reasonOf(cmd: Record<string, unknown>): string {
  const reason = cmd.reason;
  if (reason === undefined || reason === null) throw new MongoError(ErrorCodes.BadValue, 'reason is required');
  return String(reason);
}

// Donor: {_shardsvrMovePrimaryEnterCriticalSection: db, reason, blockReads?}. Without blockReads
// the database's versioned writes wait; with it reads wait too, and it fails unless the section
// taken earlier with this reason is still held. The section is persisted (restored at startup).
// Entering takes the database's DDL lock on the donor first (held until the section is left, and
// taken again with it at startup), so that a DDL coordinator running on the database ends before
// the move starts and none starts before it ends.
export const movePrimaryEnterCriticalSectionCommand: CommandDefinition = {
  names: ['_shardsvrMovePrimaryEnterCriticalSection'],
  adminOnly: true,
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrMovePrimaryEnterCriticalSection');
    const db = requireString(cmd, '_shardsvrMovePrimaryEnterCriticalSection');
    const sections = databaseCriticalSections(ctx.node);
    if (optionalBool(cmd, 'blockReads') === true) {
      sections.blockReads(db, reasonOf(cmd));
    } else {
      await holdDatabaseLock(ctx.node, db);
      try {
        await checkMoveStillCloning(ctx, db, reasonOf(cmd));
        sections.enter(db, reasonOf(cmd));
      } catch (err) {
        if (sections.holder(db) === undefined) ctx.node.ddl?.coordinators.release(movePrimaryLockKey(db));
        throw err;
      }
    }
    ctx.node.logger.info({ c: 'SHARDING', db, blockReads: cmd.blockReads === true }, 'movePrimary critical section entered');
    return { ok: 1 };
  },
};

// The lock may have been held long (a DDL coordinator of the database): meanwhile the config server
// may have restarted and aborted the move, exit included, and a section entered now would be held
// by no one.
async function checkMoveStillCloning(ctx: CommandContext, db: string, reason: string): Promise<void> {
  const configHost = ctx.node.sharding.state.configHost;
  if (configHost === undefined) return;
  const [move] = await fetchAll(ctx.node.client, configHost, 'config', { find: MOVE_PRIMARY_COORDINATOR_NS.slice('config.'.length), filter: { _id: db } });
  if (move?.phase !== 'clone' || !(move.reason instanceof ObjectId) || move.reason.toHexString() !== reason) {
    throw new MongoError(ErrorCodes.ConflictingOperationInProgress, `the movePrimary of database ${db} that asked for its critical section is no longer running`);
  }
}

// Donor: {_shardsvrMovePrimaryExitCriticalSection: db, reason}. Reloads the database's version
// from the config server first, so the requests held by the section check against the outcome
// (after a commit: StaleDbVersion, and the router goes to the new primary).
export const movePrimaryExitCriticalSectionCommand: CommandDefinition = {
  names: ['_shardsvrMovePrimaryExitCriticalSection'],
  adminOnly: true,
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrMovePrimaryExitCriticalSection');
    const db = requireString(cmd, '_shardsvrMovePrimaryExitCriticalSection');
    const { metadata } = ctx.node.sharding;
    metadata.forgetDatabase(db);
    try {
      await metadata.refreshDatabase(db);
    } finally {
      // Unknown metadata is safe too: the next versioned request refreshes it.
      if (databaseCriticalSections(ctx.node).exit(db, reasonOf(cmd))) {
        ctx.node.ddl?.coordinators.release(movePrimaryLockKey(db));
        ctx.node.logger.info({ c: 'SHARDING', db }, 'movePrimary critical section released');
      }
    }
    return { ok: 1 };
  },
};

// Recipient: {_shardsvrCloneCatalogData: db, from: donorHost, collections: [name], shardedCollections: [name]}.
export const cloneCatalogDataCommand: CommandDefinition = {
  names: ['_shardsvrCloneCatalogData'],
  adminOnly: true,
  async run(ctx, cmd) {
    requireShard(ctx, '_shardsvrCloneCatalogData');
    const db = requireString(cmd, '_shardsvrCloneCatalogData');
    const from = requireString(cmd, 'from');
    const names = (field: string): string[] => (optionalArray(cmd, field) ?? []).map((v) => {
      if (typeof v !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, `${field} must be an array of collection names`);
      return v;
    });
    const started = Date.now();
    const clonedColls = await cloneDatabase(ctx.node, db, from, names('collections'), names('shardedCollections'));
    ctx.node.logger.info({ c: 'SHARDING', db, from, collections: clonedColls.length, millis: Date.now() - started }, 'movePrimary cloned collections');
    return { clonedColls, ok: 1 };
  },
};

export const movePrimaryShardCommands: readonly CommandDefinition[] = [
  movePrimaryEnterCriticalSectionCommand, movePrimaryExitCriticalSectionCommand, cloneCatalogDataCommand,
];

function movePrimaryLockKey(db: string): string {
  return `movePrimary\u0000${db}`;
}

function holdDatabaseLock(node: NodeServices, db: string): Promise<void> {
  return node.ddl?.coordinators.hold(movePrimaryLockKey(db), { db: db.toLowerCase() }, 'movePrimary') ?? Promise.resolve();
}

// Startup of a shard, before it listens: the database critical sections it held come back, a
// movePrimary's each with its database's DDL lock (a dropDatabase coordinator's is released by the
// coordinator, which takes up its phase again under its own locks).
export function restoreMovePrimaryCriticalSections(node: NodeServices): void {
  const sections = databaseCriticalSections(node);
  const restored = sections.restore();
  for (const db of restored.filter((name) => sections.holder(name) !== DROP_DATABASE_CRITICAL_SECTION_REASON)) {
    holdDatabaseLock(node, db).catch((err: unknown) => node.logger.error({ c: 'SHARDING', db, err }, 'movePrimary DDL lock not taken again'));
  }
  if (restored.length > 0) node.logger.info({ c: 'SHARDING', databases: restored }, 'Restored movePrimary critical sections');
}
