import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandContext, CommandDefinition, ShardServices } from '../command.js';
import { shardOnlyMessage } from './shard_only_refusals.js';
import { collectionArg, optionalBool, requireDoc, requireString } from '../../command_layer/args.js';
import { dropCollectionLocally, dropDatabaseLocally } from '../ddl/collections.js';
import type { CollectionCriticalSections } from '../../shard/collection_critical_section.js';
import { valuesEqual } from '../../bson/compare.js';
import { RANGE_DELETIONS_NS } from '../../migration/range_deletion_task.js';
import { checkDDLCoordinatorSession } from './ddl_participant_session.js';
import { collModCommand } from '../ddl/coll_mod.js';

// The participant side of the DDL coordinators (src/ddl), on every shard.

// Registered only in a shard's table (a config server's refuses them: shard_only_refusals.ts).
type ShardCommand = CommandDefinition<ShardServices>;

function criticalSections(ctx: CommandContext<ShardServices>, name: string): CollectionCriticalSections {
  if (!ctx.node.sharding.state.enabled) throw new MongoError(ErrorCodes.IllegalOperation, shardOnlyMessage(name));
  return ctx.node.ddl.criticalSections;
}

// {_shardsvrParticipantBlock: coll, blockType: 'ReadsAndWrites' | 'Writes' | 'Unblock', reason}:
// takes or releases the collection's critical section, persisted with its reason. Unblocking
// forgets the collection's metadata first, so that the requests it held check their version
// against what the DDL changed.
export const participantBlockCommand: ShardCommand = {
  names: ['_shardsvrParticipantBlock'],
  retryableWrite: true,
  async run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrParticipantBlock');
    const sections = criticalSections(ctx, '_shardsvrParticipantBlock');
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const reason = requireDoc(cmd, 'reason');
    const blockType = requireString(cmd, 'blockType');
    switch (blockType) {
      case 'ReadsAndWrites':
      case 'Writes':
        await sections.enter(ns, reason, blockType === 'ReadsAndWrites');
        break;
      case 'Unblock':
        ctx.node.sharding.metadata.forget(ns);
        sections.exit(ns, reason);
        break;
      default:
        throw new MongoError(ErrorCodes.BadValue, `Enumeration value '${blockType}' for field 'blockType' is not a valid value.`);
    }
    ctx.node.logger.info({ c: 'SHARDING', ns, blockType, reason }, 'DDL participant critical section');
    return { ok: 1 };
  },
};

// {_shardsvrDropCollectionParticipant: coll, collectionUUID?, requireCollectionEmpty?}: the
// shard's copy, its range deletion tasks and its cached metadata go; nothing there is no error (the
// drop runs again after a crash). As in MongoDB 8.0, a copy of another UUID than collectionUUID, or
// one holding documents under requireCollectionEmpty, is left alone: an aborted shardCollection
// takes back only the empty copies it made.
export const dropCollectionParticipantCommand: ShardCommand = {
  names: ['_shardsvrDropCollectionParticipant'],
  retryableWrite: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrDropCollectionParticipant');
    criticalSections(ctx, '_shardsvrDropCollectionParticipant');
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const requireEmpty = optionalBool(cmd, 'requireCollectionEmpty') ?? false;
    const { storage } = ctx.node;
    const copy = storage.getCollection(ns);
    const otherUUID = copy !== undefined && cmd.collectionUUID !== undefined && !valuesEqual(copy.entry.uuid, cmd.collectionUUID);
    if (otherUUID || (copy !== undefined && requireEmpty && storage.stats.get(copy.entry.id).count > 0)) {
      ctx.node.logger.info({ c: 'SHARDING', ns, otherUUID }, 'DDL participant left its copy of the collection');
      return { ok: 1 };
    }
    dropCollectionLocally(ctx.node, ns);
    ctx.node.sharding.metadata.forget(ns);
    return { ok: 1 };
  },
};

// {_shardsvrDropDatabaseParticipant: 1}: every collection of the database the shard holds.
export const dropDatabaseParticipantCommand: ShardCommand = {
  names: ['_shardsvrDropDatabaseParticipant'],
  retryableWrite: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrDropDatabaseParticipant');
    criticalSections(ctx, '_shardsvrDropDatabaseParticipant');
    dropDatabaseLocally(ctx.node, ctx.db);
    return { ok: 1 };
  },
};

// {_shardsvrRenameCollectionParticipant: coll, to, sourceUUID, renameSource}, under the critical
// sections of both namespaces (`to` in this database, or in another for an unsharded source whose
// primary is this shard's for both): a target of another UUID is dropped (the coordinator checked
// dropTarget), the source's copy takes the new name with its UUID and its range deletion tasks
// (unless renameSource is false: an unsharded source's copy off its primary is a movePrimary
// donor's leftover), and both namespaces' cached metadata goes. Run again after a crash, it finds
// its copy renamed and leaves it.
export const renameCollectionParticipantCommand: ShardCommand = {
  names: ['_shardsvrRenameCollectionParticipant'],
  retryableWrite: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrRenameCollectionParticipant');
    criticalSections(ctx, '_shardsvrRenameCollectionParticipant');
    const from = `${ctx.db}.${collectionArg(cmd)}`;
    const to = requireString(cmd, 'to');
    const { storage, local } = ctx.node;
    const target = storage.getCollection(to);
    if (target !== undefined && !valuesEqual(target.entry.uuid, cmd.sourceUUID)) dropCollectionLocally(ctx.node, to);
    const source = storage.getCollection(from);
    if (source !== undefined && valuesEqual(source.entry.uuid, cmd.sourceUUID) && cmd.renameSource !== false) {
      ctx.node.logger.info({ c: 'SHARDING', from, to, uuid: source.entry.uuid }, 'DDL participant renamed its copy');
      storage.renameCollection(from, to);
      local.write((w) => w.update(RANGE_DELETIONS_NS, { nss: from }, { $set: { nss: to } }, { multi: true }));
    }
    ctx.node.sharding.metadata.forget(from);
    ctx.node.sharding.metadata.forget(to);
    return { ok: 1 };
  },
};

// {_shardsvrCollModParticipant: coll, collModRequest}: collMod of this shard's copy, answered as
// collMod answers.
export const collModParticipantCommand: ShardCommand = {
  names: ['_shardsvrCollModParticipant'],
  retryableWrite: true,
  run(ctx, cmd) {
    checkDDLCoordinatorSession(ctx, cmd, '_shardsvrCollModParticipant');
    criticalSections(ctx, '_shardsvrCollModParticipant');
    return collModCommand.run(ctx, { collMod: collectionArg(cmd), ...requireDoc(cmd, 'collModRequest') });
  },
};

export const ddlParticipantCommands: readonly ShardCommand[] = [
  collModParticipantCommand,
  participantBlockCommand, dropCollectionParticipantCommand, dropDatabaseParticipantCommand, renameCollectionParticipantCommand,
];
