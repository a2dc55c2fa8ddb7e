import { Timestamp } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { OngoingQueries } from '../../shard/ongoing_queries.js';
import type { OwnershipFilter } from '../../shard/ownership_filter.js';
import { SnapshotView } from '../../storage/snapshot_view.js';
import type { StorageEngine } from '../../storage/storage_engine.js';
import { TransactionWriteSet } from '../../storage/transaction_write_set.js';
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
// A read at a cluster time (a snapshot read, a transaction's statement) sees the ranges this shard
// owned then: its snapshot holds their documents, those of a range donated since included.
// One RoutedRead per ownership snapshot, made on its first read: each read then costs a look-up.
export function routedRead(ctx: CommandContext, cmd: Doc, ns: string): RoutedRead {
  const current = cmd.shardVersion === undefined ? undefined : ctx.node.sharding.metadata.ownership(ns);
  if (!current) return UNFILTERED;
  const at = readTime(ctx.node.storage);
  const ownership = at === undefined ? current : current.atClusterTime(at);
  let read = readsByOwnership.get(ownership);
  if (read === undefined) readsByOwnership.set(ownership, read = snapshotRead(ctx.node.sharding.queries, ns, ownership));
  return read;
}

const readsByOwnership = new WeakMap<OwnershipFilter, RoutedRead>();

// The cluster time the running command reads at, from the view of the store it reads through (a
// snapshot read's, a transaction's); undefined when it reads the latest data.
function readTime(storage: StorageEngine): Timestamp | undefined {
  const view = storage.kv.activeView;
  const at = view instanceof SnapshotView ? view.at : view instanceof TransactionWriteSet ? view.snapshot.at : undefined;
  return at === undefined ? undefined : new Timestamp({ t: Number(at >> 32n), i: Number(at & 0xffffffffn) });
}

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
