import type { ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { placementTimestamp, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import { isStorableShardKey } from './shard_key.js';
import { changeLogEntry, CONFIG_SHARD, type ChangeLogContext } from './changelog.js';
import { chunkDocument, collectionVersion, shortVersion, versionDoc, withMinor } from './placement.js';
import { formatRange, type ChunkRange } from '../catalog/chunk_range.js';

export interface SplitRequest {
  readonly collection: CollectionType;
  readonly chunks: readonly ChunkType[]; // every chunk of the collection
  readonly chunkRange: ChunkRange;
  readonly splitPoints: readonly Doc[];
  readonly shard: string;
  readonly chunkIdFactory: () => ObjectId;
  readonly log: ChangeLogContext;
}

export interface SplitDecision {
  readonly updated: ChunkType[]; // the original chunk, now its first piece (same _id)
  readonly inserted: ChunkType[];
  readonly collectionVersion: ChunkVersion;
  readonly changelog: Doc[];
}

// ShardingCatalogManager::commitChunkSplit (7.0): the pieces keep the original chunk's shard,
// history and jumbo flag, drop its size estimate, and take consecutive minor versions after the
// collection version, since a split moves no data (only routers need to learn the new bounds).
export function decideSplit(req: SplitRequest): SplitDecision {
  const { collection, chunkRange: range } = req;
  const key = new ShardKeyPattern(collection.key);
  const before = collectionVersion(collection, req.chunks);
  if (req.splitPoints.length === 0) throw new MongoError(ErrorCodes.InvalidOptions, 'need to provide the split points');

  const original = req.chunks.find((c) => compareValues(c.min, range.min) === 0);
  if (original === undefined) {
    throw new MongoError(ErrorCodes.IncompatibleShardingMetadata, `Tried to find the chunk for uuid${collection.uuid.toUUID().toHexString()} and min key ${formatValue(range.min)}, but found no chunks`);
  }
  if (compareValues(original.max, range.max) !== 0 || original.shard !== req.shard) {
    throw new MongoError(ErrorCodes.BadValue, `Could not meet precondition to split chunk, expected chunk with range ${formatRange(range)} in shard ${req.shard} but no chunk was found`);
  }

  const pieces: ChunkType[] = [];
  let version = before;
  let start = range.min;
  for (const end of [...req.splitPoints, range.max]) {
    checkSplitKey(range, start, end);
    // MongoDB's shard checks this before asking; the commit is where all callers meet here.
    if (!key.isShardKey(end)) {
      throw new MongoError(ErrorCodes.InvalidOptions, `Split key ${formatValue(end)} is not valid for shard key pattern ${formatValue(collection.key)}`);
    }
    version = withMinor(version, version.minor + 1);
    const id = pieces.length === 0 ? original._id : req.chunkIdFactory();
    pieces.push(chunkDocument({ ...original, _id: id, min: start, max: end, lastmod: placementTimestamp(version), estimatedDataSizeBytes: undefined }));
    start = end;
  }

  return {
    updated: pieces.slice(0, 1),
    inserted: pieces.slice(1),
    collectionVersion: version,
    changelog: splitChangeLog(req, before, pieces),
  };
}

// The per-key checks of _splitChunkInTransaction, with MongoDB's messages.
function checkSplitKey(range: ChunkRange, start: Doc, end: Doc): void {
  const isMax = compareValues(end, range.max) === 0;
  if (!isMax && !(compareValues(range.min, end) <= 0 && compareValues(end, range.max) < 0)) {
    throw new MongoError(ErrorCodes.InvalidOptions, `Split key ${formatValue(end)} not contained within chunk ${formatRange(range)}`);
  }
  const order = compareValues(end, start);
  if (order < 0) {
    throw new MongoError(ErrorCodes.InvalidOptions, `Split keys must be specified in strictly increasing order. Key ${formatValue(end)} was specified after ${formatValue(start)}.`);
  }
  if (order === 0) {
    throw new MongoError(ErrorCodes.InvalidOptions, `Split on lower bound of chunk [${formatValue(start)}, ${formatValue(end)}] is not allowed`);
  }
  for (const [field, value] of Object.entries(end)) {
    if (!isStorableShardKey({ [field]: value })) {
      throw new MongoError(ErrorCodes.BadValue, `Shard key element ${field}: ${formatValue(value)} is not valid for storage`);
    }
  }
}

// A two-way split logs one "split"; anything else logs one "multi-split" per resulting chunk.
function splitChangeLog(req: SplitRequest, before: ChunkVersion, pieces: ChunkType[]): Doc[] {
  const { collection, chunkRange: range, log } = req;
  const beforeDetail = { before: { min: range.min, max: range.max, lastmod: versionDoc(before) } };
  if (pieces.length === 2) {
    return [changeLogEntry(log, CONFIG_SHARD, 'split', collection._id, {
      ...beforeDetail,
      left: shortVersion(pieces[0]!, collection),
      right: shortVersion(pieces[1]!, collection),
      owningShard: req.shard,
    })];
  }
  return pieces.map((piece, i) => changeLogEntry(log, CONFIG_SHARD, 'multi-split', collection._id, {
    ...beforeDetail,
    number: i + 1,
    of: pieces.length,
    chunk: shortVersion(piece, collection),
    owningShard: req.shard,
  }));
}
