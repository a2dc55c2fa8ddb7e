import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import { ShardKeyPattern } from '../../catalog/shard_key_pattern.js';
import { prepareFind } from '../../query/exec/find_query.js';
import type { CommandDefinition } from '../command.js';
import { requireDoc, requireString } from '../../command_layer/args.js';

// splitVector with force: the median shard key of the documents in [min, max), read in shard key
// order through the shard key index (the chunk splitter's "find" and "bounds" forms use it).
export const splitVectorCommand: CommandDefinition = {
  names: ['splitVector'],
  run(ctx, cmd) {
    const ns = requireString(cmd, 'splitVector');
    const keyPattern = requireDoc(cmd, 'keyPattern');
    const min = requireDoc(cmd, 'min');
    const max = requireDoc(cmd, 'max');
    const { storage } = ctx.node;
    const coll = storage.getCollection(ns);
    if (!coll) return { splitKeys: [], ok: 1 };
    const index = coll.indexes.find((i) => i.collation === undefined && compareValues(i.keyPattern, keyPattern) === 0);
    if (!index) throw new MongoError(ErrorCodes.IndexNotFound, `couldn't find index over splitting key ${JSON.stringify(keyPattern)}`);
    const pattern = new ShardKeyPattern(keyPattern);
    const keys = [...prepareFind(storage, coll, { filter: {}, hint: index.name, min, max, includeHidden: true }).results].map((r) => pattern.extractShardKeyFromDoc(r.doc));
    if (keys.length < 2) return { splitKeys: [], ok: 1 };
    const median = keys[Math.floor(keys.length / 2)]!;
    // A median equal to the chunk's min or to its smallest key would leave one side empty.
    if (compareValues(median, min) === 0 || compareValues(median, keys[0]!) === 0) return { splitKeys: [], ok: 1 };
    return { splitKeys: [median], ok: 1 };
  },
};
