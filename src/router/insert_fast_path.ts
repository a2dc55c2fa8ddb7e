import { LazyDocument, readPlainDocument } from '../bson/raw_document.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ConnectionInfo } from '../commands/command.js';
import { opMsgReply, opMsgReplyOfBody, type MessageHandler } from '../commands/message_handler.js';
import { Limits } from '../wire/op_codes.js';
import { oneShardInsertReply } from './commands/cluster_write.js';
import { plainInsertReply } from './raw_reply.js';
import { TYPE_ARRAY, TYPE_BOOL, TYPE_INT64 } from './raw_elements.js';
import { commandShape, field, receivedDocuments, valueBytes, type ReceivedCommand } from './received_command.js';
import { passOn, readRoutedCommand } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import { chunkForPlainInsert, topLevelKeyName } from './received_inserts.js';
import { invalidateNamespace, isStaleCode, type Routing } from './versioned_request.js';

// A driver's insert whose documents all belong to one shard, with the routing and the shard's host
// cached: passed on from the client's message to the shard's and, when the shard stored every
// document, the shard's reply passed back, all as bytes. It is what runWrite does for such an
// insert, without decoding the command, building statements or re-encoding the reply. Undefined
// when it does not apply: the caller hands the message to the message handler. A stale shard
// stored nothing, so its answer sends the message down that path too, after the cache is
// invalidated, as runWrite retries.

const DOCUMENTS = 1;
const ORDERED = 2;
const INSERT = commandShape('insert', [field('documents', TYPE_ARRAY, true), field('ordered', TYPE_BOOL, true), field('txnNumber', TYPE_INT64, false)], 'documents');

export function insertFastPath(router: RouterServices, conn: ConnectionInfo, message: Buffer, fallback: MessageHandler): Promise<Buffer | undefined> | undefined {
  const routed = readRoutedCommand(router, message, INSERT);
  if (routed === undefined) return undefined;
  const { command, routing } = routed;
  const ordered = valueBytes(message, command, ORDERED);
  const documents = receivedDocuments(message, command, DOCUMENTS);
  if (documents === undefined || documents.length === 0 || documents.length > Limits.maxWriteBatchSize || (ordered !== undefined && ordered[0]! > 1)) return undefined;
  const target = targetDocuments(routing, documents);
  const sent = target === undefined ? undefined : passOn(router, message, routed, INSERT, target.shard);
  if (sent === undefined) return undefined;
  const isOrdered = ordered === undefined || ordered[0] === 1;
  return sent.then((reply) => {
    if (plainInsertReply(reply, documents.length)) {
      if (routing.cm !== undefined) router.chunkSplitter.noteStoredInserts(routing.cm, target!.chunks, documents);
      router.fastPaths.insert += 1;
      return opMsgReplyOfBody(reply, command.requestId);
    }
    let decoded: Doc;
    try {
      decoded = deserializeDocument(reply);
    } catch (err) {
      return failed(router, command, documents.length, isOrdered, err);
    }
    if (decoded.ok !== 1 && isStaleCode(decoded.code)) {
      invalidateNamespace(router, routed.ns);
      return fallback(conn, message);
    }
    if (routing.cm !== undefined && decoded.ok === 1) router.chunkSplitter.noteReceivedInserts(routing.cm, documents.map((d) => new LazyDocument(d)), decoded);
    router.fastPaths.insert += 1;
    return opMsgReply(oneShardInsertReply(documents.length, isOrdered, decoded), command.requestId);
  }, (err: unknown) => failed(router, command, documents.length, isOrdered, err));
}

// runGroup's answer when the send failed or the reply did not decode: each document failed (the
// first if ordered) with a MongoError, anything else the dispatcher's error reply.
function failed(router: RouterServices, command: ReceivedCommand, count: number, ordered: boolean, err: unknown): Buffer {
  return opMsgReply(err instanceof MongoError ? oneShardInsertReply(count, ordered, err) : routerErrorReply(router, err), command.requestId);
}

// Every document read without decoding, with exactly one _id (runWrite gives one to a document
// without; that changes its bytes), and all on one shard; on a sharded collection, with the chunk
// of each (auto-splitting counts bytes per chunk).
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
