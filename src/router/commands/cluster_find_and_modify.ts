import { MongoError } from '../../base/errors.js';
import { parseCollation, withCollation } from '../../bson/collation.js';
import { isNumber, isPlainObject, toDouble, type Doc } from '../../bson/values.js';
import { collectionArg, optionalDoc } from '../../command_layer/args.js';
import { compileSort } from '../../query/sort.js';
import { forwardableWrite } from '../remote_cursor_stream.js';
import type { RouterCommand } from '../router_services.js';
import { shardThatRanStatement } from '../retried_statement_shard.js';
import { targetUpdateOrDelete } from '../targeter.js';
import { sendToShard, throwIfStale, versionFields, withStaleRetry } from '../versioned_request.js';

// findAndModify goes to the one shard its query targets; without the full shard key it first
// asks every targeted shard for its first match in the command's sort order and writes the
// first of those on its shard (MongoDB 7.0's two-phase write: the sort holds across shards); a
// retry goes to the shard where the statement ran.
export const clusterFindAndModifyCommand: RouterCommand = {
  names: ['findAndModify', 'findandmodify'],
  async run(ctx, cmd) {
    const coll = collectionArg(cmd);
    const ns = `${ctx.db}.${coll}`;
    const query = optionalDoc(cmd, 'query') ?? {};
    return withStaleRetry(ctx.router, ns, async (routing) => {
      const send = async (shard: string, body: Doc): Promise<Doc> => throwIfStale(await sendToShard(ctx.router, shard, ctx.db, { ...body, ...versionFields(routing, shard) }));
      if (!routing.cm) return send(routing.db.primary, forwardableWrite(cmd));
      const t = targetUpdateOrDelete(routing.cm, query, false);
      if (t.exactKey === undefined && cmd.upsert === true) {
        throw new MongoError(61, 'Query for sharded findAndModify must contain the shard key');
      }
      const shards = [...t.shards].sort();
      if (shards.length === 1) return send(shards[0]!, forwardableWrite(cmd));
      const ran = await shardThatRanStatement(ctx.router, routing.cm, cmd, isNumber(cmd.stmtId) ? toDouble(cmd.stmtId) : 0);
      if (ran !== undefined) return send(ran, forwardableWrite(cmd));
      const sort = isPlainObject(cmd.sort) && Object.keys(cmd.sort).length > 0 ? cmd.sort : undefined;
      // With a sort, each shard's first match is compared on the router, so the whole document
      // comes back; without one, any match will do.
      const lookup: Doc = { find: coll, filter: query, sort, limit: 1, singleBatch: true, projection: sort ? undefined : { _id: 1 }, collation: cmd.collation, let: cmd.let };
      const firsts = await Promise.all(shards.map(async (shard) => {
        const found = await send(shard, lookup);
        const [doc] = isPlainObject(found.cursor) ? (found.cursor.firstBatch as Doc[]) : [];
        return doc === undefined ? [] : [{ shard, doc }];
      }));
      const matches = firsts.flat();
      if (sort) {
        const compare = compileSort(sort);
        withCollation(parseCollation(cmd.collation), () => matches.sort((a, b) => compare(a.doc, b.doc)));
      }
      const chosen = matches[0];
      if (chosen) return send(chosen.shard, { ...forwardableWrite(cmd), query: { $and: [query, { _id: chosen.doc._id }] } });
      return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
    }, true);
  },
};
