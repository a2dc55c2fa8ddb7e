import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { optionalDoc } from '../../command_layer/args.js';
import { runPipeline, validatePipeline } from '../../query/agg/pipeline.js';
import { checkOk, fetchAll } from '../../wire/remote_cursor.js';
import { checkCurrentOpStage, CURRENT_OP_COMMAND_OPTIONS } from '../../command_layer/current_op_stage.js';
import { compileFilter } from '../../query/match/matcher.js';
import type { RouterCommand, RouterContext } from '../router_services.js';
import { collStatsPerShard } from './cluster_coll_stats.js';
import { operationsInFlightOf } from '../../command_layer/operations_in_flight.js';
import { listSampledQueriesFilter } from '../query_analysis/list_sampled_queries.js';
import { writeSampledQueries } from '../query_analysis/query_analysis_jobs.js';

// Aggregations whose first stage describes the cluster rather than reading documents are answered
// by the router itself: `$collStats` on a user collection (one document per shard), and
// `{aggregate: 1}` on admin starting with `$shardedDataDistribution`, `$listSampledQueries` or `$currentOp`. The stages
// after it run on the router. Every other aggregate goes to `inner`.
export function withClusterSourceStages(inner: RouterCommand): RouterCommand {
  return {
    names: inner.names,
    run(ctx, cmd) {
      const first = Array.isArray(cmd.pipeline) && isPlainObject(cmd.pipeline[0]) ? cmd.pipeline[0] : undefined;
      const userDb = ctx.db !== 'config' && ctx.db !== 'admin';
      if (first && '$collStats' in first && typeof cmd.aggregate === 'string' && userDb) return collStatsAggregate(ctx, cmd);
      if (first && '$shardedDataDistribution' in first && ctx.db === 'admin' && cmd.aggregate === 1) return shardedDataDistribution(ctx, cmd);
      if (first && '$currentOp' in first) return currentOpAggregate(ctx, cmd, first.$currentOp);
      if (first && '$listSampledQueries' in first) return listSampledQueries(ctx, cmd, first.$listSampledQueries);
      return inner.run(ctx, cmd);
    },
  };
}

async function collStatsAggregate(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  validatePipeline(cmd.pipeline);
  const [stage, ...rest] = cmd.pipeline;
  const ns = `${ctx.db}.${String(cmd.aggregate)}`;
  const cursorSpec = requireCursor(cmd);
  const docs = await collStatsPerShard(ctx, ns, stage!.$collStats as Doc);
  return answer(ctx, cmd, cursorSpec, ns, docs, rest);
}

// Every shard's operations, as mongos lists them: each names its shard, and its opid is prefixed
// with the shard's name ("shard0:3"), which is what killOp through mongos would take. With
// `localOps: true`, the router's own operations instead (command_layer/operations_in_flight.ts), whose opids its
// killOp takes, and its query analyzers (mongos's `desc: 'query analyzer'` entries).
async function currentOpAggregate(ctx: RouterContext, cmd: Doc, spec: unknown): Promise<Doc> {
  checkCurrentOpStage(ctx.db, cmd, spec);
  const [, ...rest] = cmd.pipeline as Doc[];
  validatePipeline(rest);
  const cursorSpec = requireCursor(cmd);
  const local = (spec as Doc).localOps === true;
  const ops = local ? [...operationsInFlightOf(ctx.router).list(ctx.router.wallClock.now()), ...ctx.router.queryAnalysis.currentOp()] : await shardOperations(ctx);
  return answer(ctx, cmd, cursorSpec, 'admin.$cmd.aggregate', ops, rest);
}

async function shardOperations(ctx: RouterContext): Promise<Doc[]> {
  const shards = await ctx.router.shardRegistry.all();
  const perShard = await Promise.all(shards.map(async (shard) => {
    const reply = checkOk(await ctx.router.client.command(shard.host, 'admin', { currentOp: 1 }));
    return (reply.inprog as Doc[]).map((op) => ({ ...op, shard: shard._id, opid: `${shard._id}:${String(op.opid)}` }));
  }));
  return perShard.flat();
}

// The queries routers sampled (config.sampledQueries on the config server), this router's own
// written first, so that a query it just sampled is listed.
async function listSampledQueries(ctx: RouterContext, cmd: Doc, spec: unknown): Promise<Doc> {
  const filter = listSampledQueriesFilter(ctx.db, cmd, spec);
  const [, ...rest] = cmd.pipeline as Doc[];
  validatePipeline(rest);
  const cursorSpec = requireCursor(cmd);
  await writeSampledQueries(ctx.router);
  const docs = await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', { find: 'sampledQueries', filter });
  return answer(ctx, cmd, cursorSpec, 'admin.$cmd.aggregate', docs, rest);
}

