import { assert } from '../base/errors.js';
import { compareValues } from '../bson/compare.js';
import type { Doc } from '../bson/values.js';
import type { ChunkInfo, ShardStats, ZoneRange } from './balancer_policy.js';

// MongoDB's DistributionStatus for one collection, built in one pass over its chunks: for every
// (shard, zone) cell, how many chunks the shard holds in that zone and the first of them in key
// order. A shard takes part in at most one migration per round, so the first movable chunk of a
// cell is all the policy ever needs from a shard's chunk list.
//
// Zones are columns 0..zoneNames.length-1 (names in sorted order, as MongoDB's std::set iterates
// them) and the last column is the "no zone" set, to which every shard belongs.

// A zone boundary strictly inside a chunk: the chunk must be split there before the balancer can
// place it (BalancerChunkSelectionPolicy::selectChunksToSplit).
export interface ZoneSplitPoints {
  readonly chunkIndex: number;
  readonly points: Doc[];
}

export interface ZoneLayout {
  readonly splits: readonly ZoneSplitPoints[];
  // Per zone range k (when there are no splits): the chunks it covers are [spanStart[k], spanEnd[k]).
  readonly spanStart: Int32Array;
  readonly spanEnd: Int32Array;
}

// First chunk index whose min is >= key: O(log n) comparisons over the chunks' sorted mins.
function lowerBound(chunks: readonly ChunkInfo[], key: Doc): number {
  let lo = 0;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareValues(chunks[mid]!.min, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Places each zone boundary among the chunks by binary search (2 × zones × log n comparisons, not
// one per chunk). A boundary that is not some chunk's min lies strictly inside the chunk before it.
export function layOutZones(chunks: readonly ChunkInfo[], zones: readonly ZoneRange[]): ZoneLayout {
  const spanStart = new Int32Array(zones.length);
  const spanEnd = new Int32Array(zones.length);
  const splits: ZoneSplitPoints[] = [];
  const place = (bound: Doc): number => {
    const at = lowerBound(chunks, bound);
    if (at > 0 && compareValues(bound, chunks[at - 1]!.max) < 0) {
      const last = splits[splits.length - 1];
      if (last?.chunkIndex === at - 1) {
        // Boundaries arrive in ascending order; a zone's max equal to the next zone's min is one point.
        if (compareValues(last.points[last.points.length - 1], bound) !== 0) last.points.push(bound);
      } else {
        splits.push({ chunkIndex: at - 1, points: [bound] });
      }
    }
    return at;
  };
  for (let k = 0; k < zones.length; k++) {
    const zone = zones[k]!;
    assert(compareValues(zone.min, zone.max) < 0, `zone range ${k} of '${zone.zone}' is empty or inverted`);
    if (k > 0) assert(compareValues(zones[k - 1]!.max, zone.min) <= 0, `zone ranges must be sorted by min and must not overlap (range ${k})`);
    spanStart[k] = place(zone.min);
    spanEnd[k] = place(zone.max);
  }
  return { splits, spanStart, spanEnd };
}

export interface Distribution {
  readonly shardIndex: ReadonlyMap<string, number>;
  readonly zoneNames: readonly string[];
  readonly columns: number; // zoneNames.length + 1
  readonly noZone: number; // the last column
  // Cells are [shard * columns + zone].
  readonly inZone: Uint8Array; // the shard may hold the zone's chunks
  readonly chunkCount: Int32Array;
  readonly nonJumboCount: Int32Array;
  readonly firstNonJumbo: Int32Array; // chunk index, or -1
  readonly firstChunk: Int32Array; // chunk index (jumbo or not), or -1
  readonly shardChunkCount: Int32Array; // per shard, all zones
}

export function buildDistribution(
  shards: readonly ShardStats[],
  chunks: readonly ChunkInfo[],
  zones: readonly ZoneRange[],
  layout: ZoneLayout,
): Distribution {
  assert(layout.splits.length === 0, 'the distribution needs zone boundaries on chunk boundaries');
  const shardIndex = new Map<string, number>();
  shards.forEach((s, i) => {
    assert(!shardIndex.has(s.id), `shard '${s.id}' is listed twice`);
    shardIndex.set(s.id, i);
  });
  const zoneNames = [...new Set(zones.map((z) => z.zone))].sort();
  const zoneColumn = new Map(zoneNames.map((name, i) => [name, i]));
  const columns = zoneNames.length + 1;
  const noZone = zoneNames.length;
  const cells = shards.length * columns;

  const inZone = new Uint8Array(cells);
  shards.forEach((s, i) => {
    inZone[i * columns + noZone] = 1;
    for (const name of s.zones) {
      const z = zoneColumn.get(name);
      if (z !== undefined) inZone[i * columns + z] = 1; // a zone without ranges here does not matter
    }
  });

  const spanZone = new Int32Array(zones.length);
  zones.forEach((z, k) => { spanZone[k] = zoneColumn.get(z.zone)!; });

  const chunkCount = new Int32Array(cells);
  const nonJumboCount = new Int32Array(cells);
  const firstNonJumbo = new Int32Array(cells).fill(-1);
  const firstChunk = new Int32Array(cells).fill(-1);
  const shardChunkCount = new Int32Array(shards.length);
  let span = 0;
  let lastShard: string | undefined;
  let s = -1;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    if (chunk.shard !== lastShard) {
      const found = shardIndex.get(chunk.shard);
      assert(found !== undefined, `chunk ${i} of the collection is on shard '${chunk.shard}', which is not in the shard list`);
      s = found;
      lastShard = chunk.shard;
    }
    while (span < zones.length && layout.spanEnd[span] <= i) span++;
    const z = span < zones.length && layout.spanStart[span] <= i ? spanZone[span] : noZone;
    const cell = s * columns + z;
    chunkCount[cell] += 1;
    shardChunkCount[s] += 1;
    if (firstChunk[cell] === -1) firstChunk[cell] = i;
    if (chunk.jumbo !== true) {
      nonJumboCount[cell] += 1;
      if (firstNonJumbo[cell] === -1) firstNonJumbo[cell] = i;
    }
  }
  return { shardIndex, zoneNames, columns, noZone, inZone, chunkCount, nonJumboCount, firstNonJumbo, firstChunk, shardChunkCount };
}
