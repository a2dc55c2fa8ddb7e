import { formatValue } from '../bson/format.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import type { ChunkManager } from '../router/chunk_manager.js';
import { columnOf, HEAT_COLUMN_MS, HEAT_COLUMNS, HEAT_MAX_ROWS, heatMatrix, rowStarts, type HeatCell } from './heat_map.js';

// Reads and writes per chunk and per two seconds, as the router's targeting places each request
// (heat_targeting.ts), kept for the last few minutes. Counting runs only while a console is open
// (`active`): a router nobody watches pays one flag test per request.

export interface HeatRow {
  min: string;
  max: string;
  // The owning shard, or the shards of a row that groups chunks of several.
  shard: string;
  chunks: number;
}

export interface HeatView {
  ns: string;
  // Start of each column, in ms since the epoch; the last is the current one.
  columns: number[];
  rows: HeatRow[];
  reads: number[][];
  writes: number[][];
}

interface Counts {
  reads: number;
  writes: number;
}

export class KeyRangeHeat {
  active = false;
  // column -> namespace -> chunk (as the routing table that targeted it holds it) -> counts.
  private readonly columns = new Map<number, Map<string, Map<ChunkType, Counts>>>();
  // The newest routing table each namespace was targeted with: the rows of its heat map.
  private readonly routing = new Map<string, ChunkManager>();
  private readonly minKeys = new WeakMap<ChunkType, Buffer>();

  note(cm: ChunkManager, chunks: readonly ChunkType[], kind: 'read' | 'write', nowMs: number): void {
    const column = columnOf(nowMs);
    let byNs = this.columns.get(column);
    if (byNs === undefined) {
      this.columns.set(column, byNs = new Map());
      for (const old of this.columns.keys()) if (old <= column - HEAT_COLUMNS) this.columns.delete(old);
    }
    let byChunk = byNs.get(cm.ns);
    if (byChunk === undefined) byNs.set(cm.ns, byChunk = new Map());
    this.routing.set(cm.ns, cm);
    for (const chunk of chunks) {
      let counts = byChunk.get(chunk);
      if (counts === undefined) byChunk.set(chunk, counts = { reads: 0, writes: 0 });
      if (kind === 'read') counts.reads += 1;
      else counts.writes += 1;
    }
  }

  // One heat map per collection targeted in the window, rows from its newest routing table.
  view(nowMs: number): HeatView[] {
    const last = columnOf(nowMs);
    const views: HeatView[] = [];
    for (const [ns, cm] of [...this.routing].sort(([a], [b]) => a.localeCompare(b))) {
      const cells: HeatCell[] = [];
      for (const [column, byNs] of this.columns) {
        for (const [chunk, counts] of byNs.get(ns) ?? []) cells.push({ column, key: this.minKey(cm, chunk), ...counts });
      }
      if (cells.length === 0) {
        this.routing.delete(ns);
        continue;
      }
      const chunks = cm.allChunks();
      const starts = rowStarts(chunks.length, HEAT_MAX_ROWS);
      const firstKeys = starts.map((i) => this.minKey(cm, chunks[i]!));
      const rows = starts.map((from, r) => {
        const to = r + 1 < starts.length ? starts[r + 1]! : chunks.length;
        const shards = [...new Set(chunks.slice(from, to).map((c) => c.shard))];
        return { min: formatValue(chunks[from]!.min), max: formatValue(chunks[to - 1]!.max), shard: shards.join(','), chunks: to - from };
      });
      const { reads, writes } = heatMatrix(cells, firstKeys, last, HEAT_COLUMNS);
      const columns = Array.from({ length: HEAT_COLUMNS }, (_, i) => (last - HEAT_COLUMNS + 1 + i) * HEAT_COLUMN_MS);
      views.push({ ns, columns, rows, reads, writes });
    }
    return views;
  }

  private minKey(cm: ChunkManager, chunk: ChunkType): Buffer {
    let key = this.minKeys.get(chunk);
    if (key === undefined) this.minKeys.set(chunk, key = cm.shardKeyPattern.keyString(chunk.min));
    return key;
  }
}

const byRouter = new WeakMap<object, KeyRangeHeat>();

export function keyRangeHeatOf(router: object): KeyRangeHeat {
  let heat = byRouter.get(router);
  if (heat === undefined) byRouter.set(router, heat = new KeyRangeHeat());
  return heat;
}
