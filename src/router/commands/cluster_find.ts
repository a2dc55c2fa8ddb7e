import { Long } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { parseCollation, type StringComparator } from '../../bson/collation.js';
import { deserializeDocument, isPlainObject, type Doc } from '../../bson/values.js';
import { collectionArg, optionalBool, optionalDoc, optionalNonNegative } from '../../command_layer/args.js';
import { RawDocument } from '../../wire/raw_bson.js';
import { withResumableLabel } from '../../change_streams/resumable_errors.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { mergeFindResults, planFindMerge, type FindMergePlan } from '../merge/find_merge.js';
import { batchSizeOf, forwardable, RemoteCursorStream } from '../remote_cursor_stream.js';
import { withPartial, type ClusterCursor } from '../cluster_cursor_manager.js';
import { PartialResults } from '../partial_results.js';
import type { RouterCommand, RouterContext, RouterServices } from '../router_services.js';
import { completedCursorBytes } from '../raw_reply.js';
import { numericPointShard, shardsForQuery } from '../targeter.js';
import { TailableClusterCursor } from '../tailable_cluster_cursor.js';
import { checkFindOptions, notCappedError, tailableMode, type TailableMode } from '../../query/query_request_helper.js';
import { emptyWithoutDatabase, encodeVersionedMessage, sendToShard, throwIfStale, versionFields, withStaleRetry, type Routing } from '../versioned_request.js';
import { currentRouterTransaction } from '../transaction_router.js';

export function targetShards(routing: Routing, filter: Doc): string[] {
  if (!routing.cm) return [routing.db.primary];
  const point = numericPointShard(routing.cm, filter);
  if (point !== undefined) return [point];
  return [...shardsForQuery(routing.cm, filter)].sort();
}

// Sends `cmd` (a cursor command) to each shard with its version and returns their cursors; a
// stale answer from any shard closes the others and throws, so the caller retries from scratch.
// With `partial`, a shard that cannot be reached is left out instead (allowPartialResults).
export async function openShardCursors(router: RouterServices, routing: Routing, db: string, shards: string[], cmd: Doc, partial?: PartialResults): Promise<RemoteCursorStream[]> {
  const replies = await Promise.allSettled(shards.map(async (shardId) => {
    const host = await router.shardRegistry.host(shardId);
    const reply = await sendToShard(router, shardId, db, { ...cmd, ...versionFields(routing, shardId) });
    return { host, reply };
  }));
  const streams: RemoteCursorStream[] = [];
  let failure: unknown;
  for (const r of replies) {
    if (r.status === 'rejected') {
      if (!partial?.tolerate(r.reason)) failure ??= r.reason;
    } else {
      try {
        checkOk(throwIfStale(r.value.reply));
        streams.push(new RemoteCursorStream(router, r.value.host, db, r.value.reply, batchSizeOf(cmd), partial));
      } catch (err) {
        if (!partial?.tolerate(err)) failure ??= err;
      }
    }
  }
  if (failure !== undefined) {
    await Promise.all(streams.map((s) => s.close()));
    throw failure;
  }
  return streams;
}

// The find on one shard, on raw bytes: the command is encoded once (with the shard's version and
// $db) into the request message and the reply is looked at before anything decodes it. When
// `passThrough` allows it (the shard's answer is the client's: no skip or projection left to the
// router) and the shard answered everything in its first batch, the reply's cursor document is
// the router's, handed on as is (a RawDocument). Otherwise the reply is decoded and checked
// exactly as openShardCursors does (stale errors thrown for withStaleRetry) and answered from a
// cursor stream. One promise reaction from the shard's reply to the answer when the shard's host
// is cached: this is a point read's whole path through the router.
function findOnOneShard(ctx: RouterContext, request: FindRequest, routing: Routing, shardId: string): Promise<Doc> {
  const message = encodeVersionedMessage(routing, shardId, ctx.db, request.plan.shardCommand, ctx.router.clock.now());
  const host = ctx.router.shardRegistry.cachedHost(shardId);
  if (host === undefined) return ctx.router.shardRegistry.host(shardId).then((found) => sendFind(ctx, request, found, message, shardId));
  return sendFind(ctx, request, host, message, shardId);
}

function sendFind(ctx: RouterContext, request: FindRequest, host: string, message: Buffer, shardId: string): Promise<Doc> {
  const txn = currentRouterTransaction();
  return ctx.router.client.forwardMessage(host, message).then((raw) => {
    txn?.answered(shardId, deserializeDocument(raw));
    if (request.passThrough) {
      const cursor = completedCursorBytes(raw, request.ns);
      if (cursor !== undefined) return { cursor: new RawDocument(cursor), ok: 1 };
    }
    const reply = deserializeDocument(raw);
    checkOk(throwIfStale(reply));
    return answerFind(ctx, request, [new RemoteCursorStream(ctx.router, host, ctx.db, reply, batchSizeOf(request.plan.shardCommand))]);
  });
}

