import { withCollation, type StringComparator } from '../../bson/collation.js';
import { compareValues } from '../../bson/compare.js';

// distinct across shards (MongoDB's cluster_distinct_cmd): the router inserts every shard's
// values into one ordered set under the command's collation, so the reply is deduplicated and
// sorted by BSON order (numbers by value across types: 1, 1.0 and NumberLong(1) collapse to the first
// seen), whatever order each shard listed its values in.
export function mergeDistinctValues(shardValues: unknown[][], collation?: StringComparator): unknown[] {
  return withCollation(collation, () => {
    const all = shardValues.flat();
    // Stable, so among equal values the first shard's (in shard order) survives.
    all.sort(compareValues);
    const out: unknown[] = [];
    for (const v of all) {
      if (out.length === 0 || compareValues(out[out.length - 1], v) !== 0) out.push(v);
    }
    return out;
  });
}
