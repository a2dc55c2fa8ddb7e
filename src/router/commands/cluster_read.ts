import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { parseCollation } from '../../bson/collation.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { collectionArg, optionalDoc, requireArray, requireString } from '../../command_layer/args.js';
import { checkWriteStageReadConcern, runPipeline, validatePipeline, type PipelineContext } from '../../query/agg/pipeline.js';
import { letVariables } from '../../command_layer/let_variables.js';
import { Long } from 'bson';
import { writeOutputStage } from './cluster_out_stage.js';
import { outputStageOf } from '../../query/agg/stage_output.js';
import { rewriteTextScore } from '../../query/agg/text_score.js';
import { resolvedViewOf } from '../resolved_view.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { mergeCountReplies, shardCountCommand } from '../merge/count_merge.js';
import { mergeDistinctValues } from '../merge/distinct_merge.js';
import { runMergePartAsync } from '../merge/merge_part.js';
import { splitPipeline } from '../merge/pipeline_split.js';
import { mergeSorted, mergeUnsorted } from '../merge/stream_merge.js';
import { forwardable } from '../remote_cursor_stream.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { emptyWithoutDatabase, sendToShard, throwIfStale, versionFields, withStaleRetry } from '../versioned_request.js';
import { clusterCursor, openShardCursors, proxyToConfig, targetShards } from './cluster_find.js';
import { runClusterChangeStream } from './cluster_change_stream.js';
import { isChangeStreamPipeline } from '../../change_streams/change_stream_spec.js';
import { checkPipelineScripts, mergeOnShard, scriptedMerge } from './cluster_scripts.js';

export const clusterCountCommand: RouterCommand = {
  names: ['count'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    if (ctx.db === 'config' || ctx.db === 'admin') return proxyToConfig(ctx, cmd);
    const query = optionalDoc(cmd, 'query') ?? {};
    return emptyWithoutDatabase(withStaleRetry(ctx.router, ns, async (routing) => {
      const shardCmd = shardCountCommand(forwardable(cmd));
      const replies = await Promise.all(targetShards(routing, query).map(async (shard) => {
        const reply = throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...shardCmd, ...versionFields(routing, shard) }));
        return checkOk(reply);
      }));
      return mergeCountReplies(cmd, replies);
    }), { n: 0, ok: 1 });
  },
};

export const clusterDistinctCommand: RouterCommand = {
  names: ['distinct'],
  async run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    requireString(cmd, 'key');
    if (ctx.db === 'config' || ctx.db === 'admin') return proxyToConfig(ctx, cmd);
    const query = optionalDoc(cmd, 'query') ?? {};
    const collation = parseCollation(cmd.collation);
    return emptyWithoutDatabase(withStaleRetry(ctx.router, ns, async (routing) => {
      const replies = await Promise.all(targetShards(routing, query).map(async (shard) => {
        const reply = throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...forwardable(cmd), ...versionFields(routing, shard) }));
        return checkOk(reply).values as unknown[];
      }));
      return { values: mergeDistinctValues(replies, collation), ok: 1 };
    }), { values: [], ok: 1 });
  },
};

