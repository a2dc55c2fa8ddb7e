import { isPlainObject, type Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { normalizeShardKey } from './shard_key.js';

// The three forms of the user-facing `split` command (cluster_split_cmd.cpp).
export type SplitForm =
  | { readonly kind: 'middle'; readonly middle: Doc } // split exactly here
  | { readonly kind: 'find'; readonly find: Doc } // split the chunk holding this document in half
  | { readonly kind: 'bounds'; readonly bounds: readonly [Doc, Doc] }; // split this exact chunk in half

// MongoDB returns these command errors as a bare errmsg, which clients read as UnknownError.
function commandError(message: string): MongoError {
  return new MongoError(ErrorCodes.UnknownError, message);
}

export function parseSplitForm(cmd: Doc): SplitForm {
  const find = nonEmptyObject(cmd.find);
  const middle = nonEmptyObject(cmd.middle);
  const bounds = Array.isArray(cmd.bounds) && cmd.bounds.length > 0 ? cmd.bounds : undefined;
  if (bounds !== undefined) {
    if (!isPlainObject(bounds[0])) throw commandError('lower bound not specified');
    if (!isPlainObject(bounds[1])) throw commandError('upper bound not specified');
  }
  if (find !== undefined && bounds !== undefined) throw commandError('cannot specify bounds and find at the same time');
  if (find === undefined && bounds === undefined && middle === undefined) throw commandError('need to specify find/bounds or middle');
  if (find !== undefined && middle !== undefined) throw commandError('cannot specify find and middle together');
  if (bounds !== undefined && middle !== undefined) throw commandError('cannot specify bounds and middle together');
  if (find !== undefined) return { kind: 'find', find };
  if (bounds !== undefined) return { kind: 'bounds', bounds: [bounds[0] as Doc, bounds[1] as Doc] };
  return { kind: 'middle', middle: middle! };
}

function nonEmptyObject(v: unknown): Doc | undefined {
  return isPlainObject(v) && Object.keys(v).length > 0 ? v : undefined;
}

// Which chunk to split, and where when the form says (`middle`); for `find` and `bounds` the split
// point is the median key of the chunk's documents, which MongoDB asks of the owning shard
// (splitVector with force): `splitPoint` is then undefined.
export interface SplitTarget {
  readonly chunk: ChunkType;
  readonly splitPoint: Doc | undefined;
}

// The routing table's look-up of the chunk holding a shard key (ChunkManager::findIntersectingChunk).
export type ChunkFinder = (shardKey: Doc) => ChunkType;

export function splitTargetFor(form: SplitForm, key: ShardKeyPattern, findChunk: ChunkFinder): SplitTarget {
  const chunk = targetChunk(form, key, findChunk);
  return { chunk, splitPoint: form.kind === 'middle' ? normalizeShardKey(key, form.middle) : undefined };
}

// The owning shard found no median: every document of the chunk has the same key.
export function indivisibleChunk(): MongoError {
  return new MongoError(ErrorCodes.CannotSplit, 'Unable to find median in chunk because chunk is indivisible.');
}

function targetChunk(form: SplitForm, key: ShardKeyPattern, findChunk: ChunkFinder): ChunkType {
  switch (form.kind) {
    case 'find': {
      const shardKey = key.extractShardKeyFromQuery(form.find);
      if (shardKey === undefined) throw commandError(`no shard key found in chunk query ${formatValue(form.find)}`);
      return findChunk(shardKey);
    }
    case 'bounds': {
      const [lower, upper] = form.bounds;
      if (!key.isShardKey(lower) || !key.isShardKey(upper)) {
        throw commandError(`shard key bounds [${formatValue(lower)},${formatValue(upper)}) are not valid for shard key pattern ${formatValue(key.keyPattern)}`);
      }
      const min = normalizeShardKey(key, lower);
      const max = normalizeShardKey(key, upper);
      const chunk = findChunk(min);
      if (compareValues(chunk.min, min) !== 0 || compareValues(chunk.max, max) !== 0) {
        throw commandError(`no chunk found with the shard key bounds [${formatValue(min)}, ${formatValue(max)})`);
      }
      return chunk;
    }
    case 'middle': {
      if (!key.isShardKey(form.middle)) {
        throw commandError(`new split key ${formatValue(form.middle)} is not valid for shard key pattern ${formatValue(key.keyPattern)}`);
      }
      const middle = normalizeShardKey(key, form.middle);
      const chunk = findChunk(middle);
      if (compareValues(chunk.min, middle) === 0 || compareValues(chunk.max, middle) === 0) {
        throw commandError(`new split key ${formatValue(middle)} is a boundary key of existing chunk [${formatValue(chunk.min)},${formatValue(chunk.max)})`);
      }
      return chunk;
    }
  }
}
