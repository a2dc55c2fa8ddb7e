import { Long, Timestamp } from 'bson';
import { readPlainDocument } from '../bson/raw_document.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { opMsgReply, opMsgReplyOfBody } from '../command_layer/message_handler.js';
import { replyClusterTimeAt, replyTimesAt, REPLY_TIMES_LENGTH, writeTimestamp } from '../sessions/logical_time_metadata.js';
import { countWriteAttempts, forwardsSession, withRouterTimes, type GenericArguments } from './command_entry.js';
import { oneShardWriteReply } from './commands/cluster_write.js';
import { numericPointKey } from './find_fast_path.js';
import { nameIs, newElement, readElement, TYPE_ARRAY, TYPE_BOOL, TYPE_DOCUMENT, TYPE_INT64 } from './raw_elements.js';
import { commandShape, elementBounds, field, receivedDocuments, requestClusterTimeAt, shardRequest, valueBytes } from './received_command.js';
import { readRoutedCommand, type CachedRouting, type Forward } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import { invalidateNamespace, isStaleCode, versionTail } from './versioned_request.js';

// A driver's updateOne by shard key: an update of one statement {q, u, upsert?, multi: false?}
// whose filter is exactly {<single-field shard key>: <number>} (any filter on an unsharded
// collection) and whose update is a document of update operators or a replacement, planned from
// the client's message onto the one shard as bytes, as runWrite would send it (cluster_write.ts);
// the shard's reply, when it is {n, nModified, ok: 1}, passed back as bytes. planUpdate declines
// (undefined) anything else, and the message takes the message handler's path. A stale shard did
// nothing, and neither did one that refused the statement with WouldChangeOwningShard (or answered
// its retry with IncompleteTransactionHistory): the message then takes the general path, whose
// runWrite moves the document (changeOwningShard).

const UPDATES = 1;
const ORDERED = 2;
const TXN_NUMBER = 3;
const UPDATE = commandShape('update', [field('updates', TYPE_ARRAY, true), field('ordered', TYPE_BOOL, true), field('txnNumber', TYPE_INT64, false)], 'updates');
const SESSION_SLOTS = [UPDATE.lsidSlot, TXN_NUMBER];

export interface UpdatePlan extends Forward {
  ordered: boolean;
  // On a sharded collection, the chunk the filter's key is in and the update document's size
  // (auto-splitting counts bytes per chunk, as statementWrite does).
  chunk: ChunkType | undefined;
  updateBytes: number;
}

export function planUpdate(message: Buffer, caches: CachedRouting): UpdatePlan | undefined {
  const routed = readRoutedCommand(caches, message, UPDATE);
  if (routed === undefined) return undefined;
  const { command, routing } = routed;
  const ordered = valueBytes(message, command, ORDERED);
  const statements = receivedDocuments(message, command, UPDATES);
  if (statements === undefined || statements.length !== 1 || (ordered !== undefined && ordered[0]! > 1)) return undefined;
  const statement = readStatement(statements[0]!);
  if (statement === undefined) return undefined;
  let shard: string;
  let chunk: ChunkType | undefined;
  const { cm } = routing;
  if (cm === undefined) shard = routing.db.primary;
  else {
    const key = numericPointKey(cm, statement.q);
    chunk = key === undefined ? undefined : cm.chunkForNumericKey(key);
    if (chunk === undefined) return undefined;
    shard = chunk.shard;
  }
  const txnNumber = valueBytes(message, command, TXN_NUMBER);
  const generic: GenericArguments = {
    lsid: valueBytes(message, command, UPDATE.lsidSlot),
    txnNumber: txnNumber === undefined ? undefined : new Long(txnNumber.readInt32LE(0), txnNumber.readInt32LE(4)),
    $clusterTime: valueBytes(message, command, UPDATE.clusterTimeSlot),
  };
  // As runWrite sends it: a retryable write's lsid and txnNumber (forwardableWrite), then the one
  // statement's id.
  const retryable = forwardsSession(true, generic);
  const passedOn = retryable ? elementBounds(command, UPDATE, SESSION_SLOTS) : undefined;
  const tail = versionTail(routing, shard, routed.db);
  const request = shardRequest(message, command, tail, passedOn, retryable ? FIRST_STMT_ID : undefined);
  return {
    requestId: command.requestId,
    ns: routed.ns,
    routing,
    shard,
    request,
    clusterTimeAt: requestClusterTimeAt(request, tail),
    generic,
    ordered: ordered === undefined || ordered[0] === 1,
    chunk,
    updateBytes: statement.u.length,
  };
}

