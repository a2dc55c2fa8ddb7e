import { Binary, UUID } from 'bson';
import { bsonTag, type Doc } from '../../bson/values.js';
import { compareValues } from '../../bson/compare.js';
import { migratedHistoryToBSON } from '../../sessions/session_migration.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { RawDocument } from '../../wire/raw_bson.js';
import { migrationStatistics } from '../../migration/migration_statistics.js';
import { moveRange, type MigrationSourceManager } from '../../migration/migration_source_manager.js';
import type { MigrationChunkClonerSource } from '../../migration/migration_chunk_cloner_source.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import type { MigrationNode } from '../../migration/migration_node.js';
import { optionalBool, optionalNumber, requireDoc, requireString } from '../../command_layer/args.js';

// What a migration's commands read of a node: its migration runtime and what the drivers use,
// all that the simulator's shards have (test/sim/migration_world.ts).
type MigrationCommand = CommandDefinition<MigrationNode>;

// Sent by the config server to the donor: runs the migration (or joins the identical one in
// flight) and replies once it is committed, or with the reason it aborted.
export const shardsvrMoveRangeCommand: MigrationCommand = {
  names: ['_shardsvrMoveRange'],
  adminOnly: true,
  async run(ctx, cmd) {
    const nss = requireString(cmd, '_shardsvrMoveRange');
    await moveRange(ctx.node, {
      nss, range: { min: requireDoc(cmd, 'min'), max: requireDoc(cmd, 'max') }, toShard: requireString(cmd, 'toShard'),
      waitForDelete: optionalBool(cmd, 'waitForDelete') ?? false,
    });
    return { ok: 1 };
  },
};

// The recipient pulls the range's documents, raw as stored; an empty batch means all were sent.
// The recipient may say how long it took to apply its last batch (`applyMillis`, docshard's own
// field), which the donor's pacing counts as clone work.
export const migrateCloneCommand: MigrationCommand = {
  names: ['_migrateClone'],
  adminOnly: true,
  async run(ctx, cmd) {
    const { pacer } = clonerFor(ctx, cmd);
    const { delayMs, batchBytes } = pacer.next({ opsPerSecond: ctx.node.migrations.loadMeter.opsPerSecond(performance.now()), applyMs: optionalNumber(cmd, 'applyMillis') ?? 0 });
    if (delayMs > 0) {
      migrationStatistics(ctx.node).clonePausedMillisOnDonor += delayMs;
      await ctx.node.migrations.clock.sleep(delayMs);
    }
    // Looked up again: the migration may have ended during the pause.
    const cloner = clonerFor(ctx, cmd);
    const started = performance.now();
    const { objects } = cloner.nextCloneBatch(batchBytes);
    cloner.pacer.batchServed(performance.now() - started);
    return { objects, ok: 1 };
  },
};

// The recipient pulls what changed in the range since the clone started.
export const transferModsCommand: MigrationCommand = {
  names: ['_transferMods'],
  adminOnly: true,
  run(ctx, cmd) {
    const cloner = clonerFor(ctx, cmd);
    const batch = cloner.nextModsBatch();
    // `pending` is docshard's own: what is still to send, so the recipient knows it caught up.
    return { reload: batch.reload.map((b) => new RawDocument(b)), deleted: batch.deleted, size: batch.size, pending: cloner.pendingMods, ok: 1 };
  },
};

// The recipient pulls the sessions' retryable-write history of the range once the donor holds
// writes (MongoDB's _getNextSessionMods): entries of the collection in _id order from `after`,
// each cut to the statements whose document lies in the range.
export const getNextSessionModsCommand: MigrationCommand = {
  names: ['_getNextSessionMods'],
  adminOnly: true,
  run(ctx, cmd) {
    const source = sourceFor(ctx, cmd);
    const { min, max } = source.doc.range;
    const inRange = (key: Doc): boolean => compareValues(min, key) <= 0 && compareValues(key, max) < 0;
    const batch = ctx.node.sessionCatalog.historyForMigration(source.doc.nss, inRange, cmd.after, SESSION_MODS_BATCH);
    return { entries: batch.entries.map(migratedHistoryToBSON), ...(batch.last !== undefined ? { last: batch.last } : {}), done: batch.done, ok: 1 };
  },
};

// History entries read per _getNextSessionMods.
const SESSION_MODS_BATCH = 1000;

function sourceFor(ctx: CommandContext<MigrationNode>, cmd: Doc): MigrationSourceManager {
  const sessionId = requireUuid(cmd, 'sessionId');
  const source: MigrationSourceManager | undefined = ctx.node.migrations.source;
  if (source === undefined || !source.doc._id.equals(sessionId)) {
    throw new MongoError(ErrorCodes.OperationFailed, `No active migration with session id ${sessionId.toHexString()}`);
  }
  return source;
}

function clonerFor(ctx: CommandContext<MigrationNode>, cmd: Doc): MigrationChunkClonerSource {
  const sessionId = requireUuid(cmd, 'sessionId');
  const source: MigrationSourceManager | undefined = ctx.node.migrations.source;
  if (source === undefined || source.cloner === undefined || !source.doc._id.equals(sessionId)) {
    throw new MongoError(ErrorCodes.OperationFailed, `No active migration with session id ${sessionId.toHexString()}`);
  }
  return source.cloner;
}

export function requireUuid(cmd: Doc, field: string): UUID {
  const v = cmd[field];
  if (bsonTag(v) !== 'Binary' || (v as Binary).sub_type !== Binary.SUBTYPE_UUID) {
    throw new MongoError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'uuid'`);
  }
  return v instanceof UUID ? v : (v as Binary).toUUID();
}

export const donorCommands: readonly MigrationCommand[] = [shardsvrMoveRangeCommand, migrateCloneCommand, transferModsCommand, getNextSessionModsCommand];
