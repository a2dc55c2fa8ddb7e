import { MongoError } from '../../base/errors.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import { collectionArg, optionalDoc } from '../../commands/args.js';
import { forwardable } from '../remote_cursor_stream.js';
import type { RouterCommand } from '../router_services.js';
import { targetUpdateOrDelete } from '../targeter.js';
import { sendToShard, throwIfStale, versionFields, withStaleRetry } from '../versioned_request.js';

// findAndModify goes to the one shard its query targets; without the full shard key it first
// asks the targeted shards which one holds a matching document (MongoDB 7.0's two-phase write).
export const clusterFindAndModifyCommand: RouterCommand = {
  names: ['findAndModify', 'findandmodify'],
  async run(ctx, cmd) {
    const coll = collectionArg(cmd);
    const ns = `${ctx.db}.${coll}`;
    const query = optionalDoc(cmd, 'query') ?? {};
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const send = async (shard: string, body: Doc): Promise<Doc> => throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...body, ...versionFields(routing, shard) }));
      if (!routing.cm) return send(routing.db.primary, forwardable(cmd));
      const t = targetUpdateOrDelete(routing.cm, query, false);
      if (t.exactKey === undefined && cmd.upsert === true) {
        throw new MongoError(61, 'Query for sharded findAndModify must contain the shard key');
      }
      const shards = [...t.shards].sort();
      if (shards.length === 1) return send(shards[0]!, forwardable(cmd));
      for (const shard of shards) {
        const found = await send(shard, { find: coll, filter: query, sort: cmd.sort, limit: 1, singleBatch: true, projection: { _id: 1 }, collation: cmd.collation, let: cmd.let });
        const [doc] = isPlainObject(found.cursor) ? (found.cursor.firstBatch as Doc[]) : [];
        if (doc) return send(shard, { ...forwardable(cmd), query: { $and: [query, { _id: doc._id }] } });
      }
      return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
    }, true);
  },
};
