import { Long } from 'bson';
import type { GeoIndexSpec } from './geo_index_spec.js';
import type { CellInterval } from './sphere_cells.js';

// A 2d index keys a point by its cell in a grid of 2^bits by 2^bits over [min, max) on both axes,
// the cell's column and row bits interleaved (MongoDB's GeoHash), so that every cell of a coarser
// grid is one contiguous range of keys. MongoDB stores the hash as BinData; docshard as a 64-bit
// integer, which orders the same. A region is read as the coarser cells meeting its bounding box,
// at the level where the box spans at most four of them a side: at most 16 ranges.
export function flatCellKey(spec: GeoIndexSpec, x: number, y: number): Long {
  return signed(interleave(gridIndex(spec, x, spec.bits), gridIndex(spec, y, spec.bits), spec.bits));
}

export function inFlatBounds(spec: GeoIndexSpec, x: number, y: number): boolean {
  return x >= spec.min && x < spec.max && y >= spec.min && y < spec.max;
}

function gridIndex(spec: GeoIndexSpec, v: number, level: number): number {
  const cells = 2 ** level;
  const i = Math.floor(((v - spec.min) / (spec.max - spec.min)) * cells);
  return Math.min(cells - 1, Math.max(0, i));
}

function interleave(ix: number, iy: number, bits: number): bigint {
  let out = 0n;
  for (let b = bits - 1; b >= 0; b--) {
    out = (out << 2n) | (BigInt((ix >>> b) & 1) << 1n) | BigInt((iy >>> b) & 1);
  }
  return out;
}

export interface FlatBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export function flatIntervals(spec: GeoIndexSpec, box: FlatBox): CellInterval[] {
  const span = Math.max(box.x1 - box.x0, box.y1 - box.y0, 0);
  const range = spec.max - spec.min;
  const level = span <= 0 ? spec.bits : Math.max(0, Math.min(spec.bits, Math.floor(Math.log2((range * 3) / span))));
  const shift = BigInt(2 * (spec.bits - level));
  const out: CellInterval[] = [];
  for (let ix = gridIndex(spec, box.x0, level); ix <= gridIndex(spec, box.x1, level); ix++) {
    for (let iy = gridIndex(spec, box.y0, level); iy <= gridIndex(spec, box.y1, level); iy++) {
      const prefix = interleave(ix, iy, level);
      out.push({ low: signed(prefix << shift), high: signed(((prefix + 1n) << shift) - 1n) });
    }
  }
  return out;
}

// Hashes of 32 bits a side fill all 64 bits: flipping the top bit makes unsigned order signed order.
function signed(v: bigint): Long {
  return Long.fromBigInt(BigInt.asIntN(64, v ^ (1n << 63n)));
}
