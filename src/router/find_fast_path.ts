import { cstringSize } from '../bson/raw_document.js';
import { deserializeDocument } from '../bson/values.js';
import type { ConnectionInfo } from '../commands/command.js';
import { opMsgReply, opMsgReplyIn, type MessageHandler } from '../commands/message_handler.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { checkOk } from '../wire/remote_cursor.js';
import { stringIs, TYPE_BOOL, TYPE_DOCUMENT, TYPE_DOUBLE, TYPE_INT32 } from './raw_elements.js';
import { completedCursorBytes, cursorReplyBody } from './raw_reply.js';
import { commandShape, field, valueBytes } from './received_command.js';
import { resolvedViewOf } from './resolved_view.js';
import { passOn, readRoutedCommand, type RoutedCommand } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import { invalidateStale, isStaleError, type Routing } from './versioned_request.js';

// A driver's point read (findOne: a find with singleBatch) on one shard, with the routing and the
// shard's host cached: passed on from the client's message to the shard's as bytes and, when the
// shard answered it whole, the shard's cursor document passed back, as clusterFindCommand's
// single-shard path answers it, without decoding the command. Undefined when it does not apply:
// the caller hands the message to the message handler, as it does after a stale shard's answer
// (a find with singleBatch leaves no cursor open on the shard, so asking again changes nothing).

const FILTER = 1;
const LIMIT = 2;
const BATCH_SIZE = 3;
const SINGLE_BATCH = 4;
const FIND = commandShape('find', [field('filter', TYPE_DOCUMENT, true), field('limit', TYPE_INT32, true), field('batchSize', TYPE_INT32, true), field('singleBatch', TYPE_BOOL, true)]);

export function findFastPath(router: RouterServices, conn: ConnectionInfo, message: Buffer, fallback: MessageHandler): Promise<Buffer | undefined> | undefined {
  const routed = readRoutedCommand(router, message, FIND);
  if (routed === undefined || router.knownViews.has(routed.ns)) return undefined;
  const { command } = routed;
  const singleBatch = valueBytes(message, command, SINGLE_BATCH);
  if (singleBatch === undefined || singleBatch[0] !== 1 || negative(valueBytes(message, command, LIMIT)) || negative(valueBytes(message, command, BATCH_SIZE))) return undefined;
  const shard = pointShard(routed.routing, valueBytes(message, command, FILTER));
  const sent = shard === undefined ? undefined : passOn(router, message, routed, FIND, shard);
  if (sent === undefined) return undefined;
  return sent.then((reply) => {
    const cursor = completedCursorBytes(reply, routed.ns);
    if (cursor === undefined) return otherAnswer(router, conn, message, routed, reply, fallback);
    router.fastPaths.find += 1;
    return opMsgReplyIn(cursorReplyBody(cursor, OP_MSG_REPLY_PREFIX), command.requestId);
  }, (err: unknown) => opMsgReply(routerErrorReply(router, err), command.requestId));
}

// A shard's answer other than a completed cursor, as the general path answers it: an error as the
// dispatcher shapes it; a stale shard's after its routing is invalidated and the find is tried
// again there. A view's answer and an open cursor are left to the general path, which asks the
// shard again (and a view's namespace is remembered, so that its reads go there first).
function otherAnswer(router: RouterServices, conn: ConnectionInfo, message: Buffer, routed: RoutedCommand, reply: Buffer, fallback: MessageHandler): Buffer | undefined | Promise<Buffer | undefined> {
  try {
    checkOk(deserializeDocument(reply));
  } catch (err) {
    if (isStaleError(err)) invalidateStale(router, routed.ns, err, 0);
    else if (resolvedViewOf(err) !== undefined) rememberView(router, routed.ns);
    else return opMsgReply(routerErrorReply(router, err), routed.command.requestId);
  }
  return fallback(conn, message);
}

// Bounded: a stream of made-up view names must not grow it without end.
const KNOWN_VIEWS_MAX = 1000;

function rememberView(router: RouterServices, ns: string): void {
  if (router.knownViews.size >= KNOWN_VIEWS_MAX) router.knownViews.clear();
  router.knownViews.add(ns);
}

function negative(int32: Buffer | undefined): boolean {
  return int32 !== undefined && int32.readInt32LE(0) < 0;
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
  const name = cstringSize(filter, 5, filter.length - 1);
  if (name < 0 || !stringIs(filter, 5, 5 + name - 1, fields[0]!)) return undefined;
  const valueAt = 5 + name;
  if (filter.length !== valueAt + (type === TYPE_INT32 ? 4 : 8) + 1) return undefined;
  return cm.shardForNumericKey(type === TYPE_INT32 ? filter.readInt32LE(valueAt) : filter.readDoubleLE(valueAt));
}
