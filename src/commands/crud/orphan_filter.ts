import type { Doc } from '../../bson/values.js';
import type { OngoingQueries } from '../../shard/ongoing_queries.js';
import type { OwnershipFilter } from '../../shard/ownership_filter.js';
import type { CommandContext } from '../command.js';

export interface RoutedRead {
  // Documents the read may see; undefined when it may see all.
  readonly keep: ((doc: Doc) => boolean) | undefined;
  // The read's results, counted as an ongoing query while they are being consumed, so a range
  // this shard gives away is not deleted under a cursor that still owns it.
  track<T>(results: Iterable<T>): Iterable<T>;
}

const UNFILTERED: RoutedRead = { keep: undefined, track: (results) => results };

// A read sent by a router (it carries a shardVersion) sees only the documents in ranges this shard
// owns, by the metadata the read started with; direct connections see everything, as in mongod.
// One RoutedRead per ownership snapshot, made on its first read: each read then costs a look-up.
export function routedRead(ctx: CommandContext, cmd: Doc, ns: string): RoutedRead {
  const ownership = cmd.shardVersion === undefined ? undefined : ctx.node.sharding.metadata.ownership(ns);
  if (!ownership) return UNFILTERED;
  let read = readsByOwnership.get(ownership);
  if (read === undefined) readsByOwnership.set(ownership, read = snapshotRead(ctx.node.sharding.queries, ns, ownership));
  return read;
}

const readsByOwnership = new WeakMap<OwnershipFilter, RoutedRead>();

function snapshotRead(queries: OngoingQueries, ns: string, ownership: OwnershipFilter): RoutedRead {
  return {
    keep: ownership.ownsEverything() ? undefined : (doc) => ownership.ownsDocument(doc),
    // Results already in an array have been read in full: nothing of theirs is left for a range
    // deletion to take away, so only lazy results count as an ongoing query.
    track: (results) => Array.isArray(results) ? results : queries.track(ns, ownership, results),
  };
}

export function ownedDocuments(ctx: CommandContext, cmd: Doc, ns: string): ((doc: Doc) => boolean) | undefined {
  return routedRead(ctx, cmd, ns).keep;
}
