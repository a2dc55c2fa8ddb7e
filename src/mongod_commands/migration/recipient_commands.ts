import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { MigrationDestinationManager, statusReply } from '../../migration/migration_destination_manager.js';
import type { RecipientCommand } from '../../migration/recipient_effects.js';
import { recipientInitialState, recipientStatus, type RecipientEvent } from '../../migration/recipient_state_machine.js';
import type { CommandContext, CommandDefinition } from '../command.js';
import type { MigrationNode } from '../../migration/migration_node.js';
import { requireDoc, requireString } from '../../command_layer/args.js';
import { requireUuid } from './donor_commands.js';
import type { Doc } from '../../bson/values.js';

// What a migration's commands read of a node: its migration runtime and what the drivers use,
// all that the simulator's shards have (test/sim/migration_world.ts).
type MigrationCommand = CommandDefinition<MigrationNode>;

// Sent by the donor: start receiving [min, max) of ns. Replies once the recipient's range deletion
// task is on disk; the clone then runs in the background.
export const recvChunkStartCommand: MigrationCommand = {
  names: ['_recvChunkStart'],
  adminOnly: true,
  async run(ctx, cmd) {
    const shardName = ctx.node.sharding.state.shardName;
    const toShardName = requireString(cmd, 'toShardName');
    if (shardName !== toShardName) throw new MongoError(ErrorCodes.IllegalOperation, `this shard is ${shardName}, not ${toShardName}`);
    const request = {
      migrationId: requireUuid(cmd, 'sessionId'), nss: requireString(cmd, '_recvChunkStart'), collectionUuid: requireUuid(cmd, 'uuid'),
      donorShardId: requireString(cmd, 'fromShardName'), recipientShardId: toShardName, range: { min: requireDoc(cmd, 'min'), max: requireDoc(cmd, 'max') },
      ...(cmd.shardKeyPattern !== undefined ? { keyPattern: requireDoc(cmd, 'shardKeyPattern') } : {}),
    };
    const { manager, status } = await MigrationDestinationManager.start(ctx.node, request, requireString(cmd, 'from'));
    return { ...statusReply(manager, status), started: true, ok: 1 };
  },
};

export const recvChunkStatusCommand: MigrationCommand = {
  names: ['_recvChunkStatus'],
  adminOnly: true,
  run: (ctx, cmd) => forward(ctx, cmd, '_recvChunkStatus', 'recvChunkStatus'),
};

export const recvChunkCommitCommand: MigrationCommand = {
  names: ['_recvChunkCommit'],
  adminOnly: true,
  run: (ctx, cmd) => forward(ctx, cmd, '_recvChunkCommit', 'recvChunkCommit'),
};

export const recvChunkAbortCommand: MigrationCommand = {
  names: ['_recvChunkAbort'],
  adminOnly: true,
  run: (ctx, cmd) => forward(ctx, cmd, '_recvChunkAbort', 'recvChunkAbort'),
};

// Hands the command to the machine of that migration. With none (another migration, or none since
// a restart) only an abort succeeds: there is nothing left to stop.
async function forward(ctx: CommandContext<MigrationNode>, cmd: Doc, name: RecipientCommand, type: 'recvChunkStatus' | 'recvChunkCommit' | 'recvChunkAbort'): Promise<Doc> {
  const migrationId = requireUuid(cmd, 'sessionId');
  const manager = ctx.node.migrations.destination;
  if (manager === undefined || !manager.request.migrationId.equals(migrationId)) {
    if (type === 'recvChunkAbort') return { active: false, state: recipientStatus(recipientInitialState()).state, ok: 1 };
    const active = manager === undefined || manager.done ? 'none' : manager.request.migrationId.toHexString();
    throw new MongoError(ErrorCodes.OperationFailed, `migration session id mismatch: requested ${migrationId.toHexString()}, active ${active}`);
  }
  const event: RecipientEvent = { type, migrationId };
  const status = await manager.command(name, event);
  return { ...statusReply(manager, status), ok: 1 };
}

export const recipientCommands: readonly MigrationCommand[] = [recvChunkStartCommand, recvChunkStatusCommand, recvChunkCommitCommand, recvChunkAbortCommand];
