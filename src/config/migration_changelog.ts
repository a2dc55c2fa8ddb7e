import type { Doc } from '../bson/values.js';
import { assert } from '../base/errors.js';
import { changeLogEntry, type ChangeLogContext } from './changelog.js';

// The config.changelog entries of one migration (MongoDB 7.0). The shards write them, with their
// own shard id in `shard`: the donor logs moveChunk.start when cloning begins, moveChunk.commit
// once the config server committed, moveChunk.error when it gives up, and moveChunk.from when it
// is done; the recipient logs moveChunk.to when its side ends.

export interface MigrationLogRange {
  readonly ns: string;
  readonly min: Doc;
  readonly max: Doc;
  readonly from: string;
  readonly to: string;
}

// MigrationSourceManager counts 6 steps, MigrationDestinationManager 8.
export const DONOR_STEPS = 6;
export const RECIPIENT_STEPS = 8;

export function moveChunkStartEntry(ctx: ChangeLogContext, shard: string, r: MigrationLogRange): Doc {
  return changeLogEntry(ctx, shard, 'moveChunk.start', r.ns, { min: r.min, max: r.max, from: r.from, to: r.to });
}

// `counts` is what the recipient answered to _recvChunkCommit ({cloned, clonedBytes, catchup, steady}).
export function moveChunkCommitEntry(ctx: ChangeLogContext, shard: string, r: MigrationLogRange, counts: Doc): Doc {
  return changeLogEntry(ctx, shard, 'moveChunk.commit', r.ns, { min: r.min, max: r.max, from: r.from, to: r.to, counts });
}

export function moveChunkErrorEntry(ctx: ChangeLogContext, shard: string, r: MigrationLogRange): Doc {
  return changeLogEntry(ctx, shard, 'moveChunk.error', r.ns, { min: r.min, max: r.max, from: r.from, to: r.to });
}

// MoveTimingHelper's entry: the milliseconds of every finished step ("step 1 of 6": ms, in order),
// then the range and shards, and "success" only when all steps finished.
export function moveTimingEntry(
  ctx: ChangeLogContext,
  shard: string,
  where: 'from' | 'to',
  r: MigrationLogRange,
  stepMillis: readonly number[],
  errmsg?: string,
): Doc {
  const total = where === 'from' ? DONOR_STEPS : RECIPIENT_STEPS;
  assert(stepMillis.length <= total, `moveChunk.${where} has only ${total} steps`);
  const details: Doc = {};
  stepMillis.forEach((ms, i) => { details[`step ${i + 1} of ${total}`] = ms; });
  details.min = r.min;
  details.max = r.max;
  details.to = r.to;
  details.from = r.from;
  details.note = stepMillis.length === total ? 'success' : 'aborted';
  if (errmsg !== undefined && errmsg !== '') details.errmsg = errmsg;
  return changeLogEntry(ctx, shard, `moveChunk.${where}`, r.ns, details);
}
