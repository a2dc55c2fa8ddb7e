import { Long, Timestamp } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { checkFollowingStages, mentionsChangeStream, parseChangeStreamCommand, tickAfter, type ChangeStreamSpec } from '../../change_streams/change_stream_spec.js';
import { decodeResumeToken, highWaterMarkToken } from '../../change_streams/resume_token.js';
import type { ShardType } from '../../catalog/type_chunk.js';
import { optionalDoc, optionalNonNegative } from '../../command_layer/args.js';
import { letVariables } from '../../command_layer/let_variables.js';
import { runPipeline, validatePipeline } from '../../query/agg/pipeline.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { ChangeStreamClusterCursor, type ShardStream } from '../change_stream_cursor.js';
import { RouterEventFilter } from '../change_stream_events.js';
import { ChangeStreamMerge } from '../change_stream_merge.js';
import { mergeUnsorted } from '../merge/stream_merge.js';
import type { RouterContext } from '../router_services.js';
import { emptyWithoutDatabase, withStaleRetry } from '../versioned_request.js';
import { openShardCursors, targetShards } from './cluster_find.js';

const NON_RESUMABLE = ['NonResumableChangeStreamError'];

// aggregate with $changeStream through the router: the stream is opened on every shard (a
// collection may have chunks on any, or come to), all from one start point: the client's, or the
// router's cluster time. The router merges them by resume token (ChangeStreamClusterCursor),
// looks up `updateLookup`'s documents itself and runs the stages that follow.
export async function runClusterChangeStream(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  const { coll, raw, spec, following, stages } = parseChangeStreamCommand(cmd, ctx.db);
  if (!mentionsChangeStream(stages)) validatePipeline(stages);
  checkFollowingStages(following);
  const cursorOption = optionalDoc(cmd, 'cursor');
  if (cursorOption === undefined) throw new MongoError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
  const batchSize = optionalNonNegative(cursorOption, 'batchSize');

  const startTime = startTimeOf(ctx, spec);
  const shardSpec: Doc = { ...(raw as Doc) };
  delete shardSpec.resumeAfter;
  delete shardSpec.startAfter;
  shardSpec.startAtOperationTime = startTime;
  // The router answers updateLookup by its own read, of the document where it is now.
  if (spec.fullDocument === 'updateLookup') delete shardSpec.fullDocument;
  const shardCmd: Doc = { aggregate: cmd.aggregate, pipeline: [{ $changeStream: shardSpec }], cursor: {} };

  const resume = spec.start.kind === 'resumeAfter' || spec.start.kind === 'startAfter' ? spec.start : undefined;
  const firstPromise = resume?.token._data ?? highWaterMarkToken(startTime)._data;
  const merge = new ChangeStreamMerge(firstPromise);
  const filter = new RouterEventFilter(resume?.token._data, resume !== undefined && resume.data.tokenType !== 0);
  const streams = await openOnShards(ctx, shardCmd, merge);
  const cursor = new ChangeStreamClusterCursor(ctx.router, streams, merge, filter, finisher(ctx, spec, stages, cmd), newShardJoiner(ctx, shardCmd, streams, merge), reopener(ctx, shardSpec, shardCmd));
  const ns = coll === undefined ? `${ctx.db}.$cmd.aggregate` : `${ctx.db}.${coll}`;
  let firstBatch: Doc[];
  try {
    firstBatch = await cursor.firstBatch(batchSize);
  } catch (err) {
    await cursor.close();
    throw err;
  }
  if (cursor.isEnded) return { cursor: { firstBatch, postBatchResumeToken: cursor.postBatchResumeToken(), id: Long.ZERO, ns }, ok: 1 };
  return ctx.router.cursors.openForwarded(ns, cursor, firstBatch);
}

// A start without a token or time is one tick after the router's time, given to every shard (as
// mongos does), so that they all start at the same point, after every write whose reply the router
// has seen; a token's streams start at its time, and the router passes over what comes up to it.
function startTimeOf(ctx: RouterContext, spec: ChangeStreamSpec): Timestamp {
  switch (spec.start.kind) {
    case 'startAtOperationTime': return spec.start.ts;
    case 'resumeAfter':
    case 'startAfter': return spec.start.data.clusterTime;
    default: return tickAfter(ctx.router.clock.now());
  }
}

async function openOnShards(ctx: RouterContext, shardCmd: Doc, merge: ChangeStreamMerge): Promise<Map<string, ShardStream>> {
  const shards = await ctx.router.shardRegistry.all();
  const streams = new Map<string, ShardStream>();
  const opened = await Promise.allSettled(shards.map((shard) => openOnShard(ctx, shard, shardCmd)));
  let failure: unknown;
  for (const r of opened) {
    if (r.status === 'rejected') failure ??= r.reason;
    else join(r.value, streams, merge);
  }
  if (failure !== undefined) {
    await Promise.all([...streams.values()].filter((s) => !s.id.isZero()).map((s) => ctx.router.client.command(s.host, s.db, { killCursors: s.collection, cursors: [s.id] }).catch(() => undefined)));
    throw failure;
  }
  return streams;
}

