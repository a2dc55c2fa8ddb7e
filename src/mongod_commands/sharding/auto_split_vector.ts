import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { compareValues } from '../../bson/compare.js';
import type { Doc } from '../../bson/values.js';
import type { CommandDefinition } from '../command.js';
import { optionalNumber, requireDoc, requireString } from '../../command_layer/args.js';
import { scanShardKeyRange } from './shard_key_range_scan.js';

// autoSplitVector (MongoDB 6.0+): keys that cut [min, max) into pieces of at most
// maxChunkSizeBytes each, in shard-key order; documents with one key are never separated. With
// `limit`, at most that many keys, and `continuation` says more would follow.
export const autoSplitVectorCommand: CommandDefinition = {
  names: ['autoSplitVector'],
  run(ctx, cmd) {
    const coll = requireString(cmd, 'autoSplitVector');
    const keyPattern = requireDoc(cmd, 'keyPattern');
    const min = requireDoc(cmd, 'min');
    const max = requireDoc(cmd, 'max');
    const maxChunkSizeBytes = optionalNumber(cmd, 'maxChunkSizeBytes');
    if (maxChunkSizeBytes === undefined || maxChunkSizeBytes <= 0) throw new MongoError(ErrorCodes.InvalidOptions, 'maxChunkSizeBytes must be a positive number');
    const limit = optionalNumber(cmd, 'limit') ?? 0;
    const collection = ctx.node.storage.getCollection(`${ctx.db}.${coll}`);
    if (!collection) return { splitKeys: [], continuation: false, ok: 1 };
    const splitKeys: Doc[] = [];
    let accumulated = 0;
    let previous: Doc | undefined;
    for (const record of scanShardKeyRange(ctx.node.storage, collection, keyPattern, min, max)) {
      const key = record.key();
      const startsKey = previous === undefined || compareValues(key, previous) !== 0;
      // A piece ends before the document that would take it past the size, when that document
      // starts a new key; a run of one key larger than the size stays whole.
      if (startsKey && accumulated > 0 && accumulated + record.bytes > maxChunkSizeBytes) {
        if (limit > 0 && splitKeys.length >= limit) return { splitKeys, continuation: true, ok: 1 };
        splitKeys.push(key);
        accumulated = 0;
      }
      accumulated += record.bytes;
      previous = key;
    }
    return { splitKeys, continuation: false, ok: 1 };
  },
};
