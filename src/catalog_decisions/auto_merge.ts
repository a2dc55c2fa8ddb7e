import { compareValues } from '../bson/compare.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ZoneRange } from './balancer_policy.js';

// The AutoMerger's choice (7.0): maximal runs of two or more contiguous chunks on one shard, in
// one zone (or none), none of them jumbo and none placed on its shard at or after `movedBeforeMs`.
// `chunks` are one collection's, sorted by min; each run becomes one mergeChunks.
export function mergeableRuns(chunks: readonly ChunkType[], zones: readonly ZoneRange[], movedBeforeMs: number): ChunkType[][] {
  const zoneOf = (c: ChunkType): string => zones.find((z) => compareValues(z.min, c.min) <= 0 && compareValues(c.min, z.max) < 0)?.zone ?? '';
  const settled = (c: ChunkType): boolean => !c.jumbo && c.onCurrentShardSince.high * 1000 < movedBeforeMs;
  const runs: ChunkType[][] = [];
  let current: ChunkType[] = [];
  for (const chunk of chunks) {
    const last = current[current.length - 1];
    if (last && settled(chunk) && chunk.shard === last.shard && zoneOf(chunk) === zoneOf(last)) {
      current.push(chunk);
      continue;
    }
    if (current.length > 1) runs.push(current);
    current = settled(chunk) ? [chunk] : [];
  }
  if (current.length > 1) runs.push(current);
  return runs;
}
