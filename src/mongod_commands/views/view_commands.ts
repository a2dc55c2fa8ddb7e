import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { isVersionedRequest } from '../../shard/shard_metadata.js';
import { splitNamespace } from '../../storage/catalog_entry.js';
import type { CommandContext } from '../command.js';
import { optionalBool, optionalDoc, optionalNonNegative } from '../../command_layer/args.js';
import { parseAggregate, runAggregate, runAggregateInput } from '../crud/aggregate.js';
import { distinctOf, parseDistinct } from '../crud/distinct.js';
import { notOnView, resolveView, type ResolvedView } from './view_catalog.js';
import { countStages, findStages, viewAggregate } from '../../command_layer/view_stages.js';

// Reads of a view run as an aggregation of the collection under it with the views' pipelines in
// front (MongoDB's view resolution); writes and index commands are refused. A routed read gets
// CommandOnShardedViewNotSupportedOnMongod with the resolved view instead: the collection under
// it may be sharded, so the router runs the aggregation across the shards itself.
const READS = new Set(['find', 'count', 'distinct', 'aggregate']);
const REFUSED = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'createIndexes', 'dropIndexes', 'collMod']);

// The command's answer when it names a view; undefined when it does not (or is not about one).
export function runOnView(ctx: CommandContext, name: string, cmd: Doc): Doc | undefined {
  const read = READS.has(name);
  if (!read && !REFUSED.has(name)) return undefined;
  const coll = cmd[name];
  if (typeof coll !== 'string') return undefined;
  const { storage } = ctx.node;
  // The common case costs one map look-up: a database without views has no system.views.
  if (storage.getCollection(`${ctx.db}.system.views`) === undefined) return undefined;
  const ns = `${ctx.db}.${coll}`;
  const view = resolveView(storage, ns);
  if (view === undefined) return undefined;
  if (!read) throw notOnView(ns);
  if (isVersionedRequest(cmd)) {
    throw new MongoError(ErrorCodes.CommandOnShardedViewNotSupportedOnMongod, 'Resolved views on sharded collections must be executed by mongos', { resolvedView: { ns: view.ns, pipeline: view.pipeline } });
  }
  switch (name) {
    case 'find': return findOnView(ctx, cmd, ns, view);
    case 'count': return countOnView(ctx, cmd, view);
    case 'distinct': return distinctOnView(ctx, cmd, view);
    default: return runAggregate(ctx, aggregateOf(ctx, cmd, view, cmd.pipeline, optionalDoc(cmd, 'cursor')), { ns, singleBatch: false });
  }
}

// The aggregate command over the view's collection: the view's pipeline, then `stages`.
function aggregateOf(ctx: CommandContext, cmd: Doc, view: ResolvedView, stages: unknown, cursor: Doc | undefined): Doc {
  if (stages !== undefined && !Array.isArray(stages)) throw new MongoError(ErrorCodes.TypeMismatch, "'pipeline' option must be specified as an array");
  return viewAggregate(ctx.db, splitNamespace(view.ns).coll, view.pipeline, (stages as unknown[] | undefined) ?? [], cursor ?? {}, cmd);
}

function findOnView(ctx: CommandContext, cmd: Doc, ns: string, view: ResolvedView): Doc {
  const batchSize = optionalNonNegative(cmd, 'batchSize');
  const limit = optionalNonNegative(cmd, 'limit');
  const singleBatch = (optionalBool(cmd, 'singleBatch') ?? false) || (limit !== undefined && limit > 0 && limit <= (batchSize ?? 101));
  return runAggregate(ctx, aggregateOf(ctx, cmd, view, findStages(cmd), batchSize === undefined ? {} : { batchSize }), { ns, singleBatch });
}

function countOnView(ctx: CommandContext, cmd: Doc, view: ResolvedView): Doc {
  const [counted] = aggregated(ctx, aggregateOf(ctx, cmd, view, countStages(cmd), undefined));
  return { n: isPlainObject(counted) ? Number(counted.n) : 0, ok: 1 };
}

function distinctOnView(ctx: CommandContext, cmd: Doc, view: ResolvedView): Doc {
  const { key, query, collation } = parseDistinct(cmd);
  const agg = aggregateOf(ctx, cmd, view, [{ $match: query }], undefined);
  return { values: distinctOf(() => [...aggregated(ctx, agg)].map((doc) => ({ doc })), key, collation), ok: 1 };
}

function aggregated(ctx: CommandContext, agg: Doc): Doc[] {
  return [...runAggregateInput(ctx.node.storage, parseAggregate(ctx, agg), new Date(ctx.node.wallClock.now()))];
}
