import { valuesEqual } from '../../bson/compare.js';
import { Binary, Timestamp } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { requireDoc, requireDocArray, requireString } from '../../command_layer/args.js';
import {
  dropTemporaryCollection, RECIPIENT_DOCS_NS, type RangeOwner, type ReshardingRecipient, type ReshardingRecipientService,
} from '../../resharding/resharding_recipient.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { migratedHistoryToBSON } from '../../sessions/session_migration.js';
import type { CommandContext, CommandDefinition, ShardServices } from '../command.js';
import { dropCollectionLocally } from '../ddl/collections.js';
import { shardOnlyMessage } from './shard_only_refusals.js';

// The shards' side of a resharding (src/resharding): the recipients, driven by the config
// server's ReshardingCoordinator (MongoDB's recipients learn their part from the coordinator's
// documents, docshard's coordinator tells them with these commands), and what a recipient asks a
// donor beyond its documents and change stream: the sessions' history.
type ShardCommand = CommandDefinition<ShardServices>;

function recipients(ctx: CommandContext<ShardServices>, name: string): ReshardingRecipientService {
  if (!ctx.node.sharding.state.enabled) throw new MongoError(ErrorCodes.IllegalOperation, shardOnlyMessage(name));
  return ctx.node.reshardingRecipients;
}

function uuidArg(cmd: Doc, field: string): Binary {
  const v = cmd[field];
  if (!(v instanceof Binary) || v.sub_type !== Binary.SUBTYPE_UUID) throw new MongoError(ErrorCodes.TypeMismatch, `${field} must be a UUID`);
  return v;
}

function ranges(cmd: Doc, field: string): RangeOwner[] {
  return requireDocArray(cmd, field).map((r) => {
    if (!isPlainObject(r.min) || !isPlainObject(r.max) || typeof r.shard !== 'string') throw new MongoError(ErrorCodes.BadValue, `${field} must hold {min, max, shard}`);
    return { min: r.min, max: r.max, shard: r.shard };
  });
}

function running(ctx: CommandContext<ShardServices>, cmd: Doc, name: string): ReshardingRecipient {
  const recipient = recipients(ctx, name).get(uuidArg(cmd, 'reshardingUUID'));
  if (recipient === undefined) throw new MongoError(ErrorCodes.NoSuchReshardCollection, 'no resharding recipient of that UUID on this shard');
  return recipient;
}

// {_shardsvrReshardingRecipientStart: ns, reshardingUUID, ...}: creates the temporary collection
// and starts cloning in the background; sent again, it joins the recipient already running.
export const reshardingRecipientStartCommand: ShardCommand = {
  names: ['_shardsvrReshardingRecipientStart'],
  adminOnly: true,
  run(ctx, cmd) {
    const service = recipients(ctx, '_shardsvrReshardingRecipientStart');
    const cloneTimestamp = cmd.cloneTimestamp;
    if (!(cloneTimestamp instanceof Timestamp)) throw new MongoError(ErrorCodes.TypeMismatch, 'cloneTimestamp must be a timestamp');
    service.start({
      ns: requireString(cmd, '_shardsvrReshardingRecipientStart'), reshardingUUID: uuidArg(cmd, 'reshardingUUID'), sourceUUID: uuidArg(cmd, 'sourceUUID'),
      tempNs: requireString(cmd, 'tempNs'), sourceKey: requireDoc(cmd, 'sourceKey'), reshardingKey: requireDoc(cmd, 'reshardingKey'), cloneTimestamp,
      donors: requireDocArray(cmd, 'donors').map((d) => ({ shardId: requireString(d, 'shardId'), host: requireString(d, 'host') })),
      sourceChunks: ranges(cmd, 'sourceChunks'), recipientChunks: ranges(cmd, 'recipientChunks'), shardId: ctx.node.sharding.state.shardName!,
    });
    return { ok: 1 };
  },
};

export const reshardingRecipientStatusCommand: ShardCommand = {
  names: ['_shardsvrReshardingRecipientStatus'],
  adminOnly: true,
  run(ctx, cmd) {
    return { ...running(ctx, cmd, '_shardsvrReshardingRecipientStatus').status(), ok: 1 };
  },
};

// Once every donor blocks writes: applies what each donor wrote up to its cluster time as it
// answers now (every write it admitted took a time at or before it), then answers.
export const reshardingRecipientFinishCommand: ShardCommand = {
  names: ['_shardsvrReshardingRecipientFinish'],
  adminOnly: true,
  async run(ctx, cmd) {
    const recipient = running(ctx, cmd, '_shardsvrReshardingRecipientFinish');
    const finalTimes = new Map<string, Timestamp>();
    await Promise.all(recipient.params.donors.map(async (d) => {
      const hello = checkOk(await ctx.node.client.command(d.host, 'admin', { hello: 1 }));
      finalTimes.set(d.shardId, donorTime(hello));
    }));
    await recipient.finish(finalTimes);
    return { ok: 1 };
  },
};

