import { isPlainObject, type Doc } from '../../bson/values.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalDoc, optionalNumber } from '../../command_layer/args.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { ownedDocuments } from './orphan_filter.js';
import { commandCollation } from './collection_collation.js';

export const countCommand: CommandDefinition = {
  names: ['count'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const query = optionalDoc(cmd, 'query') ?? {};
    const limit = Math.abs(Math.trunc(optionalNumber(cmd, 'limit') ?? 0));
    const skip = Math.trunc(optionalNumber(cmd, 'skip') ?? 0);
    if (skip < 0) throw new MongoError(ErrorCodes.BadValue, `skip value is negative in count query`);
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    if (!coll) return { n: 0, ok: 1 };
    const keep = ownedDocuments(ctx, cmd, ns);
    if (Object.keys(query).length === 0 && cmd.hint === undefined && !keep) {
      const total = storage.stats.get(coll.entry.id).count;
      const afterSkip = Math.max(0, total - skip);
      return { n: limit > 0 ? Math.min(limit, afterSkip) : afterSkip, ok: 1 };
    }
    const hint = cmd.hint !== undefined && (typeof cmd.hint === 'string' || isPlainObject(cmd.hint)) ? cmd.hint : undefined;
    let n = 0;
    for (const _ of prepareFind(storage, coll, { filter: query as Doc, skip, limit, hint, collation: commandCollation(storage, ns, cmd.collation), keep }).results) n += 1;
    return { n, ok: 1 };
  },
};
