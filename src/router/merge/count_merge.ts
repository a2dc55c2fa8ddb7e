import { MongoError } from '../../base/errors.js';
import { ErrorCodes } from '../../base/error_codes.js';
import { isNumber, Long, toBigIntExact, toDouble, type Doc } from '../../bson/values.js';

// count across shards (MongoDB's cluster_count_cmd): each shard counts its own matches and the
// router sums them. Skip only makes sense on the total, so shards get none; a limit must then
// let each shard count up to limit+skip.

export function shardCountCommand(count: Doc): Doc {
  const out: Doc = { ...count };
  delete out.skip;
  const limit = Math.abs(integer(count.limit));
  // mongod treats a negative count limit as its absolute value, so the sum uses that too.
  if (limit > 0) out.limit = limit + Math.max(0, integer(count.skip));
  return out;
}

// The client's reply from the shards' ({n, ok: 1}) replies.
export function mergeCountReplies(count: Doc, replies: Doc[]): Doc {
  let total = 0n;
  for (const reply of replies) {
    const n = isNumber(reply.n) ? toBigIntExact(reply.n) : undefined;
    if (n === undefined) throw new MongoError(ErrorCodes.InternalError, `shard count reply without an integral n: ${JSON.stringify(reply)}`);
    total += n;
  }
  return { n: countValue(applySkipLimit(total, count)), ok: 1 };
}

// MongoDB's applySkipLimit on the summed count.
function applySkipLimit(total: bigint, count: Doc): bigint {
  let n = total - BigInt(Math.max(0, integer(count.skip)));
  if (n < 0n) n = 0n;
  const limit = BigInt(Math.abs(integer(count.limit)));
  return limit !== 0n && limit < n ? limit : n;
}

// An int32 when it fits, as mongod's appendNumber does, else a long.
function countValue(n: bigint): unknown {
  return n <= 2147483647n ? Number(n) : Long.fromBigInt(n);
}

function integer(v: unknown): number {
  return isNumber(v) ? Math.trunc(toDouble(v)) : 0;
}
