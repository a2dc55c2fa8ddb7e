import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { parseMapReduce } from '../../query/js/map_reduce_command.js';
import { usesScripts } from '../../query/js/script_usage.js';
import { checkScriptingEnabled } from '../../query/js/script_settings.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { mergeSorted, mergeUnsorted } from '../merge/stream_merge.js';
import { RemoteCursorStream } from '../remote_cursor_stream.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { emptyWithoutDatabase, getRouting, sendToShard, throwIfStale, versionFields, withStaleRetry, type Routing } from '../versioned_request.js';
import { openShardCursors, targetShards } from './cluster_find.js';

// Server-side JavaScript through the router. The router runs no script itself (scripting is off on
// routers by default, as --noscripting allows mongos): $where and $function before the pipeline's
// split point run on the shards as any other stage; a merge that would have to run a script
// ($accumulator's $group, a $function after the split point) runs on the database's primary shard,
// over the router's merged input handed to it as $documents; mapReduce maps and reduces on each
// shard, then reduces again and finalizes on a primary shard (`_shardsvrMapReduceFinish`). A
// router started with --noscripting refuses $function, $accumulator and mapReduce with mongod's
// error, and still passes $where on to the shards, as mongos does.

// Refuses a pipeline's scripts on a router started with --noscripting.
export function checkPipelineScripts(pipeline: unknown): void {
  if (usesScripts(pipeline)) checkScriptingEnabled();
}

// The merge part split where a script would first run: the router runs the stages before it, the
// primary shard the rest. Undefined when no stage runs a script.
export function scriptedMerge(mergePart: Doc[]): { routerPart: Doc[]; shardPart: Doc[] } | undefined {
  const at = mergePart.findIndex(usesScripts);
  if (at < 0) return undefined;
  return { routerPart: mergePart.slice(0, at), shardPart: mergePart.slice(at) };
}

// `stages` over `input` on the database's primary shard: the documents go in one command, so the
// input is bounded by the command size (16 MB). The shard's cursor is read as any shard cursor.
export async function mergeOnShard(ctx: RouterContext, routing: Routing, stages: Doc[], input: AsyncIterable<Doc>, cmd: Doc): Promise<RemoteCursorStream> {
  const docs: Doc[] = [];
  for await (const doc of input) docs.push(doc);
  const shard = routing.db.primary;
  const request: Doc = { aggregate: 1, pipeline: [{ $documents: { $literal: docs } }, ...stages], cursor: {} };
  if (cmd.let !== undefined) request.let = cmd.let;
  if (cmd.collation !== undefined) request.collation = cmd.collation;
  if (cmd.maxTimeMS !== undefined) request.maxTimeMS = cmd.maxTimeMS;
  const host = await ctx.router.shardRegistry.host(shard);
  const reply = checkOk(await sendToShard(ctx.router, shard, ctx.db, request));
  return new RemoteCursorStream(ctx.router, host, ctx.db, reply);
}

export const clusterMapReduceCommand: RouterCommand = {
  names: ['mapReduce', 'mapreduce'],
  async run(ctx, cmd) {
    const request = parseMapReduce(cmd, ctx.db);
    const ns = `${ctx.db}.${request.coll}`;
    const partials = await emptyWithoutDatabase(withStaleRetry(ctx.router, ns, async (routing) => {
      const query = request.limit > 0 ? await firstDocuments(ctx, routing, request.coll, request.query, request.sort, request.limit) : request.query;
      const shardCmd: Doc = { mapReduce: request.coll, map: cmd.map, reduce: cmd.reduce, query, out: { inline: 1 } };
      if (cmd.scope !== undefined) shardCmd.scope = cmd.scope;
      if (cmd.collation !== undefined) shardCmd.collation = cmd.collation;
      if (cmd.maxTimeMS !== undefined) shardCmd.maxTimeMS = cmd.maxTimeMS;
      const replies = await Promise.all(targetShards(routing, query).map(async (shard) =>
        checkOk(throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...shardCmd, ...versionFields(routing, shard) })))));
      return replies.flatMap((r) => r.results as Doc[]);
    }), []);
    const out = request.out;
    if (out.kind === 'inline' && partials.length === 0) return { results: [], ok: 1 };
    const outDb = out.kind === 'inline' ? ctx.db : out.db;
    const outRouting = await getRouting(ctx.router, `${outDb}.${out.kind === 'inline' ? request.coll : out.coll}`, out.kind !== 'inline');
    // The primary shard writes the output where an unsharded collection lives; a sharded one's
    // documents belong to their chunks' shards.
    if (out.kind !== 'inline' && outRouting.cm !== undefined) throw new MongoError(ErrorCodes.NotImplemented, `mapReduce output to a sharded collection (${outDb}.${out.coll}) is not supported`);
    const finisher = outRouting.db.primary;
    const finish: Doc = { _shardsvrMapReduceFinish: request.coll, map: cmd.map, reduce: cmd.reduce, out: cmd.out, results: partials };
    if (cmd.finalize !== undefined) finish.finalize = cmd.finalize;
    if (cmd.scope !== undefined) finish.scope = cmd.scope;
    const reply = checkOk(await sendToShard(ctx.router, finisher, ctx.db, finish));
    return 'results' in reply ? { results: reply.results, ok: 1 } : { result: reply.result, ok: 1 };
  },
};

// With a limit, map reads only the first `limit` documents of the query in `sort` order across
// every shard: the router finds them, and the shards map exactly those (by _id).
async function firstDocuments(ctx: RouterContext, routing: Routing, coll: string, query: Doc, sort: Doc | undefined, limit: number): Promise<Doc> {
  const find: Doc = { find: coll, filter: query, limit };
  if (sort !== undefined) find.sort = sort;
  const streams = await openShardCursors(ctx.router, routing, ctx.db, targetShards(routing, query), find);
  const ids: unknown[] = [];
  for await (const doc of sort === undefined ? mergeUnsorted(streams) : mergeSorted(streams, sort)) {
    ids.push(doc._id);
    if (ids.length === limit) break;
  }
  return { $and: [query, { _id: { $in: ids } }] };
}