// aggregate: the pipeline is split where it stops being per-shard work; shards run their part
// behind a versioned aggregate, the router merges their cursors (sorted when the split says so)
// and runs the rest. Collections read by $lookup/$graphLookup/$unionWith on the router are fetched through the
// router first, since the pipeline engine reads synchronously.
export const clusterAggregateCommand: RouterCommand = {
  names: ['aggregate'],
  async run(ctx, cmd) {
    const raw = requireArray(cmd, 'pipeline');
    const cursorSpec = optionalDoc(cmd, 'cursor');
    if (!cursorSpec) throw new MongoError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
    const batchSize = typeof cursorSpec.batchSize === 'number' ? cursorSpec.batchSize : undefined;
    if (isChangeStreamPipeline(raw)) return runClusterChangeStream(ctx, cmd);
    if (isPlainObject(raw[0]) && '$listLocalSessions' in raw[0]) return localSessions(ctx, cmd, raw.slice(1), batchSize);
    if (ctx.db === 'config' || ctx.db === 'admin' || typeof cmd.aggregate !== 'string') return proxyToConfig(ctx, cmd);
    const coll = cmd.aggregate;
    const ns = `${ctx.db}.${coll}`;
    const validated: unknown = raw;
    validatePipeline(validated);
    const pipeline = rewriteTextScore(validated);
    checkPipelineScripts(pipeline);
    checkWriteStageReadConcern(pipeline, cmd.readConcern);
    const variables = letVariables(cmd);
    const writeStage = outputStageOf(pipeline, ctx.db);
    const collation = parseCollation(cmd.collation);
    const body = writeStage ? pipeline.slice(0, -1) : pipeline;
    const result = await emptyWithoutDatabase(withStaleRetry(ctx.router, ns, async (routing) => {
      const split = splitPipeline(body, variables);
      const first = split.shardsPart[0];
      const filter = first && isPlainObject(first.$match) ? first.$match as Doc : {};
      const shardCmd = { ...forwardable(cmd), pipeline: split.shardsPart, cursor: {} };
      const streams = await openShardCursors(ctx.router, routing, ctx.db, targetShards(routing, filter), shardCmd);
      const merged = split.mergeSort ? mergeSorted(streams, split.mergeSort, collation) : mergeUnsorted(streams);
      const scripted = scriptedMerge(split.mergePart);
      if (scripted !== undefined) {
        const input = runMergePartAsync(scripted.routerPart, merged, await mergeContext(ctx, scripted.routerPart, variables));
        const onShard = await mergeOnShard(ctx, routing, scripted.shardPart, input, cmd);
        return { output: onShard, streams: [...streams, onShard] };
      }
      const pctx = await mergeContext(ctx, split.mergePart, variables);
      return { output: runMergePartAsync(split.mergePart, merged, pctx), streams };
    }), undefined);
    // No database to read: nothing to answer, nor to write.
    if (result === undefined) return { cursor: { firstBatch: [], id: Long.ZERO, ns }, ok: 1 };
    if (writeStage) {
      await writeOutputStage(ctx, writeStage, result.output);
      return { cursor: { firstBatch: [], id: Long.ZERO, ns }, ok: 1 };
    }
    return ctx.router.cursors.firstBatch(ns, clusterCursor(result.output, result.streams), batchSize);
  },
};

// $listLocalSessions lists the sessions this router has seen; the rest of the pipeline runs here.
async function localSessions(ctx: RouterContext, cmd: Doc, rest: unknown[], batchSize: number | undefined): Promise<Doc> {
  const pipeline: unknown = [{ $documents: ctx.router.sessions.list() }, ...rest];
  validatePipeline(pipeline);
  const docs = runPipeline(pipeline, [], { db: ctx.db, readCollection: () => [], variables: letVariables(cmd), now: new Date(ctx.router.wallClock.now()) });
  const ns = `${ctx.db}.$cmd.aggregate`;
  return ctx.router.cursors.firstBatch(ns, clusterCursor(toAsync(docs), []), batchSize);
}

async function* toAsync(docs: Iterable<Doc>): AsyncIterable<Doc> {
  yield* docs;
}

async function mergeContext(ctx: RouterContext, mergePart: Doc[], variables: Record<string, unknown> | undefined): Promise<PipelineContext> {
  const foreign = new Map<string, Doc[]>();
  for (const name of foreignCollections(mergePart)) foreign.set(name, await readAll(ctx, name));
  return {
    db: ctx.db,
    readCollection: (name: string) => foreign.get(name) ?? [],
    variables,
    now: new Date(ctx.router.wallClock.now()),
  };
}

function foreignCollections(stages: unknown): Set<string> {
  const out = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (isPlainObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        if ((k === '$lookup' || k === '$graphLookup') && isPlainObject(x) && typeof x.from === 'string') out.add(x.from);
        if (k === '$unionWith') out.add(typeof x === 'string' ? x : String((x as Doc).coll));
        visit(x);
      }
    }
  };
  visit(stages);
  return out;
}

// A view is read as its pipeline over the collection under it, here on the router.
async function readAll(ctx: RouterContext, coll: string): Promise<Doc[]> {
  const ns = `${ctx.db}.${coll}`;
  try {
    return await withStaleRetry(ctx.router, ns, async (routing) => {
      const streams = await openShardCursors(ctx.router, routing, ctx.db, targetShards(routing, {}), { find: coll, filter: {} });
      const out: Doc[] = [];
      for await (const doc of mergeUnsorted(streams)) out.push(doc);
      return out;
    });
  } catch (err) {
    const view = resolvedViewOf(err);
    if (view === undefined) throw err;
    const docs = await readAll(ctx, view.coll);
    return [...runPipeline(view.pipeline, docs, await mergeContext(ctx, view.pipeline, undefined))];
  }
}
