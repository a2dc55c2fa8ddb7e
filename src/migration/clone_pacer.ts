// How long the donor waits before serving the next _migrateClone batch.
//
// MongoDB clones at full speed and leaves the cost to the donor's own traffic to operators
// (secondaryThrottle, migrateCloneInsertionBatchDelayMS). docshard paces itself: while the donor
// is serving user operations, the clone's work, the donor's time to read a batch plus the
// recipient's time to apply one, is held to `percentUnderLoad` of the wall clock, so a migration
// takes longer but the shard's users keep most of it. An idle donor clones flat out.
export interface ClonePacerOptions {
  // 0 or 100 turns pacing off.
  readonly percentUnderLoad: number;
  // User operations per second (inserts, updates, deletes, queries, getMores) from which the
  // donor counts as loaded.
  readonly loadedOpsPerSecond: number;
}

export const DEFAULT_LOADED_OPS_PER_SECOND = 50;

export interface ClonePacerSample {
  // The donor's user operations per second over the last second (user_load_meter.ts).
  readonly opsPerSecond: number;
  // The recipient's time to apply its last batch, as it reports it (0 when it does not).
  readonly applyMs: number;
}

// Batch sizes: an idle donor serves large batches (fewer round trips and recipient transactions
// per MB); a loaded one serves small ones, so each stalls its users' operations for less time.
export const IDLE_BATCH_BYTES = 2 * 1024 * 1024;
export const LOADED_BATCH_BYTES = 1024 * 1024;

// The decision for the next batch: how long to wait before serving it, and how large to make it.
export interface ClonePacing {
  readonly delayMs: number;
  readonly batchBytes: number;
}

const FLAT_OUT: ClonePacing = { delayMs: 0, batchBytes: IDLE_BATCH_BYTES };

export class ClonePacer {
  private batchMs = 0;

  constructor(private readonly options: ClonePacerOptions) {}

  next(sample: ClonePacerSample): ClonePacing {
    const share = this.options.percentUnderLoad / 100;
    if (share <= 0 || share >= 1) return FLAT_OUT;
    if (sample.opsPerSecond < this.options.loadedOpsPerSecond) return FLAT_OUT;
    const work = this.batchMs + sample.applyMs;
    return { delayMs: Math.round(work * (1 / share - 1)), batchBytes: LOADED_BATCH_BYTES };
  }

  // The donor's time to read the batch it just served.
  batchServed(ms: number): void {
    this.batchMs = ms;
  }
}
