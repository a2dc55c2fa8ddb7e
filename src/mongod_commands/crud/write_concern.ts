import { isPlainObject, type Doc } from '../../bson/values.js';
import type { CommandContext } from '../command.js';

// A committed write unit is already in the data file (it survives kill -9 of the process);
// `j: true` additionally waits for the fsync, as journaled acknowledgement does in mongod. Without
// it the reply is handed back as it is, so the common write command needs no promise.
export function replyAfterWriteConcern(ctx: CommandContext, cmd: Doc, reply: Doc): Doc | Promise<Doc> {
  const wc = cmd.writeConcern;
  if (isPlainObject(wc) && (wc.j === true || wc.fsync === true)) return ctx.node.storage.flushed().then(() => reply);
  return reply;
}

// A write command's body run in the node's group commit (StorageEngine.writeGrouped: concurrent
// writes share one commit, each unit still its own), answered once committed and, for `j: true`,
// flushed.
export function groupedWriteReply(ctx: CommandContext, cmd: Doc, body: () => Doc): Promise<Doc> {
  return ctx.node.storage.writeGrouped(body).then((reply) => replyAfterWriteConcern(ctx, cmd, reply));
}
