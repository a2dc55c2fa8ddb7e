import { deserializeDocument, isPlainObject, type Doc } from '../../bson/values.js';
import { RawDocument } from '../../wire/raw_bson.js';
import { optionalDoc, optionalNonNegative, requireString } from '../../command_layer/args.js';
import { countStages, findStages, viewAggregate } from '../../command_layer/view_stages.js';
import type { ResolvedView } from '../resolved_view.js';
import type { RouterContext } from '../router_services.js';
import { clusterAggregateCommand } from './cluster_read.js';

// A read of a view through the router: the primary shard, which holds the views, answers
// CommandOnShardedViewNotSupportedOnMongod with the resolved view (the collection under it and
// the pipelines in front), and the router runs that as an aggregation across the shards, as
// mongos does.
export async function runResolvedView(ctx: RouterContext, name: string, cmd: Doc, view: ResolvedView): Promise<Doc> {
  const aggregate = (stages: unknown[], cursor: Doc = {}): Promise<Doc> =>
    clusterAggregateCommand.run(ctx, viewAggregate(ctx.db, view.coll, view.pipeline, stages, cursor, cmd)) as Promise<Doc>;
  switch (name) {
    case 'find': {
      const batchSize = optionalNonNegative(cmd, 'batchSize');
      return aggregate(findStages(cmd), batchSize === undefined ? {} : { batchSize });
    }
    case 'count': {
      const [counted] = firstBatch(await aggregate(countStages(cmd)));
      return { n: isPlainObject(counted) ? Number(counted.n) : 0, ok: 1 };
    }
    case 'distinct': {
      const path = `$${requireString(cmd, 'key')}`;
      const stages = [
        { $match: optionalDoc(cmd, 'query') ?? {} },
        { $unwind: { path, preserveNullAndEmptyArrays: true } },
        { $group: { _id: null, values: { $addToSet: path } } },
      ];
      const [grouped] = firstBatch(await aggregate(stages));
      return { values: isPlainObject(grouped) && Array.isArray(grouped.values) ? grouped.values : [], ok: 1 };
    }
    default:
      return aggregate(Array.isArray(cmd.pipeline) ? cmd.pipeline : [], optionalDoc(cmd, 'cursor') ?? {});
  }
}

// The answer's documents decoded: the router passes shards' documents on as their bytes.
function firstBatch(reply: Doc): Doc[] {
  const cursor = decoded(reply.cursor);
  return isPlainObject(cursor) && Array.isArray(cursor.firstBatch) ? cursor.firstBatch.map(decoded) : [];
}

function decoded(value: unknown): Doc {
  return (value instanceof RawDocument ? deserializeDocument(value.bytes) : value) as Doc;
}