// {stmtIds: [0]}'s element: a one-statement batch numbered as runWrite numbers it.
const FIRST_STMT_ID = (() => {
  const doc = serializeDocument({ stmtIds: [0] });
  return doc.subarray(4, doc.length - 1);
})();

const Q = Buffer.from('q');
const U = Buffer.from('u');
const UPSERT = Buffer.from('upsert');
const MULTI = Buffer.from('multi');
const DOLLAR = 0x24;

// A statement of only q (a document), u (a document), upsert and multi (false), each at most once,
// whose documents decoding would accept as they are (the shard then judges them as it judges the
// general path's).
function readStatement(stmt: Buffer): { q: Buffer; u: Buffer } | undefined {
  const end = stmt.length - 1;
  const e = newElement();
  let q: Buffer | undefined;
  let u: Buffer | undefined;
  let upsertSeen = false;
  let multiSeen = false;
  let pos = 4;
  while (pos < end) {
    if (!readElement(stmt, pos, end, e)) return undefined;
    const { type, nameStart, nameEnd, valueStart } = e;
    if (nameIs(stmt, nameStart, nameEnd, Q) && type === TYPE_DOCUMENT && q === undefined) q = stmt.subarray(valueStart, e.end);
    else if (nameIs(stmt, nameStart, nameEnd, U) && type === TYPE_DOCUMENT && u === undefined) u = stmt.subarray(valueStart, e.end);
    else if (nameIs(stmt, nameStart, nameEnd, UPSERT) && type === TYPE_BOOL && !upsertSeen && stmt[valueStart]! <= 1) upsertSeen = true;
    else if (nameIs(stmt, nameStart, nameEnd, MULTI) && type === TYPE_BOOL && !multiSeen && stmt[valueStart] === 0) multiSeen = true;
    else return undefined;
    pos = e.end;
  }
  if (pos !== end || q === undefined || u === undefined || readPlainDocument(q) === undefined || !plainUpdate(u)) return undefined;
  return { q, u };
}

// A replacement decoding accepts as it is, or update operators each over such a document.
function plainUpdate(u: Buffer): boolean {
  // The first element's name (after the length and its type byte) tells a replacement.
  if (u.length < 6 || u[5] !== DOLLAR) return readPlainDocument(u) !== undefined;
  const end = u.length - 1;
  const e = newElement();
  let pos = 4;
  while (pos < end) {
    if (!readElement(u, pos, end, e) || u[e.nameStart] !== DOLLAR || e.type !== TYPE_DOCUMENT) return false;
    if (readPlainDocument(u.subarray(e.valueStart, e.end)) === undefined) return false;
    pos = e.end;
  }
  return pos === end;
}

// {n: <int32>, nModified: <int32>, ok: <int32 1>}, then a node's $clusterTime and operationTime.
const PLAIN_UPDATE_REPLY = serializeDocument({ n: 0, nModified: 0, ok: 1 });
const N_AT = 7;
const N_MODIFIED_AT = N_AT + 4 + 1 + 'nModified'.length + 1;
const TIMES_AT = PLAIN_UPDATE_REPLY.length - 1;