// The currentOp command, which mongos runs as $currentOp: what is not an option of the command is
// a filter on the operations, with the full query language.
export const clusterCurrentOpCommand: RouterCommand = {
  names: ['currentOp'],
  adminOnly: true,
  async run(ctx, cmd) {
    const filter: Doc = {};
    for (const [k, v] of Object.entries(cmd)) if (!CURRENT_OP_COMMAND_OPTIONS.has(k)) filter[k] = v;
    const matcher = compileFilter(filter);
    return { inprog: (await shardOperations(ctx)).filter((op) => matcher.matches(op)), ok: 1 };
  },
};

// mongos 7.0's shape: per sharded collection, each shard's owned and orphaned documents and
// bytes. Every shard is asked directly (unversioned), so one that gave away its last chunk still
// shows the orphans it keeps; each answers from one read of its storage, so its count and its
// orphans (the counters of its range deletion tasks) are of the same moment. A shard appears when
// it owns chunks of the collection or holds any of its documents.
async function shardedDataDistribution(ctx: RouterContext, cmd: Doc): Promise<Doc> {
  const [, ...rest] = cmd.pipeline as Doc[];
  validatePipeline(rest);
  const cursorSpec = requireCursor(cmd);
  const collections = await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', {
    find: 'collections', filter: { unsplittable: { $ne: true } }, sort: { _id: 1 },
  });
  const shards = await ctx.router.shardRegistry.all();
  const docs: Doc[] = [];
  for (const coll of collections) {
    const ns = String(coll._id);
    const owners = new Set((await fetchAll(ctx.router.client, ctx.router.options.configHost, 'config', {
      aggregate: 'chunks', pipeline: [{ $match: { uuid: coll.uuid } }, { $group: { _id: '$shard' } }], cursor: {},
    })).map((d) => String(d._id)));
    const perShard = await Promise.all(shards.map(async (shard) => ({ shard: shard._id, stats: await storageStatsOn(ctx, shard.host, ns) })));
    const present = perShard.filter(({ shard, stats }) => owners.has(shard) || num(stats.count) > 0);
    // config.system.sessions' one chunk is the config server's, which is not a shard: MongoDB
    // lists it under the shard that holds it, docshard under none, so not at all.
    if (present.length === 0) continue;
    docs.push({ ns, shards: present.map(({ shard, stats }) => ownership(shard, stats)) });
  }
  return answer(ctx, cmd, cursorSpec, 'admin.$cmd.aggregate', docs, rest);
}

async function storageStatsOn(ctx: RouterContext, host: string, ns: string): Promise<Doc> {
  const db = ns.slice(0, ns.indexOf('.'));
  const reply = checkOk(await ctx.router.client.command(host, db, { aggregate: ns.slice(db.length + 1), pipeline: [{ $collStats: { storageStats: {} } }], cursor: {} }));
  const [stats] = (reply.cursor as Doc).firstBatch as Doc[];
  return stats!.storageStats as Doc;
}

function ownership(shardName: string, storage: Doc): Doc {
  const orphans = num(storage.numOrphanDocs);
  const orphanedBytes = num(storage.orphanedSizeBytes);
  return {
    shardName, numOrphanedDocs: orphans, numOwnedDocuments: num(storage.count) - orphans,
    ownedSizeBytes: num(storage.size) - orphanedBytes, orphanedSizeBytes: orphanedBytes,
  };
}

function num(v: unknown): number {
  return isNumber(v) ? toDouble(v) : 0;
}

function requireCursor(cmd: Doc): Doc {
  const cursorSpec = optionalDoc(cmd, 'cursor');
  if (!cursorSpec) throw new MongoError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
  return cursorSpec;
}

// The rest of the pipeline runs here over the handful of documents the source stage produced;
// it has no collections to read, so $lookup and $unionWith are refused rather than given none.
function answer(ctx: RouterContext, cmd: Doc, cursorSpec: Doc, ns: string, docs: Doc[], rest: Doc[]): Promise<Doc> {
  const output = runPipeline(rest, docs, {
    db: ctx.db,
    variables: optionalDoc(cmd, 'let'),
    now: new Date(ctx.router.wallClock.now()),
    readCollection: (name) => {
      throw new MongoError(ErrorCodes.NotImplemented, `reading ${ctx.db}.${name} after a cluster statistics stage is not supported`);
    },
  })[Symbol.iterator]();
  const next = (): Doc | undefined => {
    const r = output.next();
    return r.done ? undefined : r.value;
  };
  const cursor = { next: () => Promise.resolve(next()), close: () => Promise.resolve() };
  return ctx.router.cursors.firstBatch(ns, cursor, typeof cursorSpec.batchSize === 'number' ? cursorSpec.batchSize : undefined);
}
