import { ObjectId } from 'bson';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isPlainObject, type Doc } from '../../bson/values.js';
import type { RouterContext } from '../router_services.js';
import { clusterInsertCommand, clusterUpdateCommand } from './cluster_write.js';
import { clusterCreateCommand } from './cluster_ddl.js';

const BATCH = 1000;

function target(ctx: RouterContext, spec: unknown): { db: string; coll: string } {
  if (typeof spec === 'string') return { db: ctx.db, coll: spec };
  if (isPlainObject(spec)) {
    const coll = spec.coll ?? spec.into;
    const db = typeof spec.db === 'string' ? spec.db : ctx.db;
    if (typeof coll === 'string') return { db, coll };
    if (isPlainObject(coll) && typeof coll.coll === 'string') return { db: typeof coll.db === 'string' ? coll.db : db, coll: coll.coll };
  }
  throw new MongoError(ErrorCodes.FailedToParse, '$out/$merge requires a target collection');
}

// $out and $merge through the router: the merged results are written back through the router's
// own write path, so every document lands on the shard that owns it.
export async function writeOutputStage(ctx: RouterContext, stage: Doc, output: AsyncIterable<Doc>): Promise<void> {
  const docs: Doc[] = [];
  for await (const d of output) docs.push(d._id === undefined ? { _id: new ObjectId(), ...d } : d);
  if ('$out' in stage) {
    const { db, coll } = target(ctx, stage.$out);
    const octx = { ...ctx, db };
    await ctx.router.client.command(ctx.router.options.configHost, 'admin', { _configsvrDropCollection: `${db}.${coll}` });
    ctx.router.catalogCache.invalidateCollection(`${db}.${coll}`);
    for (let i = 0; i < docs.length; i += BATCH) {
      checkWrite(await clusterInsertCommand.run(octx, { insert: coll, documents: docs.slice(i, i + BATCH), ordered: true, $db: db }));
    }
    if (docs.length === 0) await clusterCreateCommand.run(octx, { create: coll, $db: db });
    return;
  }
  const spec = isPlainObject(stage.$merge) ? stage.$merge : { into: stage.$merge };
  const { db, coll } = target(ctx, spec);
  const on = (Array.isArray(spec.on) ? spec.on : [spec.on ?? '_id']) as string[];
  const whenMatched = spec.whenMatched ?? 'merge';
  const whenNotMatched = spec.whenNotMatched ?? 'insert';
  const octx = { ...ctx, db };
  for (const doc of docs) {
    const q: Doc = {};
    for (const f of on) q[f] = doc[f] ?? null;
    if (whenMatched === 'fail') {
      const reply = await clusterInsertCommand.run(octx, { insert: coll, documents: [doc], $db: db });
      const [err] = (reply.writeErrors as Doc[] | undefined) ?? [];
      if (err) throw new MongoError(Number(err.code), String(err.errmsg), { keyPattern: err.keyPattern ?? { _id: 1 }, keyValue: err.keyValue ?? q });
      continue;
    }
    const { _id, ...fields } = doc;
    const u = whenMatched === 'replace' ? doc : whenMatched === 'keepExisting' ? { $setOnInsert: fields } : { $set: fields };
    const reply = checkWrite(await clusterUpdateCommand.run(octx, { update: coll, updates: [{ q, u, upsert: whenNotMatched === 'insert' }], $db: db }));
    if (whenNotMatched === 'fail' && Number(reply.n) === 0) throw new MongoError(13113, `$merge could not find a matching document in the target collection for at least one document in the source collection`);
  }
}

function checkWrite(reply: Doc): Doc {
  const [err] = (reply.writeErrors as Doc[] | undefined) ?? [];
  if (err) throw new MongoError(Number(err.code), String(err.errmsg), err);
  return reply;
}
