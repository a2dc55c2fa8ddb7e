import { Long } from 'bson';
import { s2 } from 's2js';
import type { Geometry } from './geometry.js';

// A 2dsphere index keys a geometry by the S2 cells covering it (as MongoDB's S2-based index): a
// point by its leaf cell, a line or polygon by a covering of at most MAX_INDEX_CELLS cells no
// finer than FINEST_INDEXED_LEVEL. A query region is read as the key ranges of its own covering's
// cells (every cell inside them) plus each of their ancestors as a point (a larger cell a geometry
// was indexed under). A cell id is stored as MongoDB stores it, a signed 64-bit integer: the six
// faces each keep one sign, so a cell's range of descendants stays contiguous.
const FINEST_INDEXED_LEVEL = 23;
const MAX_INDEX_CELLS = 20;
const MAX_QUERY_CELLS = 16;

const indexCoverer = new s2.RegionCoverer({ maxLevel: FINEST_INDEXED_LEVEL, maxCells: MAX_INDEX_CELLS });
const queryCoverer = new s2.RegionCoverer({ maxLevel: 30, maxCells: MAX_QUERY_CELLS });

export function cellKey(id: bigint): Long {
  return Long.fromBigInt(BigInt.asIntN(64, id));
}

// The cells a geometry is indexed under, as key values, without repeats.
export function geometryCells(geometry: Geometry): Long[] {
  const ids = new Set<bigint>();
  for (const part of geometry.parts) {
    if (part.kind === 'point') ids.add(s2.cellid.fromPoint(part.sphere!));
    else if (part.kind === 'line') for (const id of indexCoverer.covering(new s2.Polyline(part.vertices))) ids.add(id);
    else for (const id of indexCoverer.covering(part.polygon)) ids.add(id);
  }
  return [...ids].sort((a, b) => (BigInt.asIntN(64, a) < BigInt.asIntN(64, b) ? -1 : 1)).map(cellKey);
}

export interface CellInterval {
  low: Long;
  high: Long;
}

// The key intervals (inclusive) that hold every geometry indexed under a cell meeting `region`;
// with `nearby`, also under the cells next to each cell of its covering: $geoIntersects and
// $geoWithin count a geometry a hair's breadth (ON_EDGE) from the region as touching it, and that
// one may lie across a cell boundary from it.
export function regionIntervals(region: s2.Region, nearby = false): CellInterval[] {
  const covered = queryCoverer.covering(region);
  const covering = nearby ? [...new Set(covered.flatMap((id) => [id, ...s2.cellid.allNeighbors(id, s2.cellid.level(id))]))] : covered;
  const out: CellInterval[] = [];
  const ancestors = new Set<bigint>();
  for (const id of covering) {
    out.push({ low: cellKey(s2.cellid.rangeMin(id)), high: cellKey(s2.cellid.rangeMax(id)) });
    // No geometry is indexed under a cell finer than FINEST_INDEXED_LEVEL but a point's leaf cell,
    // which the ranges hold.
    for (let level = Math.min(s2.cellid.level(id) - 1, FINEST_INDEXED_LEVEL); level >= 0; level--) ancestors.add(s2.cellid.parent(id, level));
  }
  for (const id of ancestors) if (!covering.some((c) => s2.cellid.contains(c, id))) out.push({ low: cellKey(id), high: cellKey(id) });
  return out;
}