// Whether the reply is exactly {n, nModified, ok: 1, $clusterTime, operationTime}: an update the
// shard ran without a write error, nothing upserted and no statement retried, which is also the
// router's reply once its $clusterTime is the router's.
function plainUpdateReply(reply: Buffer): boolean {
  return reply.length === TIMES_AT + REPLY_TIMES_LENGTH
    && reply.compare(PLAIN_UPDATE_REPLY, 4, N_AT, 4, N_AT) === 0
    && reply.compare(PLAIN_UPDATE_REPLY, N_AT + 4, N_MODIFIED_AT, N_AT + 4, N_MODIFIED_AT) === 0
    && reply.compare(PLAIN_UPDATE_REPLY, N_MODIFIED_AT + 4, TIMES_AT, N_MODIFIED_AT + 4, TIMES_AT) === 0
    && replyTimesAt(reply) === TIMES_AT;
}

// The write errors runWrite answers itself (changeOwningShard): the general path must send it.
const GENERAL_PATH_WRITE_ERRORS = new Set<unknown>([ErrorCodes.WouldChangeOwningShard, ErrorCodes.IncompleteTransactionHistory]);

// The router's reply to a planned update from the shard's, as runWrite answers it: a plain reply
// as it is but for its $clusterTime, any other as oneShardWriteReply shapes it. Undefined when
// the general path must answer: a stale shard's (its routing then invalidated), or a write error
// changeOwningShard answers.
export function answerUpdate(router: RouterServices, plan: UpdatePlan, reply: Buffer): Buffer | undefined {
  const { routing } = plan;
  if (plainUpdateReply(reply)) {
    if (routing.cm !== undefined && plan.chunk !== undefined) router.chunkSplitter.noteStoredUpdate(routing.cm, plan.chunk, plan.updateBytes);
    answered(router, plan, PLAIN_REPLY);
    // The router's $clusterTime over the shard's; the operationTime, the write's, stays.
    writeTimestamp(reply, replyClusterTimeAt(TIMES_AT), router.clock.now());
    return opMsgReplyOfBody(reply, plan.requestId);
  }
  let decoded: Doc;
  try {
    decoded = deserializeDocument(reply);
  } catch (err) {
    return updateFailed(router, plan, err);
  }
  if (decoded.ok !== 1 && isStaleCode(decoded.code)) {
    invalidateNamespace(router, plan.ns);
    return undefined;
  }
  const writeErrors = Array.isArray(decoded.writeErrors) ? decoded.writeErrors as Doc[] : [];
  // runWrite makes a failed command its statement's write error, so either place counts.
  if ((decoded.ok !== 1 && GENERAL_PATH_WRITE_ERRORS.has(decoded.code)) || writeErrors.some((e) => GENERAL_PATH_WRITE_ERRORS.has(e.code))) return undefined;
  if (routing.cm !== undefined && plan.chunk !== undefined && decoded.ok === 1 && writeErrors.length === 0) router.chunkSplitter.noteStoredUpdate(routing.cm, plan.chunk, plan.updateBytes);
  const operationTime = decoded.operationTime instanceof Timestamp ? decoded.operationTime : undefined;
  return opMsgReply(withRouterTimes(router, answered(router, plan, oneShardWriteReply('update', 1, plan.ordered, decoded)), operationTime), plan.requestId);
}

const PLAIN_REPLY: Doc = Object.freeze({ ok: 1 });

// runGroup's answer when the send failed or the reply did not decode: the statement failed with a
// MongoError, anything else the dispatcher's error reply.
export function updateFailed(router: RouterServices, plan: UpdatePlan, err: unknown): Buffer {
  const reply = err instanceof MongoError ? oneShardWriteReply('update', 1, plan.ordered, err) : routerErrorReply(router, err);
  return opMsgReply(withRouterTimes(router, answered(router, plan, reply)), plan.requestId);
}

function answered(router: RouterServices, plan: UpdatePlan, reply: Doc): Doc {
  router.fastPaths.update += 1;
  countWriteAttempts(router.opcounters, 'update', 1, plan.ordered, reply);
  return reply;
}
