import { letVariables } from '../../command_layer/let_variables.js';
import { Long } from 'bson';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalBool, optionalDoc, optionalNonNegative } from '../../command_layer/args.js';
import { prepareFind } from '../../query/exec/find_query.js';
import { OPLOG_NS } from '../../oplog/oplog_entry.js';
import { withResumableLabel } from '../../change_streams/resumable_errors.js';
import { cursorReply } from '../../command_layer/cursor_manager.js';
import { routedRead } from './orphan_filter.js';
import { deserializeDocument, isPlainObject, type Doc } from '../../bson/values.js';
import { idHackPlan, type QueryPlan } from '../../query/plan/query_planner.js';
import type { Collection, StorageEngine } from '../../storage/storage_engine.js';
import { RawDocument } from '../../wire/raw_bson.js';
import { parseCollation } from '../../bson/collation.js';
import { commandCollation } from './collection_collation.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { checkFindOptions, tailableMode } from '../../query/query_request_helper.js';
import { checkCollectionUUID, collectionUUIDArg } from './collection_uuid.js';
import { tailableFind } from './tailable_find.js';
import { TailableScan } from '../../query/exec/tailable_scan.js';
import { oplogScanStart } from '../../oplog/oplog_reads.js';

export function parseFind(cmd: Doc) {
  const limit = optionalNonNegative(cmd, 'limit');
  const skip = optionalNonNegative(cmd, 'skip');
  const batchSize = optionalNonNegative(cmd, 'batchSize');
  const hint = cmd.hint;
  if (hint !== undefined && typeof hint !== 'string' && !isPlainObject(hint)) {
    throw new MongoError(ErrorCodes.FailedToParse, 'hint must be either a string or nested object');
  }
  refuseUnimplemented(cmd);
  // Accepted as mongod accepts them, with nothing to do here: oplogReplay is ignored since 4.4,
  // readOnce is a storage cache hint, allowPartialResults only matters to a router,
  // allowSpeculativeMajorityRead permits a majority read that a node without replication answers
  // from its own data, mirrored marks a read a primary mirrors to its secondaries.
  for (const flag of ['oplogReplay', 'readOnce', 'allowPartialResults', 'allowSpeculativeMajorityRead', 'mirrored']) optionalBool(cmd, flag);
  const req = {
    filter: optionalDoc(cmd, 'filter') ?? {},
    sort: optionalDoc(cmd, 'sort'),
    projection: optionalDoc(cmd, 'projection'),
    limit: limit === undefined ? undefined : Math.trunc(limit),
    skip: skip === undefined ? undefined : Math.trunc(skip),
    batchSize: batchSize === undefined ? undefined : Math.trunc(batchSize),
    hint,
    min: optionalDoc(cmd, 'min'),
    max: optionalDoc(cmd, 'max'),
    singleBatch: optionalBool(cmd, 'singleBatch') ?? false,
    variables: letVariables(cmd),
    collation: parseCollation(cmd.collation),
    tailable: tailableMode(optionalBool(cmd, 'tailable') ?? false, optionalBool(cmd, 'awaitData') ?? false),
    returnKey: optionalBool(cmd, 'returnKey') ?? false,
    showRecordId: optionalBool(cmd, 'showRecordId') ?? false,
    noCursorTimeout: optionalBool(cmd, 'noCursorTimeout') ?? false,
    allowDiskUse: optionalBool(cmd, 'allowDiskUse'),
    collectionUUID: collectionUUIDArg(cmd, 'find'),
  };
  checkFindOptions(req);
  return req;
}

// Internal options of resumable scans (resharding, initial sync) and Queryable Encryption, which
// docshard does not have: refused rather than ignored.
function refuseUnimplemented(cmd: Doc): void {
  const resumable = optionalBool(cmd, '$_requestResumeToken') === true ? '$_requestResumeToken' : ['$_resumeAfter', '$_startAt'].find((f) => Object.keys(optionalDoc(cmd, f) ?? {}).length > 0);
  if (resumable !== undefined) throw new MongoError(ErrorCodes.NotImplemented, `find option ${resumable} is not implemented by docshard (resumable collection scans)`);
  if (optionalDoc(cmd, 'encryptionInformation') !== undefined) throw new MongoError(ErrorCodes.NotImplemented, 'docshard does not implement Queryable Encryption (find.encryptionInformation)');
}

