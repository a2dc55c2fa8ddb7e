import { valuesEqual } from '../../bson/compare.js';
import { parseCollation, withCollation, type StringComparator } from '../../bson/collation.js';
import type { Doc } from '../../bson/values.js';
import { distinctValues } from './distinct_values.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { CommandDefinition } from '../command.js';
import { collectionArg, optionalDoc, requireString } from '../../command_layer/args.js';
import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { ownedDocuments } from './orphan_filter.js';
import { commandCollation } from './collection_collation.js';

export const distinctCommand: CommandDefinition = {
  names: ['distinct'],
  run(ctx, cmd) {
    const ns = `${ctx.db}.${collectionArg(cmd)}`;
    const { key, query } = parseDistinct(cmd);
    const { storage } = ctx.node;
    const collation = commandCollation(storage, ns, cmd.collation);
    const found = () => prepareFind(storage, storage.getCollection(ns), { filter: query, hint: cmd.hint, collation, keep: ownedDocuments(ctx, cmd, ns) }).results;
    return { values: distinctOf(found, key, collation), ok: 1 };
  },
};

export function parseDistinct(cmd: Doc): { key: string; query: Doc; collation: StringComparator | undefined } {
  const key = requireString(cmd, 'key');
  if (key.length === 0) throw new MongoError(ErrorCodes.BadValue, 'FieldPath cannot be constructed with empty string');
  return { key, query: optionalDoc(cmd, 'query') ?? {}, collation: parseCollation(cmd.collation) };
}

// The distinct values of `key` over the documents `docs` yields, read under the collation.
export function distinctOf(docs: () => Iterable<{ doc: Doc }>, key: string, collation: StringComparator | undefined): unknown[] {
  const values: unknown[] = [];
  withCollation(collation, () => {
    for (const out of docs()) {
      for (const v of distinctValues(out.doc, key)) {
        if (v === undefined) continue;
        if (!values.some((x) => valuesEqual(x, v))) values.push(v);
      }
    }
  });
  return values;
}
