import type { Doc } from '../../bson/values.js';
import type { CommandContext } from '../command.js';

// A read sent by a router (it carries a shardVersion) sees only the documents in ranges this shard
// owns, by the metadata the read started with; direct connections see everything, as in mongod.
export function ownedDocuments(ctx: CommandContext, cmd: Doc, ns: string): ((doc: Doc) => boolean) | undefined {
  if (cmd.shardVersion === undefined) return undefined;
  const ownership = ctx.node.sharding.metadata.ownership(ns);
  if (!ownership || ownership.ownsEverything()) return undefined;
  return (doc) => ownership.ownsDocument(doc);
}
