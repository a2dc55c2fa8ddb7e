import { Long, Timestamp } from 'bson';
import { LazyDocument, readPlainDocument } from '../bson/raw_document.js';
import { deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { opMsgReply, opMsgReplyOfBody } from '../command_layer/message_handler.js';
import { statementIds } from '../sessions/retryable_write.js';
import { Limits } from '../wire/op_codes.js';
import { countWriteAttempts, forwardsSession, withRouterTimes, type GenericArguments } from './command_entry.js';
import { oneShardWriteReply } from './commands/cluster_write.js';
import { plainInsertReply, withRouterClusterTime } from './raw_reply.js';
import { TYPE_ARRAY, TYPE_BOOL, TYPE_INT64 } from './raw_elements.js';
import { commandShape, elementBounds, field, receivedDocuments, requestClusterTimeAt, shardRequest, valueBytes } from './received_command.js';
import { readRoutedCommand, type CachedRouting, type Forward } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import { chunkForPlainInsert, topLevelKeyName } from './received_inserts.js';
import { invalidateNamespace, isStaleCode, versionTail, type Routing } from './versioned_request.js';

// A driver's insert whose documents all belong to one shard: planned from the client's message
// onto that shard's as bytes, as runWrite would send such an insert (cluster_write.ts), without
// decoding the command or building statements; the shard's reply, when it stored every document,
// passed back as bytes. planInsert declines (undefined) what it cannot plan so; the message then
// takes the message handler's path. A stale shard stored nothing, so its answer sends the message
// down that path too, after the cache is invalidated, as runWrite retries.

const DOCUMENTS = 1;
const ORDERED = 2;
const TXN_NUMBER = 3;
// txnNumber is not forwarded as the other fields are: it goes with the lsid, or not at all.
const INSERT = commandShape('insert', [field('documents', TYPE_ARRAY, true), field('ordered', TYPE_BOOL, true), field('txnNumber', TYPE_INT64, false)], 'documents');
const SESSION_SLOTS = [INSERT.lsidSlot, TXN_NUMBER];

export interface InsertPlan extends Forward {
  documents: Buffer[];
  // On a sharded collection, each document's chunk (auto-splitting counts bytes per chunk).
  chunks: ChunkType[];
  ordered: boolean;
}

export function planInsert(message: Buffer, caches: CachedRouting): InsertPlan | undefined {
  const routed = readRoutedCommand(caches, message, INSERT);
  if (routed === undefined) return undefined;
  const { command, routing } = routed;
  const ordered = valueBytes(message, command, ORDERED);
  const documents = receivedDocuments(message, command, DOCUMENTS);
  if (documents === undefined || documents.length === 0 || documents.length > Limits.maxWriteBatchSize || (ordered !== undefined && ordered[0]! > 1)) return undefined;
  const target = targetDocuments(routing, documents);
  if (target === undefined) return undefined;
  const txnNumber = valueBytes(message, command, TXN_NUMBER);
  const generic: GenericArguments = {
    lsid: valueBytes(message, command, INSERT.lsidSlot),
    txnNumber: txnNumber === undefined ? undefined : new Long(txnNumber.readInt32LE(0), txnNumber.readInt32LE(4)),
    $clusterTime: valueBytes(message, command, INSERT.clusterTimeSlot),
  };
  // After the command's own fields, as runWrite puts them: a retryable write's lsid and txnNumber
  // (forwardableWrite), then its statements' ids.
  const retryable = forwardsSession(true, generic);
  const passedOn = retryable ? elementBounds(command, INSERT, SESSION_SLOTS) : undefined;
  const tail = versionTail(routing, target.shard, routed.db);
  const request = shardRequest(message, command, tail, passedOn, retryable ? stmtIdsElement(documents.length) : undefined);
  return {
    requestId: command.requestId,
    ns: routed.ns,
    routing,
    shard: target.shard,
    request,
    clusterTimeAt: requestClusterTimeAt(request, tail),
    generic,
    documents,
    chunks: target.chunks,
    ordered: ordered === undefined || ordered[0] === 1,
  };
}

// The stmtIds element of a retryable batch of `count` statements, numbered as runWrite numbers
// them (statementIds; the shape takes no stmtId or stmtIds of the client's); kept for the small
// batches drivers send one document at a time.
function stmtIdsElement(count: number): Buffer {
  let element = STMT_IDS[count];
  if (element === undefined) {
    const doc = serializeDocument({ stmtIds: statementIds({}, count) });
    element = doc.subarray(4, doc.length - 1);
    if (count < STMT_IDS_KEPT) STMT_IDS[count] = element;
  }
  return element;
}

const STMT_IDS_KEPT = 64;
const STMT_IDS: Buffer[] = [];

// The router's reply to a planned insert from the shard's, as runWrite answers it: a plain reply
// as it is but for its $clusterTime, which becomes the router's (its operationTime, the write's,
// stays), any other as oneShardWriteReply shapes it. Undefined when the shard was stale: the
// routing is then invalidated and the general path must answer.
export function answerInsert(router: RouterServices, plan: InsertPlan, reply: Buffer): Buffer | undefined {
  const { documents, routing } = plan;
  if (plainInsertReply(reply, documents.length)) {
    if (routing.cm !== undefined) router.chunkSplitter.noteStoredInserts(routing.cm, plan.chunks, documents);
    answered(router, plan, PLAIN_REPLY);
    return opMsgReplyOfBody(withRouterClusterTime(reply, router.clock.now()), plan.requestId);
  }
  let decoded: Doc;
  try {
    decoded = deserializeDocument(reply);
  } catch (err) {
    return insertFailed(router, plan, err);
  }
  if (decoded.ok !== 1 && isStaleCode(decoded.code)) {
    invalidateNamespace(router, plan.ns);
    return undefined;
  }
  if (routing.cm !== undefined && decoded.ok === 1) router.chunkSplitter.noteReceivedInserts(routing.cm, documents.map((d) => new LazyDocument(d)), decoded);
  const operationTime = decoded.operationTime instanceof Timestamp ? decoded.operationTime : undefined;
  return opMsgReply(withRouterTimes(router, answered(router, plan, oneShardWriteReply('insert', documents.length, plan.ordered, decoded)), operationTime), plan.requestId);
}

// What counts of a plain reply: it has no write errors.
const PLAIN_REPLY: Doc = Object.freeze({ ok: 1 });

// runGroup's answer when the send failed or the reply did not decode: each document failed (the
// first if ordered) with a MongoError, anything else the dispatcher's error reply.
export function insertFailed(router: RouterServices, plan: InsertPlan, err: unknown): Buffer {
  const reply = err instanceof MongoError ? oneShardWriteReply('insert', plan.documents.length, plan.ordered, err) : routerErrorReply(router, err);
  return opMsgReply(withRouterTimes(router, answered(router, plan, reply)), plan.requestId);
}

function answered(router: RouterServices, plan: InsertPlan, reply: Doc): Doc {
  router.fastPaths.insert += 1;
  countWriteAttempts(router.opcounters, 'insert', plan.documents.length, plan.ordered, reply);
  return reply;
}

// Every document read without decoding, with exactly one _id (runWrite gives one to a document
// without; that changes its bytes), and all on one shard; on a sharded collection, with the chunk
// of each.
export function targetDocuments(routing: Routing, documents: Buffer[]): { shard: string; chunks: ChunkType[] } | undefined {
  const { cm } = routing;
  const key = cm === undefined ? undefined : topLevelKeyName(cm);
  const chunks: ChunkType[] = [];
  let shard: string | undefined;
  for (const bytes of documents) {
    const plain = readPlainDocument(bytes, key);
    if (plain === undefined || plain.ids.length !== 1) return undefined;
    let owner: string;
    if (cm === undefined) owner = routing.db.primary;
    else {
      const chunk = chunkForPlainInsert(cm, plain);
      if (chunk === undefined) return undefined;
      chunks.push(chunk);
      owner = chunk.shard;
    }
    if (shard !== undefined && owner !== shard) return undefined;
    shard = owner;
  }
  return shard === undefined ? undefined : { shard, chunks };
}
