import { isNumber, toDouble, type Doc } from '../../bson/values.js';
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
    // A count needs the shard's orphans beside it, which only storageStats carries.
    const asked = spec.count !== undefined && spec.storageStats === undefined ? { ...spec, storageStats: {} } : spec;
    const cmd = { aggregate: coll, pipeline: [{ $collStats: asked }], cursor: {}, ...versionFields(routing, shard) };
    const reply = checkOk(throwIfStale(await sendToShard(ctx.router, shard, db, cmd)));
    const [stats] = (reply.cursor as Doc).firstBatch as Doc[];
    const { ns: statsNs, ...rest } = stats!;
    const { storageStats, ...owned } = ownedView({ ns: statsNs, shard, ...rest });
    return spec.storageStats === undefined ? owned : { ...owned, storageStats };
  })));
}

// Through a router a collection holds what its shards own, so the per-shard counts leave out the
// orphans a shard keeps after giving a range away (its `numOrphanDocs`): they then agree with
// count() and with $shardedDataDistribution. MongoDB counts the orphans in; `size` and
// `numOrphanDocs` keep their meaning, so mongosh's getShardDistribution() shows the owned size too.
function ownedView(stats: Doc): Doc {
  const storage = stats.storageStats as Doc | undefined;
  const orphans = storage !== undefined && isNumber(storage.numOrphanDocs) ? toDouble(storage.numOrphanDocs) : 0;
  if (orphans === 0) return stats;
  const out: Doc = { ...stats, storageStats: { ...storage, count: toDouble(storage!.count) - orphans } };
  if (isNumber(stats.count)) out.count = toDouble(stats.count) - orphans;
  return out;
}
