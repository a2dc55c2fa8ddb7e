import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { collectionArg, commandName } from '../../command_layer/args.js';
import { checkOk } from '../../wire/remote_cursor.js';
import { forwardable } from '../remote_cursor_stream.js';
import type { RouterCommand } from '../router_services.js';
import { shardsForQuery } from '../targeter.js';
import { splitPipeline, type PipelineSplit } from '../merge/pipeline_split.js';
import { validatePipeline } from '../../query/agg/pipeline.js';
import { explainStages } from '../../query/agg/explain_stages.js';
import { letVariables } from '../../command_layer/let_variables.js';
import { sendToShard, throwIfStale, versionFields, withStaleRetry, type Routing } from '../versioned_request.js';

// The filter a command targets by, for explain.
function targetingFilter(inner: Doc): Doc {
  switch (commandName(inner)) {
    case 'find': return (inner.filter as Doc) ?? {};
    case 'count': case 'distinct': return (inner.query as Doc) ?? {};
    case 'findAndModify': case 'findandmodify': return (inner.query as Doc) ?? {};
    case 'update': return (((inner.updates as Doc[]) ?? [])[0]?.q as Doc) ?? {};
    case 'delete': return (((inner.deletes as Doc[]) ?? [])[0]?.q as Doc) ?? {};
    case 'aggregate': {
      const first = Array.isArray(inner.pipeline) ? inner.pipeline[0] : undefined;
      return isPlainObject(first) && isPlainObject(first.$match) ? first.$match : {};
    }
    default: throw new MongoError(ErrorCodes.CommandNotFound, `Explain failed due to unknown command: ${commandName(inner)}`);
  }
}

// An aggregate is explained as mongos runs it: the part each shard runs (which they explain) and
// the part the router runs over their merged results.
function splitOf(inner: Doc): PipelineSplit | undefined {
  if (commandName(inner) !== 'aggregate' || !Array.isArray(inner.pipeline)) return undefined;
  const pipeline: unknown = inner.pipeline;
  validatePipeline(pipeline);
  return splitPipeline(pipeline, letVariables(inner));
}

function targets(routing: Routing, filter: Doc): string[] {
  return routing.cm ? [...shardsForQuery(routing.cm, filter)].sort() : [routing.db.primary];
}

// explain through the router: which shards the command targets (SINGLE_SHARD, SHARD_MERGE or
// SHARD_MERGE_SORT, as mongos names it) and each shard's own plan.
export const clusterExplainCommand: RouterCommand = {
  names: ['explain'],
  async run(ctx, cmd) {
    const inner = cmd.explain;
    if (!isPlainObject(inner)) throw new MongoError(ErrorCodes.TypeMismatch, "BSON field 'explain.explain' is the wrong type, expected type 'object'");
    const ns = `${ctx.db}.${collectionArg(inner)}`;
    const aggregateSplit = splitOf(inner);
    const shardCommand = aggregateSplit === undefined ? forwardable(inner) : { ...forwardable(inner), pipeline: aggregateSplit.shardsPart };
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const shards = targets(routing, targetingFilter(inner));
      const replies = await Promise.all(shards.map(async (shard) => {
        const reply = checkOk(throwIfStale(await sendToShard(ctx.router, shard, ctx.db, {
          explain: { ...shardCommand, ...versionFields(routing, shard) }, verbosity: cmd.verbosity ?? 'allPlansExecution',
        })));
        return { shard, host: await ctx.router.shardRegistry.host(shard), reply };
      }));
      const stage = shards.length === 1 ? 'SINGLE_SHARD' : isPlainObject(inner.sort) ? 'SHARD_MERGE_SORT' : 'SHARD_MERGE';
      const perShard = replies.map(({ shard, host, reply }) => ({
        shardName: shard, connectionString: host, serverInfo: reply.serverInfo,
        ...((reply.queryPlanner as Doc | undefined) ?? {}),
      }));
      const out: Doc = { queryPlanner: { mongosPlannerVersion: 1, winningPlan: { stage, shards: perShard } } };
      if (replies.every((r) => isPlainObject(r.reply.executionStats))) {
        const stats = replies.map((r) => r.reply.executionStats as Doc);
        const sum = (f: string): number => stats.reduce((n, s) => n + Number(s[f] ?? 0), 0);
        out.executionStats = {
          nReturned: sum('nReturned'), totalKeysExamined: sum('totalKeysExamined'), totalDocsExamined: sum('totalDocsExamined'),
          executionStages: { stage, shards: replies.map((r, i) => ({ shardName: r.shard, executionStats: stats[i] })) },
        };
      }
      // As mongos shows an aggregate: the split (with the stages the router runs as its explain
      // shows them) besides which shards were asked and their plans.
      if (aggregateSplit !== undefined) {
        out.mergeType = 'mongos';
        out.splitPipeline = { shardsPart: aggregateSplit.shardsPart, mergerPart: explainStages(aggregateSplit.mergePart) };
      }
      return { ...out, command: inner, ok: 1 };
    });
  },
};
