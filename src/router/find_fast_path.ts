import { deserializeDocument } from '../bson/values.js';
import type { ConnectionInfo } from '../commands/command.js';
import { opMsgReplyIn, type MessageHandler } from '../commands/message_handler.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { cstringEnd, stringIs, TYPE_BOOL, TYPE_DOCUMENT, TYPE_DOUBLE, TYPE_INT32 } from './raw_elements.js';
import { completedCursorBytes, cursorReplyBody } from './raw_reply.js';
import { commandShape, field, valueBytes } from './received_command.js';
import { passOn, readRoutedCommand } from './routed_command.js';
import type { RouterServices } from './router_services.js';
import { isStaleError, type Routing } from './versioned_request.js';
import { MongoError } from '../base/errors.js';

// A driver's point read (findOne: a find with singleBatch) on one shard, with the routing and the
// shard's host cached: passed on from the client's message to the shard's as bytes and, when the
// shard answered it whole, the shard's cursor document passed back, as clusterFindCommand's
// single-shard path answers it, without decoding the command. Undefined when it does not apply:
// the caller hands the message to the message handler. Any other answer (an error, a stale
// shard) sends the message down that path too: a find with singleBatch leaves no cursor open on
// the shard, so asking again changes nothing (a stale shard's routing is invalidated first, as
// withStaleRetry does).

const FILTER = 1;
const LIMIT = 2;
const BATCH_SIZE = 3;
const SINGLE_BATCH = 4;
const FIND = commandShape('find', [field('filter', TYPE_DOCUMENT, true), field('limit', TYPE_INT32, true), field('batchSize', TYPE_INT32, true), field('singleBatch', TYPE_BOOL, true)]);

export function findFastPath(router: RouterServices, conn: ConnectionInfo, message: Buffer, fallback: MessageHandler): Promise<Buffer | undefined> | undefined {
  const routed = readRoutedCommand(router, message, FIND);
  if (routed === undefined) return undefined;
  const { command } = routed;
  const singleBatch = valueBytes(message, command, SINGLE_BATCH);
  if (singleBatch === undefined || singleBatch[0] !== 1 || negative(message, command.values, LIMIT) || negative(message, command.values, BATCH_SIZE)) return undefined;
  const shard = pointShard(routed.routing, valueBytes(message, command, FILTER));
  const sent = shard === undefined ? undefined : passOn(router, message, routed, FIND, shard);
  if (sent === undefined) return undefined;
  return sent.then((reply) => {
    const cursor = completedCursorBytes(reply, routed.ns);
    if (cursor !== undefined) {
      router.fastPaths.find += 1;
      return opMsgReplyIn(cursorReplyBody(cursor, OP_MSG_REPLY_PREFIX), command.requestId);
    }
    if (staleReply(reply)) {
      router.catalogCache.invalidateCollection(routed.ns);
      router.catalogCache.invalidateDatabase(routed.db);
    }
    return fallback(conn, message);
  }, () => fallback(conn, message));
}

function staleReply(reply: Buffer): boolean {
  try {
    const { code } = deserializeDocument(reply);
    return typeof code === 'number' && isStaleError(new MongoError(code, ''));
  } catch {
    return false;
  }
}

function negative(message: Buffer, values: number[], slot: number): boolean {
  const at = values[2 * slot]!;
  return at !== -1 && message.readInt32LE(at) < 0;
}

// The one shard a filter reaches, as clusterFindCommand's targeting finds it for a point read:
// the primary shard for an unsharded collection; for a sharded one, a filter that is exactly
// {<the single-field shard key>: <number>} (numericPointShard); undefined otherwise.
export function pointShard(routing: Routing, filter: Buffer | undefined): string | undefined {
  const { cm } = routing;
  if (cm === undefined) return routing.db.primary;
  const fields = cm.shardKeyPattern.fields;
  if (filter === undefined || fields.length !== 1) return undefined;
  const type = filter[4];
  if (type !== TYPE_INT32 && type !== TYPE_DOUBLE) return undefined;
  const nameEnd = cstringEnd(filter, 5, filter.length - 1);
  if (nameEnd < 0 || !stringIs(filter, 5, nameEnd, fields[0]!)) return undefined;
  const valueAt = nameEnd + 1;
  if (filter.length !== valueAt + (type === TYPE_INT32 ? 4 : 8) + 1) return undefined;
  return cm.shardForNumericKey(type === TYPE_INT32 ? filter.readInt32LE(valueAt) : filter.readDoubleLE(valueAt));
}
