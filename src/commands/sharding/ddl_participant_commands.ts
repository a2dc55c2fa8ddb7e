import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import { collectionArg, requireDoc, requireString } from '../args.js';
import { dropCollectionLocally, dropDatabaseLocally } from '../ddl/collections.js';
import type { CollectionCriticalSections } from '../../shard/collection_critical_section.js';

// The participant side of the DDL coordinators (src/ddl), on every shard.

function criticalSections(ctx: CommandContext, name: string): CollectionCriticalSections {
  const ddl = ctx.node.ddl;
  if (ddl === undefined || !ctx.node.sharding.state.enabled) {
    throw new MongoError(ErrorCodes.IllegalOperation, `${name} can only be run on a shard that belongs to a cluster`);
  }
  return ddl.criticalSections;
}

// {_shardsvrParticipantBlock: coll, blockType: 'ReadsAndWrites' | 'Writes' | 'Unblock', reason}:
// takes or releases the collection's critical section, persisted with its reason. Unblocking
// forgets the collection's metadata first, so that the requests it held check their version
// against what the DDL changed.
export const participantBlockCommand: CommandDefinition = {
  names: ['_shardsvrParticipantBlock'],
  async run(ctx, cmd) {
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

// {_shardsvrDropCollectionParticipant: coll}: the shard's copy, its range deletion tasks and its
// cached metadata go; nothing there is no error (the drop runs again after a crash).
export const dropCollectionParticipantCommand: CommandDefinition = {
  names: ['_shardsvrDropCollectionParticipant'],
  run(ctx, cmd) {
    criticalSections(ctx, '_shardsvrDropCollectionParticipant');
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    dropCollectionLocally(ctx.node, ns);
    ctx.node.sharding.metadata.forget(ns);
    return { ok: 1 };
  },
};

// {_shardsvrDropDatabaseParticipant: 1}: every collection of the database the shard holds.
export const dropDatabaseParticipantCommand: CommandDefinition = {
  names: ['_shardsvrDropDatabaseParticipant'],
  run(ctx) {
    criticalSections(ctx, '_shardsvrDropDatabaseParticipant');
    dropDatabaseLocally(ctx.node, ctx.db);
    return { ok: 1 };
  },
};

export const ddlParticipantCommands: readonly CommandDefinition[] = [
  participantBlockCommand, dropCollectionParticipantCommand, dropDatabaseParticipantCommand,
];
