import { ObjectId, Timestamp } from 'bson';
import { bsonTag, isPlainObject, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// ChunkVersion (seed 004): the collection generation (epoch, timestamp) and the placement version
// (major, minor). Epoch and timestamp identify one incarnation of a collection; timestamps are
// comparable across incarnations, epochs are not.
export interface ChunkVersion {
  readonly epoch: ObjectId;
  readonly timestamp: Timestamp;
  readonly major: number;
  readonly minor: number;
}

export function chunkVersion(epoch: ObjectId, timestamp: Timestamp, major: number, minor: number): ChunkVersion {
  return { epoch, timestamp, major, minor };
}

export function sameGeneration(a: ChunkVersion, b: ChunkVersion): boolean {
  return a.epoch.equals(b.epoch) && a.timestamp.equals(b.timestamp);
}

// Placement order within one generation; across generations the newer timestamp wins.
// `lastmod` in config.chunks: Timestamp(major, minor). Read back through t/i, which are unsigned
// (high/low are the signed halves of a Long and turn negative from 2^31).
export function placementTimestamp(v: ChunkVersion): Timestamp {
  return new Timestamp({ t: v.major, i: v.minor });
}

export function fromPlacementTimestamp(epoch: ObjectId, timestamp: Timestamp, lastmod: Timestamp): ChunkVersion {
  return { epoch, timestamp, major: lastmod.t, minor: lastmod.i };
}

// The `shardVersion` field a router attaches to a versioned command (MongoDB 7.0 ShardVersion:
// {e: epoch, t: timestamp, v: Timestamp(major, minor)}).
export function shardVersionToBSON(v: ChunkVersion): Doc {
  return { e: v.epoch, t: v.timestamp, v: placementTimestamp(v) };
}

export function shardVersionFromBSON(raw: unknown): ChunkVersion {
  if (!isPlainObject(raw) || bsonTag(raw.e) !== 'ObjectId' || bsonTag(raw.t) !== 'Timestamp' || bsonTag(raw.v) !== 'Timestamp') {
    throw new MongoError(ErrorCodes.TypeMismatch, 'shardVersion must be {e: ObjectId, t: Timestamp, v: Timestamp}');
  }
  return fromPlacementTimestamp(raw.e as ObjectId, raw.t as Timestamp, raw.v as Timestamp);
}

// A versioned request for an unsharded collection carries this (MongoDB's ShardVersion::UNSHARDED):
// epoch 0, timestamp 0, placement 0|0.
export const UNSHARDED_EPOCH = new ObjectId('000000000000000000000000');

export function unshardedVersion(): ChunkVersion {
  return { epoch: UNSHARDED_EPOCH, timestamp: new Timestamp({ t: 0, i: 0 }), major: 0, minor: 0 };
}

export function isUnsharded(v: ChunkVersion): boolean {
  return v.epoch.equals(UNSHARDED_EPOCH) && v.major === 0 && v.minor === 0;
}

export function formatChunkVersion(v: ChunkVersion): string {
  return `${v.major}|${v.minor}||${v.epoch.toHexString()}||${v.timestamp.t}:${v.timestamp.i}`;
}
