import type { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { placementTimestamp, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { changeLogEntry, CONFIG_SHARD, type ChangeLogContext } from './changelog.js';
import { chunkDocument, collectionVersion, versionDoc, withMinor } from './placement.js';
import { formatRange, type ChunkRange } from '../catalog/chunk_range.js';

export interface MergeRequest {
  readonly collection: CollectionType;
  readonly chunks: readonly ChunkType[]; // every chunk of the collection
  readonly range: ChunkRange;
  readonly shard: string;
  readonly now: Timestamp; // validAfter of the merged chunk
  readonly log: ChangeLogContext;
}

export interface MergeDecision {
  // True when one chunk already spans exactly the range (a retried merge): nothing to write.
  readonly alreadyMerged: boolean;
  // The chunk documents the merge replaces, the first one included...
  readonly removed: ChunkType[];
  // ...and their replacement, which keeps the first one's _id (MongoDB updates it in place).
  readonly merged: ChunkType | undefined;
  readonly collectionVersion: ChunkVersion;
  readonly changelog: Doc[];
}

// ShardingCatalogManager::commitChunksMerge (7.0). The merged chunk gets the collection version
// with the minor bumped (no data moves), and a fresh history starting now: the shard only owns
// the whole range from the merge on, so older snapshots must not be routed through it.
export function decideMerge(req: MergeRequest): MergeDecision {
  const { collection, range, shard } = req;
  const before = collectionVersion(collection, req.chunks);
  const onShard = req.chunks
    .filter((c) => c.shard === shard && compareValues(c.min, range.min) >= 0 && compareValues(c.min, range.max) < 0)
    .sort((a, b) => compareValues(a.min, b.min));

  const notFilled = new MongoError(ErrorCodes.IllegalOperation, `could not merge chunks, shard ${shard} does not contain a sequence of chunks that exactly fills the range ${formatRange(range)}`);
  if (onShard.length === 1) {
    const only = onShard[0]!;
    if (compareValues(only.min, range.min) !== 0 || compareValues(only.max, range.max) !== 0) throw notFilled;
    return { alreadyMerged: true, removed: [], merged: undefined, collectionVersion: before, changelog: [] };
  }
  const first = onShard[0];
  const last = onShard[onShard.length - 1];
  if (first === undefined || last === undefined || compareValues(first.min, range.min) !== 0 || compareValues(last.max, range.max) !== 0) throw notFilled;
  for (let i = 1; i < onShard.length; i++) {
    if (compareValues(onShard[i]!.min, onShard[i - 1]!.max) !== 0) throw notFilled;
  }

  const mergedVersion = withMinor(before, before.minor + 1);
  const merged = chunkDocument({
    ...first,
    max: last.max,
    lastmod: placementTimestamp(mergedVersion),
    estimatedDataSizeBytes: undefined,
    onCurrentShardSince: req.now,
    history: [{ validAfter: req.now, shard }],
  });
  const changelog = [changeLogEntry(req.log, CONFIG_SHARD, 'merge', collection._id, {
    merged: onShard.map(chunkDocument),
    prevShardVersion: versionDoc(before),
    mergedVersion: versionDoc(mergedVersion),
    owningShard: shard,
  })];
  return { alreadyMerged: false, removed: onShard, merged, collectionVersion: mergedVersion, changelog };
}
