import { cstringSize } from '../bson/raw_document.js';
import { deserializeDocument } from '../bson/values.js';
import { opMsgReply, opMsgReplyIn } from '../command_layer/message_handler.js';
import { OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { checkOk } from '../wire/remote_cursor.js';
import { countCommand, withRouterTimes } from './command_entry.js';
import { stringIs, TYPE_BOOL, TYPE_DOCUMENT, TYPE_DOUBLE, TYPE_INT32 } from './raw_elements.js';
import { completedCursorBytes, cursorReplyBody } from './raw_reply.js';
import { commandShape, field, requestClusterTimeAt, shardRequest, valueBytes } from './received_command.js';
import { resolvedViewOf } from './resolved_view.js';
import { readRoutedCommand, type CachedRouting, type Forward } from './routed_command.js';
import { routerErrorReply } from './router_dispatcher.js';
import type { RouterServices } from './router_services.js';
import type { ChunkManager } from './chunk_manager.js';
import { invalidateStale, isStaleError, versionTail, type Routing } from './versioned_request.js';

// A driver's point read (findOne: a find with singleBatch) on one shard: planned from the client's
// message onto that shard's as bytes, as clusterFindCommand's single-shard path sends it (its
// session stays with the router, as a read's does: command_entry.ts's forwardsSession), and, when
// the shard answered it whole, the shard's cursor document passed back. planFind declines
// (undefined) what it cannot plan so; the message then takes the message handler's path, as it
// does after a stale shard's answer (a find with singleBatch leaves no cursor open on the shard,
// so asking again changes nothing).

const FILTER = 1;
const LIMIT = 2;
const BATCH_SIZE = 3;
const SINGLE_BATCH = 4;
const FIND = commandShape('find', [field('filter', TYPE_DOCUMENT, true), field('limit', TYPE_INT32, true), field('batchSize', TYPE_INT32, true), field('singleBatch', TYPE_BOOL, true)]);

export function planFind(message: Buffer, caches: CachedRouting): Forward | undefined {
  const routed = readRoutedCommand(caches, message, FIND);
  if (routed === undefined || caches.isView(routed.ns)) return undefined;
  const { command, routing } = routed;
  const singleBatch = valueBytes(message, command, SINGLE_BATCH);
  if (singleBatch === undefined || singleBatch[0] !== 1 || negative(valueBytes(message, command, LIMIT)) || negative(valueBytes(message, command, BATCH_SIZE))) return undefined;
  const shard = pointShard(routing, valueBytes(message, command, FILTER));
  if (shard === undefined) return undefined;
  const tail = versionTail(routing, shard, routed.db);
  const request = shardRequest(message, command, tail);
  return {
    requestId: command.requestId,
    ns: routed.ns,
    routing,
    shard,
    request,
    clusterTimeAt: requestClusterTimeAt(request, tail),
    generic: { lsid: valueBytes(message, command, FIND.lsidSlot), $clusterTime: valueBytes(message, command, FIND.clusterTimeSlot) },
  };
}

// The router's reply to a planned find from the shard's: its completed cursor as the general
// path's single-shard find answers it (with the router's $clusterTime and the shard's
// operationTime), an error as the dispatcher shapes it. Undefined when the
// general path must answer: a stale shard's answer (after its routing is invalidated), a view's
// (its namespace remembered, so that its reads go there first) and an open cursor, which the
// general path asks the shard again for.
export function answerFind(router: RouterServices, plan: Forward, reply: Buffer): Buffer | undefined {
  const cursor = completedCursorBytes(reply, plan.ns);
  if (cursor !== undefined) {
    answered(router);
    return opMsgReplyIn(cursorReplyBody(cursor, OP_MSG_REPLY_PREFIX, router.clock.now(), reply), plan.requestId);
  }
  try {
    checkOk(deserializeDocument(reply));
  } catch (err) {
    if (isStaleError(err)) invalidateStale(router, plan.ns, err, 0);
    else if (resolvedViewOf(err) !== undefined) rememberView(router, plan.ns);
    else return findFailed(router, plan, err);
  }
  return undefined;
}

export function findFailed(router: RouterServices, plan: Forward, err: unknown): Buffer {
  answered(router);
  return opMsgReply(withRouterTimes(router, routerErrorReply(router, err)), plan.requestId);
}

function answered(router: RouterServices): void {
  router.fastPaths.find += 1;
  countCommand(router.opcounters, 'find');
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
  const key = filter === undefined ? undefined : numericPointKey(cm, filter);
  return key === undefined ? undefined : cm.shardForNumericKey(key);
}

// The number of a filter that is exactly {<the single-field shard key>: <int32 or double>}.
export function numericPointKey(cm: ChunkManager, filter: Buffer): number | undefined {
  const fields = cm.shardKeyPattern.fields;
  if (fields.length !== 1 || filter.length < 5) return undefined;
  const type = filter[4];
  if (type !== TYPE_INT32 && type !== TYPE_DOUBLE) return undefined;
  const name = cstringSize(filter, 5, filter.length - 1);
  if (name < 0 || !stringIs(filter, 5, 5 + name - 1, fields[0]!)) return undefined;
  const valueAt = 5 + name;
  if (filter.length !== valueAt + (type === TYPE_INT32 ? 4 : 8) + 1) return undefined;
  return type === TYPE_INT32 ? filter.readInt32LE(valueAt) : filter.readDoubleLE(valueAt);
}