export function clusterCursor(source: AsyncIterable<Doc>, streams: RemoteCursorStream[], partial?: PartialResults): ClusterCursor {
  const it = source[Symbol.asyncIterator]();
  return {
    partial,
    next: async () => {
      const r = await it.next();
      return r.done ? undefined : r.value;
    },
    close: async () => {
      await it.return?.();
      await Promise.all(streams.map((s) => s.close()));
    },
  };
}

// A find as the router plans it, once per request (the plan does not depend on the routing).
interface FindRequest {
  ns: string;
  filter: Doc;
  plan: FindMergePlan;
  // The shards' answer is the client's as it is: nothing left to skip or project on the router.
  passThrough: boolean;
  batchSize: number | undefined;
  oneBatch: boolean;
  // The shards sort under it, so the router's merge of their sorted streams must too.
  collation: StringComparator | undefined;
  allowPartialResults: boolean;
  noCursorTimeout: boolean;
}

export const clusterFindCommand: RouterCommand = {
  names: ['find'],
  // Not async: argument errors throw before any promise, which the dispatcher catches alike, and
  // the answer is withStaleRetry's own promise rather than one more wrapped around it.
  run(ctx, cmd) {
    const coll = collectionArg(cmd);
    const ns = `${ctx.db}.${coll}`;
    const filter = optionalDoc(cmd, 'filter') ?? {};
    const batchSize = optionalNonNegative(cmd, 'batchSize');
    const limit = optionalNonNegative(cmd, 'limit');
    optionalNonNegative(cmd, 'skip');
    const singleBatch = optionalBool(cmd, 'singleBatch') ?? false;
    const allowPartialResults = optionalBool(cmd, 'allowPartialResults') ?? false;
    const tailable = tailableMode(optionalBool(cmd, 'tailable') ?? false, optionalBool(cmd, 'awaitData') ?? false);
    checkFindOptions({ tailable, sort: optionalDoc(cmd, 'sort'), singleBatch, min: optionalDoc(cmd, 'min'), max: optionalDoc(cmd, 'max') });
    const noCursorTimeout = optionalBool(cmd, 'noCursorTimeout') ?? false;
    if (tailable !== 'normal') {
      const tail: TailRequest = { ns, command: forwardable(cmd), tailable, noCursorTimeout };
      if (ctx.db === 'config' || ctx.db === 'admin') return tailOnConfig(ctx, tail);
      return withStaleRetry(ctx.router, ns, (routing) => tailOnShard(ctx, tail, routing));
    }
    if (ctx.db === 'config' || ctx.db === 'admin') return proxyToConfig(ctx, cmd);
    const plan = planFindMerge(forwardable(cmd));
    const request: FindRequest = {
      ns,
      filter,
      plan,
      passThrough: plan.skip === 0 && plan.projection.router === undefined && !plan.bySortKey,
      batchSize,
      oneBatch: singleBatch || (limit !== undefined && limit > 0 && limit <= (batchSize ?? 101)),
      collation: parseCollation(cmd.collation),
      allowPartialResults,
      noCursorTimeout,
    };
    return emptyWithoutDatabase(withStaleRetry(ctx.router, ns, (routing) => findOnce(ctx, request, routing)), { cursor: { firstBatch: [], id: Long.ZERO, ns }, ok: 1 });
  },
};

function findOnce(ctx: RouterContext, request: FindRequest, routing: Routing): Promise<Doc> {
  const shards = targetShards(routing, request.filter);
  if (request.allowPartialResults) {
    const partial = new PartialResults();
    return openShardCursors(ctx.router, routing, ctx.db, shards, request.plan.shardCommand, partial).then((streams) => answerFind(ctx, request, streams, partial));
  }
  if (shards.length === 1) return findOnOneShard(ctx, request, routing, shards[0]!);
  return openShardCursors(ctx.router, routing, ctx.db, shards, request.plan.shardCommand).then((streams) => answerFind(ctx, request, streams));
}

function answerFind(ctx: RouterContext, request: FindRequest, streams: RemoteCursorStream[], partial?: PartialResults): Promise<Doc> | Doc {
  // One shard that answered everything at once (point reads): its batch is the answer.
  const whole = streams.length === 1 && request.passThrough ? streams[0]!.completeFirstBatch() : undefined;
  if (whole) return { cursor: withPartial({ firstBatch: whole, id: Long.ZERO, ns: request.ns }, { partial }), ok: 1 };
  const merged = mergeFindResults(request.plan, streams, request.collation);
  return ctx.router.cursors.firstBatch(request.ns, clusterCursor(merged, streams, partial), request.batchSize, request.oneBatch, { noCursorTimeout: request.noCursorTimeout });
}

