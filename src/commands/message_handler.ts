import { BSON } from 'bson';
import { errorReply, MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { encodeOpMsgReply, encodeOpReply, FramingError, parseRequest, type OpMsgRequest, type OpQueryRequest } from '../wire/message.js';
import { MsgFlag, Limits } from '../wire/op_codes.js';
import { serializeWithRaw } from '../wire/raw_bson.js';
import type { ConnectionInfo } from './command.js';
import { rememberBytes } from './original_bytes.js';

let nextResponseId = 1;

// Turns one framed message into at most one reply message. Errors inside a well-framed message
// become error replies; errors that make the stream untrustworthy throw FramingError (the
// connection is then closed).
// Runs one decoded command (with `$db`) for a connection: a node's or a router's dispatcher.
export type Dispatch = (conn: ConnectionInfo, cmd: Doc) => Promise<Doc>;

export async function handleMessage(dispatch: Dispatch, conn: ConnectionInfo, message: Buffer): Promise<Buffer | undefined> {
  let request;
  try {
    request = parseRequest(message);
  } catch (err) {
    if (err instanceof MongoError && [ErrorCodes.IllegalOpMsgFlag, ErrorCodes.TooManyDocumentSequences, ErrorCodes.ChecksumMismatch].includes(err.code as 223)) {
      throw new FramingError(err.message);
    }
    return encodeOpMsgReply(serializeReply(errorReply(err)), nextResponseId++, message.readInt32LE(4));
  }
  switch (request.kind) {
    case 'msg': return handleOpMsg(dispatch, conn, request);
    case 'query': return handleOpQuery(dispatch, conn, request);
    default: throw new FramingError(`unsupported opCode ${request.header.opCode}`);
  }
}

async function handleOpMsg(dispatch: Dispatch, conn: ConnectionInfo, request: OpMsgRequest): Promise<Buffer | undefined> {
  let reply: Doc;
  try {
    reply = await dispatch(conn, decodeCommand(request));
  } catch (err) {
    reply = errorReply(err);
  }
  if (request.flags & MsgFlag.moreToCome) return undefined;
  return encodeOpMsgReply(serializeReply(reply), nextResponseId++, request.header.requestId);
}

function decodeCommand(request: OpMsgRequest): Doc {
  if (request.body.length > Limits.maxBsonInternalSize) {
    throw new MongoError(ErrorCodes.BSONObjectTooLarge, `BSONObj size: ${request.body.length} is invalid. Size must be between 0 and 16793600(16MB)`);
  }
  const cmd = deserializeDocument(request.body);
  for (const seq of request.sequences) {
    if (seq.identifier in cmd) {
      throw new MongoError(ErrorCodes.BadValue, `Duplicate field '${seq.identifier}' in OP_MSG body and document sequence`);
    }
    cmd[seq.identifier] = seq.documents.map((d) => rememberBytes(deserializeDocument(d), d));
  }
  return cmd;
}

const HANDSHAKE_COMMANDS = new Set(['hello', 'isMaster', 'ismaster']);

// Drivers open every connection with a legacy OP_QUERY hello; MongoDB 5.1+ refuses every other
// OP_QUERY command with UnsupportedOpQueryCommand.
async function handleOpQuery(dispatch: Dispatch, conn: ConnectionInfo, request: OpQueryRequest): Promise<Buffer> {
  let reply: Doc;
  try {
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
  return encodeOpReply(serializeReply(reply), nextResponseId++, request.header.requestId);
}

function serializeReply(reply: Doc): Buffer {
  try {
    return serializeWithRaw(reply);
  } catch (err) {
    return Buffer.from(BSON.serialize(errorReply(err)));
  }
}
