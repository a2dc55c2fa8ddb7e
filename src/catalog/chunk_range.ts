import type { Doc } from '../bson/values.js';
import { formatValue } from '../bson/format.js';

// A chunk's bounds [min, max), as commit commands name the chunks they act on.
export interface ChunkRange {
  readonly min: Doc;
  readonly max: Doc;
}

// ChunkRange::toString, which MongoDB's chunk-operation errors quote.
export function formatRange(range: ChunkRange): string {
  return `[${formatValue(range.min)}, ${formatValue(range.max)})`;
}
