import { valuesEqual } from '../../bson/compare.js';
import { parseCollation, withCollation } from '../../bson/collation.js';
import { distinctValues } from './distinct_values.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalDoc, requireString } from '../args.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { ownedDocuments } from './orphan_filter.js';

export const distinctCommand: CommandDefinition = {
  names: ['distinct'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const key = requireString(cmd, 'key');
    if (key.length === 0) throw new MongoError(ErrorCodes.BadValue, 'FieldPath cannot be constructed with empty string');
    const query = optionalDoc(cmd, 'query') ?? {};
    const { storage } = ctx.node;
    const collation = parseCollation(cmd.collation);
    const values: unknown[] = [];
    withCollation(collation, () => {
      for (const out of prepareFind(storage, storage.getCollection(ns), { filter: query, hint: cmd.hint, collation, keep: ownedDocuments(ctx, cmd, ns) }).results) {
        for (const v of distinctValues(out.doc, key)) {
          if (v === undefined) continue;
          if (!values.some((x) => valuesEqual(x, v))) values.push(v);
        }
      }
    });
    return { values, ok: 1 };
  },
};
