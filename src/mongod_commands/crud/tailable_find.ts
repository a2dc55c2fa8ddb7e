import { Long } from 'bson';
import type { Doc } from '../../bson/values.js';
import type { FindSpec } from '../../query/exec/find_query.js';
import { TailableScan } from '../../query/exec/tailable_scan.js';
import { notCappedError, type TailableMode } from '../../query/query_request_helper.js';
import type { Collection } from '../../storage/storage_engine.js';
import type { CommandContext } from '../command.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { oplogScanStart } from '../../oplog/oplog_reads.js';

export interface TailableFindRequest extends FindSpec {
  tailable: Exclude<TailableMode, 'normal'>;
  batchSize: number | undefined;
  noCursorTimeout: boolean;
}

// A tailable find: only on a capped collection, read in insertion order whatever the hint, and
// its cursor kept open at the end of the data so that getMores return what is inserted later.
// Nothing to tail (no collection) answers an empty, closed cursor, as mongod does; so does an
// empty capped collection, where mongod keeps no cursor either (SERVER-13955).
export function tailableFind(ctx: CommandContext, ns: string, coll: Collection | undefined, req: TailableFindRequest): Doc {
  if (coll === undefined) return cursorReply(ns, { docs: [], cursorId: Long.ZERO }, 'firstBatch');
  if (coll.capped === undefined) {
    throw notCappedError({ ns, filter: req.filter, sort: req.sort, projection: req.projection, batchSize: req.batchSize, limit: req.limit, skip: req.skip });
  }
  const { storage, cursors, cappedInserts } = ctx.node;
  const scan = new TailableScan(storage, coll, req, oplogScanStart(storage, coll, req.filter));
  const batch = cursors.firstBatch(ns, scan, req.batchSize, false, {
    noCursorTimeout: req.noCursorTimeout,
    tail: {
      keepOpen: storage.stats.get(coll.entry.id).count > 0,
      awaitData: req.tailable === 'tailableAndAwaitData',
      restore: () => scan.restore(),
      waitForData: (timeoutMs, signal) => cappedInserts.waitForInsert(ns, timeoutMs, signal),
    },
  });
  return cursorReply(ns, batch, 'firstBatch');
}
