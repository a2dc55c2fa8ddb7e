import type { Doc } from '../bson/values.js';
import { compareValues } from '../bson/compare.js';
import { formatValue } from '../bson/format.js';
import { encodeKey } from '../bson/key_string.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { formatRange } from './chunk_range.js';

// One migration as the config server starts it on the donor (_shardsvrMoveRange's identity).
export interface MigrationRequest {
  readonly ns: string;
  readonly min: Doc;
  readonly max: Doc;
  readonly fromShard: string;
  readonly toShard: string;
}

// A key under which identical requests meet (a map of migrations in flight). Bounds go through
// the key string so that equal keys of different numeric types ({a: 1} and {a: 1.0}) give one id.
export function migrationId(r: MigrationRequest): string {
  const bound = (d: Doc) => encodeKey(Object.values(d)).toString('hex');
  return JSON.stringify([r.ns, r.fromShard, r.toShard, bound(r.min), bound(r.max)]);
}

// ActiveMigrationsRegistry compares the whole request with woCompare, which is what joins a
// manual moveChunk to the identical balancer migration already running.
export function isIdenticalMigration(a: MigrationRequest, b: MigrationRequest): boolean {
  return a.ns === b.ns && a.fromShard === b.fromShard && a.toShard === b.toShard &&
    compareValues(a.min, b.min) === 0 && compareValues(a.max, b.max) === 0;
}

// What a shard is doing now: at most one donation or one reception (seed 000, step 1).
export interface ActiveMigrations {
  readonly donating?: MigrationRequest;
  readonly receiving?: MigrationRequest;
}

// registerDonateChunk: 'join' waits for the identical migration in flight, 'start' runs a new
// one; anything else is refused with MongoDB's ConflictingOperationInProgress message.
export function registerDonation(active: ActiveMigrations, incoming: MigrationRequest): 'join' | 'start' {
  if (active.receiving !== undefined) throw receivingConflict(active.receiving);
  if (active.donating === undefined) return 'start';
  if (isIdenticalMigration(active.donating, incoming)) return 'join';
  throw donatingConflict(active.donating);
}

// registerReceiveChunk: a shard receives one range at a time and never while donating.
export function registerReception(active: ActiveMigrations): void {
  if (active.receiving !== undefined) throw receivingConflict(active.receiving);
  if (active.donating !== undefined) throw donatingConflict(active.donating);
}

function donatingConflict(r: MigrationRequest): MongoError {
  return new MongoError(ErrorCodes.ConflictingOperationInProgress, `Unable to start new balancer operation because this shard is currently donating range 'min: ${formatValue(r.min)} - max: ${formatValue(r.max)}' for namespace ${r.ns} to shard ${r.toShard}`);
}

function receivingConflict(r: MigrationRequest): MongoError {
  return new MongoError(ErrorCodes.ConflictingOperationInProgress, `Unable to start new balancer operation because this shard is currently receiving chunk ${formatRange(r)} for namespace ${r.ns} from ${r.fromShard}`);
}
