import { LazyDocument, readPlainDocument, type ElementSpan, type PlainDocument } from '../bson/raw_document.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ConnectionInfo } from '../commands/command.js';
import { opMsgReply, opMsgReplyOfBody, type MessageHandler } from '../commands/message_handler.js';
import { Limits } from '../wire/op_codes.js';
import { oneShardInsertReply } from './commands/cluster_write.js';
import { plainInsertReply } from './raw_reply.js';
import { TYPE_ARRAY, TYPE_BOOL, TYPE_DOUBLE, TYPE_INT32, TYPE_INT64 } from './raw_elements.js';
import type { ChunkManager } from './chunk_manager.js';
import { commandShape, field, receivedDocuments, valueBytes, type ReceivedCommand } from './received_command.js';
import { passOn, readRoutedCommand } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import { chunkForInsert } from './targeter.js';
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
      if (routing.cm !== undefined) router.chunkSplitter.noteStoredInserts(routing.cm, target!.chunks, documents.map((d) => d.length));
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
  const key = cm === undefined ? undefined : topLevelKey(cm);
  const chunks: ChunkType[] = [];
  let shard: string | undefined;
  for (const bytes of documents) {
    const plain = readPlainDocument(bytes, key);
    if (plain === undefined || plain.ids.length !== 1) return undefined;
    let owner: string;
    if (cm === undefined) owner = routing.db.primary;
    else {
      const chunk = chunkOf(cm, plain, key === ID ? plain.ids : plain.named);
      if (chunk === undefined) return undefined;
      chunks.push(chunk);
      owner = chunk.shard;
    }
    if (shard !== undefined && owner !== shard) return undefined;
    shard = owner;
  }
  return shard === undefined ? undefined : { shard, chunks };
}

// chunkForInsert of the decoded document. A single top-level key field found once, holding an
// int32 or a double, is looked up by its number (what chunkForInsert does with the decoded value)
// without decoding anything; otherwise the key fields are decoded. Undefined when targeting
// throws (runWrite then reports it).
function chunkOf(cm: ChunkManager, plain: PlainDocument, keyElements: ElementSpan[]): ChunkType | undefined {
  if (keyElements.length === 1) {
    const { type, value } = keyElements[0]!;
    const n = type === TYPE_INT32 ? plain.bytes.readInt32LE(value) : type === TYPE_DOUBLE ? plain.bytes.readDoubleLE(value) : undefined;
    const chunk = n === undefined ? undefined : cm.chunkForNumericKey(n);
    if (chunk !== undefined) return chunk;
  }
  try {
    return chunkForInsert(cm, new LazyDocument(plain.bytes).fields(cm.shardKeyPattern.fields));
  } catch {
    return undefined;
  }
}

const ID = Buffer.from('_id');
const KEY_NAMES = new WeakMap<ChunkManager, Buffer | null>();

// The name of the shard key's one field when it is a top-level field (no dot), as bytes.
function topLevelKey(cm: ChunkManager): Buffer | undefined {
  let name = KEY_NAMES.get(cm);
  if (name === undefined) {
    const fields = cm.shardKeyPattern.fields;
    name = fields.length === 1 && !fields[0]!.includes('.') ? (fields[0] === '_id' ? ID : Buffer.from(fields[0]!)) : null;
    KEY_NAMES.set(cm, name);
  }
  return name ?? undefined;
}
