import { isPlainObject, type Doc } from '../../bson/values.js';
import type { CommandContext } from '../command.js';

// A committed write unit is already in the data file (it survives kill -9 of the process);
// `j: true` additionally waits for the fsync, as journaled acknowledgement does in mongod.
export async function awaitWriteConcern(ctx: CommandContext, cmd: Doc): Promise<void> {
  const wc = cmd.writeConcern;
  if (isPlainObject(wc) && (wc.j === true || wc.fsync === true)) await ctx.node.storage.flushed();
}