// A tailable find is sent as the client sent it: skip, limit and projection are the shard's.
interface TailRequest {
  ns: string;
  command: Doc;
  tailable: Exclude<TailableMode, 'normal'>;
  noCursorTimeout: boolean;
}

// A tailable find goes to the one shard that has the collection (capped collections are never
// sharded; a sharded one is refused here as its shards would refuse it), and its cursor is that
// shard's, getMore for getMore.
async function tailOnShard(ctx: RouterContext, tail: TailRequest, routing: Routing): Promise<Doc> {
  const { command } = tail;
  if (routing.cm !== undefined) {
    throw notCappedError({ ns: tail.ns, filter: optionalDoc(command, 'filter') ?? {}, sort: optionalDoc(command, 'sort'), projection: optionalDoc(command, 'projection'), batchSize: optionalNonNegative(command, 'batchSize') });
  }
  const shardId = routing.db.primary;
  const host = await ctx.router.shardRegistry.host(shardId);
  const reply = checkOk(throwIfStale(await sendToShard(ctx.router, shardId, ctx.db, { ...command, ...versionFields(routing, shardId) })));
  return forwardTailable(ctx, host, reply, tail);
}

// A tailable find on the config server's collections (config.changelog is capped).
async function tailOnConfig(ctx: RouterContext, tail: TailRequest): Promise<Doc> {
  const host = ctx.router.options.configHost;
  return forwardTailable(ctx, host, checkOk(await ctx.router.client.command(host, ctx.db, tail.command)), tail);
}

function forwardTailable(ctx: RouterContext, host: string, reply: Doc, tail: TailRequest): Doc {
  const cursor = reply.cursor as Doc;
  if ((cursor.id as Long).isZero()) return reply;
  const forwarded = new TailableClusterCursor(ctx.router, host, ctx.db, reply, tail.tailable === 'tailableAndAwaitData');
  return ctx.router.cursors.openForwarded(String(cursor.ns), forwarded, cursor.firstBatch as Doc[], { noCursorTimeout: tail.noCursorTimeout });
}

// Reads of the config and admin databases are answered by the config server (mongosh's
// sh.status() reads config.* this way); the cursor is proxied through the router.
export async function proxyToConfig(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  const host = ctx.router.options.configHost;
  const reply = checkOk(await ctx.router.client.command(host, ctx.db, forwardable(cmd)));
  if (!isPlainObject(reply.cursor)) return reply;
  const stream = new RemoteCursorStream(ctx.router, host, ctx.db, reply);
  const ns = String((reply.cursor as Doc).ns);
  const batchSize = isPlainObject(cmd.cursor) && typeof cmd.cursor.batchSize === 'number' ? cmd.cursor.batchSize : undefined;
  return ctx.router.cursors.firstBatch(ns, clusterCursor(stream, [stream]), batchSize ?? (typeof cmd.batchSize === 'number' ? cmd.batchSize : undefined));
}

// The test fail point that fails a getMore once it has its cursor, with data.errorCode.
const FAIL_GET_MORE_AFTER_CHECKOUT = 'failGetMoreAfterCursorCheckout';

export const clusterGetMoreCommand: RouterCommand = {
  names: ['getMore'],
  async run(ctx, cmd) {
    const id = cmd.getMore;
    if (!(id instanceof Long)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'getMore.getMore' is the wrong type, expected type 'long'");
    if (typeof cmd.collection !== 'string') throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'getMore.collection' is the wrong type, expected type 'string'");
    // 0 means none, as mongos reads it.
    const maxTimeMS = optionalNonNegative(cmd, 'maxTimeMS') || undefined;
    const { cursors, failPoints } = ctx.router;
    const changeStream = cursors.isChangeStream(id);
    try {
      const failure = cursors.ownerOf(id) !== undefined ? failPoints.shouldFire(FAIL_GET_MORE_AFTER_CHECKOUT) : undefined;
      if (failure !== undefined) {
        // As a getMore that fails on mongos: its cursor is gone.
        await cursors.kill(id);
        throw new MongoError(Number(failure.errorCode ?? ErrorCodes.InternalError), `Failing command via '${FAIL_GET_MORE_AFTER_CHECKOUT}' failpoint`);
      }
      return await cursors.getMore(id, `${ctx.db}.${cmd.collection}`, optionalNonNegative(cmd, 'batchSize'), maxTimeMS);
    } catch (err) {
      throw changeStream ? withResumableLabel(err) : err;
    }
  },
};

export const clusterKillCursorsCommand: RouterCommand = {
  names: ['killCursors'],
  async run(ctx, cmd) {
    collectionArg(cmd);
    const ids = Array.isArray(cmd.cursors) ? cmd.cursors : [];
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      if (!(id instanceof Long)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'killCursors.cursors' has an element of the wrong type, expected type 'long'");
      ((await ctx.router.cursors.kill(id)) ? killed : notFound).push(id);
    }
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  },
};
