import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import type { Doc } from '../../bson/values.js';
import { mergeFilter, mergeNoMatchError, type OutputStage } from '../../query/agg/stage_output.js';
import type { RouterContext } from '../router_services.js';
import { clusterInsertCommand, clusterUpdateCommand } from './cluster_write.js';
import { clusterCreateCommand, clusterDropCommand } from './cluster_ddl.js';

const BATCH = 1000;

// $out and $merge through the router: the merged results are written back through the router's
// own write path, so every document lands on the shard that owns it.
export async function writeOutputStage(ctx: RouterContext, stage: OutputStage, output: AsyncIterable<Doc>): Promise<void> {
  const docs: Doc[] = [];
  for await (const d of output) docs.push(d._id === undefined ? { _id: new ObjectId(), ...d } : d);
  const { db, coll } = stage;
  const octx = { ...ctx, db };
  if (stage.kind === '$out') {
    try {
      await clusterDropCommand.run(octx, { drop: coll, $db: db });
    } catch (err) {
      if (!(err instanceof MongoError && err.code === ErrorCodes.NamespaceNotFound)) throw err;
    }
    for (let i = 0; i < docs.length; i += BATCH) {
      checkWrite(await clusterInsertCommand.run(octx, { insert: coll, documents: docs.slice(i, i + BATCH), ordered: true, $db: db }));
    }
    if (docs.length === 0) await clusterCreateCommand.run(octx, { create: coll, $db: db });
    return;
  }
  const { on, whenMatched, whenNotMatched } = stage;
  for (const doc of docs) {
    const q = mergeFilter(doc, on);
    if (whenMatched === 'fail') {
      const reply = await clusterInsertCommand.run(octx, { insert: coll, documents: [doc], $db: db });
      const [err] = (reply.writeErrors as Doc[] | undefined) ?? [];
      if (err) throw new MongoError(Number(err.code), String(err.errmsg), { keyPattern: err.keyPattern ?? { _id: 1 }, keyValue: err.keyValue ?? q });
      continue;
    }
    const { _id, ...fields } = doc;
    const u = whenMatched === 'replace' ? doc : whenMatched === 'keepExisting' ? { $setOnInsert: fields } : { $set: fields };
    const reply = checkWrite(await clusterUpdateCommand.run(octx, { update: coll, updates: [{ q, u, upsert: whenNotMatched === 'insert' }], $db: db }));
    if (whenNotMatched === 'fail' && Number(reply.n) === 0) throw mergeNoMatchError();
  }
}

function checkWrite(reply: Doc): Doc {
  const [err] = (reply.writeErrors as Doc[] | undefined) ?? [];
  if (err) throw new MongoError(Number(err.code), String(err.errmsg), err);
  return reply;
}
