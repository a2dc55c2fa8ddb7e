import type { Doc } from '../bson/values.js';
import { assert } from '../base/errors.js';
import { changeLogEntry, type ChangeLogContext } from './changelog.js';

// The config.changelog entries of one migration (MongoDB 7.0). The shards write them, with their
// own shard id in `shard`: the donor logs moveChunk.start when cloning begins, moveChunk.error when
// it gives up, and moveChunk.from when it is done; the config server logs moveChunk.commit. (MongoDB's
// recipient also logs moveChunk.to with its own step times; docshard's does not time its steps yet.)

export interface MigrationLogRange {
  readonly ns: string;
  readonly min: Doc;
  readonly max: Doc;
  readonly from: string;
  readonly to: string;
}

// MigrationSourceManager counts 6 steps.
export const DONOR_STEPS = 6;

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

// MoveTimingHelper's entry on the donor: the milliseconds of every finished step ("step 1 of 6":
// ms, in order), then the range and shards, and "success" only when all steps finished.
export function moveChunkFromEntry(ctx: ChangeLogContext, shard: string, r: MigrationLogRange, stepMillis: readonly number[], errmsg?: string): Doc {
  assert(stepMillis.length <= DONOR_STEPS, `moveChunk.from has only ${DONOR_STEPS} steps`);
  const details: Doc = {};
  stepMillis.forEach((ms, i) => { details[`step ${i + 1} of ${DONOR_STEPS}`] = ms; });
  details.min = r.min;
  details.max = r.max;
  details.to = r.to;
  details.from = r.from;
  details.note = stepMillis.length === DONOR_STEPS ? 'success' : 'aborted';
  if (errmsg !== undefined && errmsg !== '') details.errmsg = errmsg;
  return changeLogEntry(ctx, shard, 'moveChunk.from', r.ns, details);
}
