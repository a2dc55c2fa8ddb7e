import type { Doc } from '../../bson/values.js';
import { checkOk } from '../../wire/remote_cursor.js';
import type { RouterContext } from '../router_services.js';
import { sendToShard, throwIfStale, versionFields, withStaleRetry } from '../versioned_request.js';
import { targetShards } from './cluster_find.js';

// $collStats as mongos runs it: on every shard the collection's routing reaches (each chunk owner
// of a sharded collection, the primary shard of an unsharded one), one document per shard tagged
// with `shard`, which getShardDistribution() and $shardedDataDistribution key on. A database
// that does not exist yields no documents, as mongos answers aggregates on one.
export async function collStatsPerShard(ctx: RouterContext, ns: string, spec: Doc): Promise<Doc[]> {
  const db = ns.slice(0, ns.indexOf('.'));
  const coll = ns.slice(db.length + 1);
  if (!(await ctx.router.catalogCache.getDatabase(db, { create: false }))) return [];
  return withStaleRetry(ctx.router, ns, (routing) => Promise.all(targetShards(routing, {}).map(async (shard) => {
    const cmd = { aggregate: coll, pipeline: [{ $collStats: spec }], cursor: {}, ...versionFields(routing, shard) };
    const reply = checkOk(throwIfStale(await sendToShard(ctx.router, shard, db, cmd)));
    const [stats] = (reply.cursor as Doc).firstBatch as Doc[];
    const { ns: statsNs, ...rest } = stats!;
    return { ns: statsNs, shard, ...rest };
  })));
}