// The later of the donor's cluster time and its last write.
function donorTime(hello: Doc): Timestamp {
  const times: Timestamp[] = [];
  const clusterTime = isPlainObject(hello.$clusterTime) ? hello.$clusterTime.clusterTime : undefined;
  if (clusterTime instanceof Timestamp) times.push(clusterTime);
  const lastWrite = isPlainObject(hello.lastWrite) && isPlainObject(hello.lastWrite.opTime) ? hello.lastWrite.opTime.ts : undefined;
  if (lastWrite instanceof Timestamp) times.push(lastWrite);
  if (times.length === 0) throw new MongoError(ErrorCodes.IllegalOperation, 'a resharding donor must be a replica set member');
  return times.reduce((a, b) => (b.greaterThan(a) ? b : a));
}

// {_shardsvrReshardingRecipientCommit: ns, reshardingUUID, tempNs}, after the coordinator's
// commit, under the critical section on the source: the temporary collection takes the source's
// name (the shard's old copy dropped). Sent again after it ran, it finds nothing left to rename.
export const reshardingRecipientCommitCommand: ShardCommand = {
  names: ['_shardsvrReshardingRecipientCommit'],
  adminOnly: true,
  run(ctx, cmd) {
    const service = recipients(ctx, '_shardsvrReshardingRecipientCommit');
    const ns = requireString(cmd, '_shardsvrReshardingRecipientCommit');
    const uuid = uuidArg(cmd, 'reshardingUUID');
    const tempNs = requireString(cmd, 'tempNs');
    const recipient = service.get(uuid);
    const dropSource = (source: string): void => void dropCollectionLocally(ctx.node, source);
    if (recipient !== undefined) recipient.commit(dropSource);
    else commitWithoutRecipient(ctx.node, ns, tempNs, uuid, dropSource);
    service.forget(uuid);
    ctx.node.sharding.metadata.forget(ns);
    ctx.node.logger.info({ c: 'RESHARD', ns, tempNs }, 'resharding recipient renamed its temporary collection over the source');
    return { ok: 1 };
  },
};

// No recipient and no state document: the commit ran already (the document goes after the rename),
// and the coordinator, crashed before it heard the answer, sends it again; the temporary
// collection is looked for all the same.
function commitWithoutRecipient(node: ShardServices, ns: string, tempNs: string, uuid: Binary, dropSource: (ns: string) => void): void {
  const temp = node.storage.getCollection(tempNs);
  if (temp !== undefined && valuesEqual(temp.entry.uuid, uuid)) {
    if (node.storage.getCollection(ns) !== undefined) dropSource(ns);
    node.storage.renameCollection(tempNs, ns);
  }
  node.local.write((w) => w.delete(RECIPIENT_DOCS_NS, { _id: uuid }));
}

// {_shardsvrReshardingRecipientAbort: ns, reshardingUUID, tempNs}: the recipient stops and its
// temporary collection goes; nothing there is no error.
export const reshardingRecipientAbortCommand: ShardCommand = {
  names: ['_shardsvrReshardingRecipientAbort'],
  adminOnly: true,
  run(ctx, cmd) {
    const service = recipients(ctx, '_shardsvrReshardingRecipientAbort');
    const uuid = uuidArg(cmd, 'reshardingUUID');
    const tempNs = requireString(cmd, 'tempNs');
    const recipient = service.get(uuid);
    if (recipient !== undefined) recipient.abort();
    else {
      dropTemporaryCollection(ctx.node, tempNs, uuid);
      ctx.node.local.write((w) => w.delete(RECIPIENT_DOCS_NS, { _id: uuid }));
    }
    service.forget(uuid);
    return { ok: 1 };
  },
};

// {_shardsvrReshardingDonorSessionHistory: ns, after?}: a donor's retryable-write history of the
// collection, every statement of it, in batches from `after` (the migration's _getNextSessionMods
// without a range); a recipient asks once the donor holds writes.
export const reshardingDonorSessionHistoryCommand: ShardCommand = {
  names: ['_shardsvrReshardingDonorSessionHistory'],
  adminOnly: true,
  run(ctx, cmd) {
    recipients(ctx, '_shardsvrReshardingDonorSessionHistory');
    const batch = ctx.node.sessionCatalog.historyForMigration(requireString(cmd, '_shardsvrReshardingDonorSessionHistory'), () => true, cmd.after, SESSION_HISTORY_BATCH);
    return { entries: batch.entries.map(migratedHistoryToBSON), ...(batch.last !== undefined ? { last: batch.last } : {}), done: batch.done, ok: 1 };
  },
};

const SESSION_HISTORY_BATCH = 1000;

export const reshardingRecipientCommands: readonly ShardCommand[] = [
  reshardingDonorSessionHistoryCommand, reshardingRecipientStartCommand, reshardingRecipientStatusCommand, reshardingRecipientFinishCommand,
  reshardingRecipientCommitCommand, reshardingRecipientAbortCommand,
];