async function openOnShard(ctx: RouterContext, shard: ShardType, shardCmd: Doc): Promise<{ stream: ShardStream; cursor: Doc }> {
  const reply = checkOk(await ctx.router.client.command(shard.host, ctx.db, shardCmd));
  const cursor = reply.cursor as Doc;
  const stream = { shard: shard._id, host: shard.host, db: ctx.db, collection: String(cursor.ns).slice(ctx.db.length + 1), id: cursor.id as Long };
  return { stream, cursor };
}

function join(opened: { stream: ShardStream; cursor: Doc }, streams: Map<string, ShardStream>, merge: ChangeStreamMerge): void {
  const { stream, cursor } = opened;
  const promised = String((cursor.postBatchResumeToken as Doc)._data);
  streams.set(stream.shard, stream);
  merge.addShard(stream.shard, promised);
  merge.add(stream.shard, cursor.firstBatch as Doc[], promised, stream.id.isZero());
}

// A shard added to the cluster joins an open stream from the stream's postBatchResumeToken: it
// could have had no chunk of anything watched before it was added (or from the router's time, if
// its oplog begins after that token).
function newShardJoiner(ctx: RouterContext, shardCmd: Doc, streams: Map<string, ShardStream>, merge: ChangeStreamMerge): () => Promise<void> {
  return async () => {
    await ctx.router.shardRegistry.reload();
    for (const shard of await ctx.router.shardRegistry.all()) {
      if (streams.has(shard._id)) continue;
      const from = decodeResumeToken({ _data: merge.postBatchResumeToken() }).clusterTime;
      const at = (time: Timestamp): Doc => ({ ...shardCmd, pipeline: [{ $changeStream: { ...(shardCmd.pipeline as Doc[])[0]!.$changeStream as Doc, startAtOperationTime: time } }] });
      const opened = await openOnShard(ctx, shard, at(from)).catch((err: unknown) => {
        if (err instanceof MongoError && err.code === ErrorCodes.ChangeStreamHistoryLost) return openOnShard(ctx, shard, at(ctx.router.clock.now()));
        throw err;
      });
      if (!streams.has(shard._id)) join(opened, streams, merge);
    }
  };
}

function reopener(ctx: RouterContext, shardSpec: Doc, shardCmd: Doc): (stream: ShardStream, startAfter: Doc) => Promise<Doc> {
  return async (stream, startAfter) => {
    const spec: Doc = { ...shardSpec, startAfter };
    delete spec.startAtOperationTime;
    const reply = checkOk(await ctx.router.client.command(stream.host, stream.db, { ...shardCmd, pipeline: [{ $changeStream: spec }] }));
    return reply.cursor as Doc;
  };
}

// What happens to a released event on the router: the document of an update looked up (for
// updateLookup), then the stages that follow $changeStream, which must leave `_id` alone.
function finisher(ctx: RouterContext, spec: ChangeStreamSpec, stages: Doc[], cmd: Doc): (event: Doc) => Promise<Doc | undefined> {
  const variables = letVariables(cmd);
  return async (event) => {
    let out = event;
    if (spec.fullDocument === 'updateLookup' && event.operationType === 'update') out = withFullDocument(event, await lookUp(ctx, event));
    if (stages.length === 0) return out;
    const pctx = { db: ctx.db, variables, now: new Date(ctx.router.wallClock.now()), readCollection: () => [] };
    for (const result of runPipeline(stages, [out], pctx)) {
      if (!sameId(result._id, out._id)) {
        throw new MongoError(ErrorCodes.ChangeStreamFatalError, 'Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed.', {}, NON_RESUMABLE);
      }
      return result;
    }
    return undefined;
  };
}

function sameId(a: unknown, b: unknown): boolean {
  return isPlainObject(a) && isPlainObject(b) && a._data === b._data && Object.keys(a).length === Object.keys(b).length;
}

// The document as it is now, read through the router by its document key (null when gone).
async function lookUp(ctx: RouterContext, event: Doc): Promise<Doc | null> {
  const ns = event.ns as Doc;
  const db = String(ns.db);
  const key = event.documentKey as Doc;
  return emptyWithoutDatabase(withStaleRetry(ctx.router, `${db}.${String(ns.coll)}`, async (routing) => {
    const streams = await openShardCursors(ctx.router, routing, db, targetShards(routing, key), { find: ns.coll, filter: key, limit: 1, singleBatch: true });
    for await (const doc of mergeUnsorted(streams)) return doc;
    return null;
  }), null);
}

// fullDocument where MongoDB puts it: after the event's times, before its namespace.
function withFullDocument(event: Doc, fullDocument: Doc | null): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(event)) {
    if (k === 'ns') out.fullDocument = fullDocument;
    if (k !== 'fullDocument') out[k] = v;
  }
  if (!('fullDocument' in out)) out.fullDocument = fullDocument;
  return out;
}