export const findCommand: CommandDefinition = {
  names: ['find'],
  run(ctx, cmd) {
    const collName = collectionArg(cmd);
    const ns = `${ctx.db}.${collName}`;
    const { storage, cursors } = ctx.node;
    const req = { ...parseFind(cmd), collation: commandCollation(storage, ns, cmd.collation) };
    const read = routedRead(ctx, cmd, ns);
    const coll = storage.getCollection(ns);
    if (req.collectionUUID !== undefined) checkCollectionUUID(storage, ctx.db, collName, coll, req.collectionUUID);
    if (req.tailable !== 'normal') return tailableFind(ctx, ns, coll, { ...req, tailable: req.tailable, keep: read.keep });
    const oneBatch = req.singleBatch || (req.limit !== undefined && req.limit > 0 && req.limit <= (req.batchSize ?? 101));
    // The oplog read from a time (a fetcher's, a rollback's) seeks to it, in ts order.
    const oplogStart = coll === undefined || req.sort !== undefined || req.hint !== undefined ? undefined : oplogScanStart(storage, coll, req.filter);
    if (oplogStart !== undefined) {
      const scan = new TailableScan(storage, coll!, { ...req, keep: read.keep }, oplogStart);
      return cursorReply(ns, cursors.firstBatch(ns, read.track(scan), req.batchSize, oneBatch, { noCursorTimeout: req.noCursorTimeout }), 'firstBatch');
    }
    const express = coll === undefined ? undefined : expressPlan(req, coll);
    if (coll !== undefined && express !== undefined) {
      const docs = read.track(idLookup(storage, coll, express, read.keep));
      return cursorReply(ns, { docs: Array.isArray(docs) ? docs : [...docs], cursorId: Long.ZERO }, 'firstBatch');
    }
    const prepared = prepareFind(storage, coll, { ...req, keep: read.keep });
    const batch = cursors.firstBatch(ns, read.track(prepared.results), req.batchSize, oneBatch, { noCursorTimeout: req.noCursorTimeout });
    return cursorReply(ns, batch, 'firstBatch');
  },
};

type FindRequest = ReturnType<typeof parseFind>;

// MongoDB's express path: a bare `_id` equality with nothing to sort, skip, project or collate
// is one point read whose result always fits the first batch, so it needs no plan stages and no
// cursor. batchSize 0 asks for an empty first batch and an open cursor: the general path.
function expressPlan(req: FindRequest, coll: Collection): (QueryPlan & { kind: 'IDHACK' }) | undefined {
  if (req.sort !== undefined || req.projection !== undefined || req.skip || req.collation !== undefined || req.batchSize === 0) return undefined;
  if (req.returnKey || req.showRecordId) return undefined;
  return idHackPlan(req, coll.indexes);
}

function idLookup(storage: StorageEngine, coll: Collection, plan: QueryPlan & { kind: 'IDHACK' }, keep: ((doc: Doc) => boolean) | undefined): RawDocument[] {
  const recordId = plan.index.lookupUnique(storage.kv, plan.keyString);
  const bytes = recordId === undefined ? undefined : storage.getRecord(coll, recordId);
  if (bytes === undefined || (keep !== undefined && !keep(deserializeDocument(bytes)))) return [];
  return [new RawDocument(bytes)];
}

// The test fail point that fails a getMore once it has its cursor, with data.errorCode.
const FAIL_GET_MORE_AFTER_CHECKOUT = 'failGetMoreAfterCursorCheckout';

export const getMoreCommand: CommandDefinition = {
  names: ['getMore'],
  run(ctx, cmd) {
    const id = cmd.getMore;
    if (!(id instanceof Long)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'getMore.getMore' is the wrong type, expected type 'long'");
    const coll = cmd.collection;
    if (typeof coll !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'getMore.collection' is the wrong type, expected type 'string'");
    const batchSize = optionalNonNegative(cmd, 'batchSize');
    const ns = `${ctx.db}.${coll}`;
    // 0 means none, as mongod reads it.
    const maxTimeMS = optionalNonNegative(cmd, 'maxTimeMS') || undefined;
    const { cursors, failPoints } = ctx.node;
    const changeStream = cursors.isChangeStream(id);
    const labelled = (err: unknown): never => {
      throw changeStream ? withResumableLabel(err) : err;
    };
    try {
      // Not the secondaries' oplog fetchers' getMores: the fail point is for a test's own cursors.
      const failure = cursors.ownerOf(id) !== undefined && ns !== OPLOG_NS ? failPoints.shouldFire(FAIL_GET_MORE_AFTER_CHECKOUT) : undefined;
      if (failure !== undefined) {
        // As a getMore that fails in mongod: its cursor is gone.
        cursors.kill(id);
        throw new MongoError(Number(failure.errorCode ?? ErrorCodes.InternalError), `Failing command via '${FAIL_GET_MORE_AFTER_CHECKOUT}' failpoint`);
      }
      const batch = cursors.getMore(id, ns, batchSize, maxTimeMS);
      return batch instanceof Promise ? batch.then((b) => cursorReply(ns, b, 'nextBatch'), labelled) : cursorReply(ns, batch, 'nextBatch');
    } catch (err) {
      return labelled(err);
    }
  },
};

export const killCursorsCommand: CommandDefinition = {
  names: ['killCursors'],
  run(ctx, cmd) {
    collectionArg(cmd);
    const ids = cmd.cursors;
    if (!Array.isArray(ids)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'killCursors.cursors' is the wrong type, expected type 'array'");
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      if (!(id instanceof Long)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'killCursors.cursors' has an element of the wrong type, expected type 'long'");
      (ctx.node.cursors.kill(id) ? killed : notFound).push(id);
    }
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  },
};
