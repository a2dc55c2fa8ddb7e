import { BSON } from 'bson';
import { errorReply, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { checkReceivedDepth } from '../bson/bson_depth.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { finishOpMsgReply, finishOpReply, FramingError, OP_MSG_REPLY_PREFIX, OP_REPLY_PREFIX, parseRequest, type OpMsgRequest, type OpQueryRequest } from '../wire/message.js';
import { compressMessage, decompressMessage, isCompressed } from '../wire/message_compressor.js';
import { MsgFlag, Limits } from '../wire/op_codes.js';
import { serializeWithRaw } from '../wire/raw_bson.js';
import type { ConnectionInfo } from './connection_info.js';
import type { ServerReply } from '../wire/tcp_server.js';
import { attachSequence, bodyDocuments } from './original_bytes.js';

let nextResponseId = 1;

// Runs one decoded command (with `$db`) for a connection: a node's or a router's dispatcher.
export type Dispatch = (conn: ConnectionInfo, cmd: Doc) => Doc | Promise<Doc>;

type Reply = ServerReply | undefined;

export type MessageHandler = (conn: ConnectionInfo, message: Buffer) => Reply | Promise<Reply>;

// Turns one framed message into at most one reply message. Errors inside a well-framed message
// become error replies; errors that make the stream untrustworthy throw FramingError (the
// connection is then closed). The reply comes back without a promise when the command ran
// synchronously, which most do.
export function handleMessage(dispatch: Dispatch, conn: ConnectionInfo, message: Buffer): Reply | Promise<Reply> {
  let request;
  try {
    request = parseRequest(message);
  } catch (err) {
    if (err instanceof MongoError && [ErrorCodes.IllegalOpMsgFlag, ErrorCodes.TooManyDocumentSequences, ErrorCodes.ChecksumMismatch].includes(err.code as 223)) {
      throw new FramingError(err.message);
    }
    return opMsgReply(errorReply(err), message.readInt32LE(4));
  }
  switch (request.kind) {
    case 'msg': return handleOpMsg(dispatch, conn, request);
    case 'query': return handleOpQuery(dispatch, conn, request);
    default: throw new FramingError(`unsupported opCode ${request.header.opCode}`);
  }
}

// `handler` for connections that may send OP_COMPRESSED: such a message is decompressed before
// anything else reads it (a router's fast paths and metrics see the message inside), and its reply
// is compressed with the same compressor, as mongod answers. A message that cannot be
// decompressed as it must be closes the connection (FramingError), and so does one from a
// connection that `mayCompress` refuses (a node with --auth before its client authenticates).
export function withCompression(handler: MessageHandler, mayCompress: (conn: ConnectionInfo) => boolean = () => true): MessageHandler {
  return (conn, message) => {
    if (!isCompressed(message)) return handler(conn, message);
    if (!mayCompress(conn)) throw new FramingError('Compressed message before authentication');
    const { message: inner, compressorId } = decompressMessage(message, conn.compressors ?? []);
    const reply = handler(conn, inner);
    if (reply instanceof Promise) return reply.then((r) => compressedReply(r, compressorId));
    return compressedReply(reply, compressorId);
  };
}

// A streaming reply's later replies are compressed as its first.
function compressedReply(reply: Reply, compressorId: number): Reply {
  if (reply === undefined) return undefined;
  const out = compressMessage(reply, compressorId);
  const next = reply.next;
  return next === undefined ? out : Object.assign(out, { next: () => next().then((r) => compressedReply(r, compressorId)) });
}

function handleOpMsg(dispatch: Dispatch, conn: ConnectionInfo, request: OpMsgRequest): Reply | Promise<Reply> {
  let cmd: Doc | undefined;
  let reply: Doc | Promise<Doc>;
  try {
    cmd = decodeCommand(request);
    reply = dispatch(conn, cmd);
  } catch (err) {
    reply = errorReply(err);
  }
  const stream = cmd !== undefined && streams(request, cmd) ? cmd : undefined;
  const answer = (r: Doc): Reply => (stream === undefined ? respond(request, r) : streamedReply(dispatch, conn, stream, r, request.header.requestId));
  if (!(reply instanceof Promise)) return answer(reply);
  return reply.then(answer, (err: unknown) => respond(request, errorReply(err)));
}

// The exhaust protocol, as a driver monitors a replica set member: an awaitable hello (it names a
// topologyVersion and maxAwaitTimeMS) from a client that allows exhaust is answered with
// moreToCome, and answered again, unasked, each time the awaitable hello would answer.
function streams(request: OpMsgRequest, cmd: Doc): boolean {
  return (request.flags & MsgFlag.exhaustAllowed) !== 0 && (request.flags & MsgFlag.moreToCome) === 0
    && cmd.topologyVersion !== undefined && cmd.maxAwaitTimeMS !== undefined;
}

// OP_MSG's flagBits follow the 16-byte message header.
const OP_MSG_FLAGS_OFFSET = 16;

function streamedReply(dispatch: Dispatch, conn: ConnectionInfo, cmd: Doc, reply: Doc, responseTo: number): Reply {
  const out = opMsgReply(reply, responseTo);
  const topologyVersion = reply.topologyVersion;
  if (reply.ok !== 1 || topologyVersion === undefined) return out;
  out.writeUInt32LE(MsgFlag.moreToCome, OP_MSG_FLAGS_OFFSET);
  const again = { ...cmd, topologyVersion };
  const next = async (): Promise<Reply> => {
    let r: Doc;
    try {
      r = await dispatch(conn, again);
    } catch (err) {
      r = errorReply(err);
    }
    return streamedReply(dispatch, conn, again, r, out.readInt32LE(4));
  };
  return Object.assign(out, { next });
}

function respond(request: OpMsgRequest, reply: Doc): Reply {
  return request.flags & MsgFlag.moreToCome ? undefined : opMsgReply(reply, request.header.requestId);
}

function decodeCommand(request: OpMsgRequest): Doc {
  if (request.body.length > Limits.maxBsonInternalSize) {
    throw new MongoError(ErrorCodes.BSONObjectTooLarge, `BSONObj size: ${request.body.length} is invalid. Size must be between 0 and 16793600(16MB)`);
  }
  // Measured where a message's documents become a command, not in parseRequest: the router's fast
  // paths and observers parse every message too, and most of them never decode it.
  checkReceivedDepth(request.body);
  for (const seq of request.sequences) for (const doc of seq.documents) checkReceivedDepth(doc);
  const inBody = request.sequences.length === 0 ? bodyDocuments(request.body) : undefined;
  if (inBody !== undefined) {
    const cmd = deserializeDocument(inBody.rest);
    attachSequence(cmd, 'documents', inBody.documents);
    return cmd;
  }
  const cmd = deserializeDocument(request.body);
  for (const seq of request.sequences) {
    if (seq.identifier in cmd) {
      throw new MongoError(ErrorCodes.BadValue, `Duplicate field '${seq.identifier}' in OP_MSG body and document sequence`);
    }
    attachSequence(cmd, seq.identifier, seq.documents);
  }
  return cmd;
}

const HANDSHAKE_COMMANDS = new Set(['hello', 'isMaster', 'ismaster']);

// Drivers open every connection with a legacy OP_QUERY hello; MongoDB 5.1+ refuses every other
// OP_QUERY command with UnsupportedOpQueryCommand.
async function handleOpQuery(dispatch: Dispatch, conn: ConnectionInfo, request: OpQueryRequest): Promise<Buffer> {
  let reply: Doc;
  try {
    checkReceivedDepth(request.query);
    const query = deserializeDocument(request.query);
    const inner = '$query' in query && typeof query.$query === 'object' ? (query.$query as Doc) : query;
    const name = Object.keys(inner)[0] ?? '';
    const isCommand = request.fullCollectionName.endsWith('.$cmd');
    if (isCommand && HANDSHAKE_COMMANDS.has(name)) {
      const db = request.fullCollectionName.slice(0, -'.$cmd'.length);
      reply = await dispatch(conn, { ...inner, $db: db });
    } else {
      throw new MongoError(
        ErrorCodes.UnsupportedOpQueryCommand,
        `Unsupported OP_QUERY command: ${isCommand ? name : 'find'}. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal`,
      );
    }
  } catch (err) {
    reply = errorReply(err);
  }
  return finishOpReply(serializeReply(reply, OP_REPLY_PREFIX), nextResponseId++, request.header.requestId);
}

export function opMsgReply(reply: Doc, responseTo: number): Buffer {
  return finishOpMsgReply(serializeReply(reply, OP_MSG_REPLY_PREFIX), nextResponseId++, responseTo);
}

// The reply message whose body is `body` (a BSON document), as it is.
export function opMsgReplyOfBody(body: Buffer, responseTo: number): Buffer {
  const out = Buffer.allocUnsafe(OP_MSG_REPLY_PREFIX + body.length);
  body.copy(out, OP_MSG_REPLY_PREFIX);
  return opMsgReplyIn(out, responseTo);
}

// The reply message whose body the caller wrote after OP_MSG_REPLY_PREFIX bytes of `out`.
export function opMsgReplyIn(out: Buffer, responseTo: number): Buffer {
  return finishOpMsgReply(out, nextResponseId++, responseTo);
}

// The body goes after `prefix` bytes that the caller fills with the message header.
function serializeReply(reply: Doc, prefix: number): Buffer {
  try {
    return serializeWithRaw(reply, prefix);
  } catch (err) {
    const body = BSON.serialize(errorReply(err));
    const out = Buffer.allocUnsafe(prefix + body.length);
    out.set(body, prefix);
    return out;
  }
}
