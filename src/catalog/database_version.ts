import type { Timestamp } from 'bson';
import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { Binary } from 'bson';

// DatabaseVersion (seed 004): uuid and timestamp identify one incarnation of the database;
// lastMod increases each time its primary shard changes.
export interface DatabaseVersion {
  readonly uuid: Binary;
  readonly timestamp: Timestamp;
  readonly lastMod: number;
}

export function compareDatabaseVersions(a: DatabaseVersion, b: DatabaseVersion): number {
  const t = a.timestamp.compare(b.timestamp);
  if (t !== 0) return Math.sign(t);
  return Math.sign(a.lastMod - b.lastMod);
}

export function databaseVersionToBSON(v: DatabaseVersion): Doc {
  return { uuid: v.uuid, timestamp: v.timestamp, lastMod: v.lastMod };
}

export function databaseVersionFromBSON(raw: unknown): DatabaseVersion {
  if (!isPlainObject(raw) || bsonTag(raw.uuid) !== 'Binary' || bsonTag(raw.timestamp) !== 'Timestamp' || typeof raw.lastMod !== 'number') {
    throw new MongoError(ErrorCodes.TypeMismatch, 'databaseVersion must be {uuid: UUID, timestamp: Timestamp, lastMod: int}');
  }
  return { uuid: raw.uuid as Binary, timestamp: raw.timestamp as Timestamp, lastMod: raw.lastMod };
}
