// The key-range heat map's decisions (pure): time cut into columns, a collection's chunks in key
// order cut into at most so many rows, and each counted chunk placed in the row of the current
// routing table that holds its lower bound, so counts taken before a split or a merge still land
// where their keys are now.

export const HEAT_COLUMN_MS = 2000;
// Three minutes of columns.
export const HEAT_COLUMNS = 90;
export const HEAT_MAX_ROWS = 40;

export function columnOf(timeMs: number): number {
  return Math.floor(timeMs / HEAT_COLUMN_MS);
}

// The index of the first chunk of each row: n chunks in key order as at most `maxRows` runs of
// consecutive chunks, their lengths differing by one at most.
export function rowStarts(chunkCount: number, maxRows: number): number[] {
  const rows = Math.min(chunkCount, maxRows);
  return Array.from({ length: rows }, (_, i) => Math.floor((i * chunkCount) / rows));
}

// The row whose first key is the last at or below `key` (rows start at the global minimum, so
// every key has one).
export function rowOf(firstKeys: readonly Buffer[], key: Buffer): number {
  let lo = 0;
  let hi = firstKeys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(firstKeys[mid]!, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}

export interface HeatCell {
  column: number;
  // The key string of the counted chunk's lower bound.
  key: Buffer;
  reads: number;
  writes: number;
}

// Reads and writes per row (first index) and column (second), over `columns` columns ending
// with `lastColumn`; cells outside them are dropped.
export function heatMatrix(cells: Iterable<HeatCell>, firstKeys: readonly Buffer[], lastColumn: number, columns: number): { reads: number[][]; writes: number[][] } {
  const reads = firstKeys.map(() => new Array<number>(columns).fill(0));
  const writes = firstKeys.map(() => new Array<number>(columns).fill(0));
  const first = lastColumn - columns + 1;
  for (const cell of cells) {
    const c = cell.column - first;
    if (c < 0 || c >= columns || firstKeys.length === 0) continue;
    const r = rowOf(firstKeys, cell.key);
    reads[r]![c]! += cell.reads;
    writes[r]![c]! += cell.writes;
  }
  return { reads, writes };
}
