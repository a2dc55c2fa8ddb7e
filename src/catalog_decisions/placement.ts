import type { Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';
import { chunkVersion, fromPlacementTimestamp, shardVersionToBSON, type ChunkVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';

// The collection version is the highest lastmod of its chunks (getCollectionVersion sorts
// config.chunks by lastmod descending and takes the first).
export function collectionVersion(collection: CollectionType, chunks: readonly ChunkType[]): ChunkVersion {
  let newest: Timestamp | undefined;
  for (const chunk of chunks) {
    if (newest === undefined || chunk.lastmod.compare(newest) > 0) newest = chunk.lastmod;
  }
  if (newest === undefined) {
    throw new MongoError(ErrorCodes.IncompatibleShardingMetadata, `Tried to find max chunk version for collection '${collection._id}, but found no chunks`);
  }
  return fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, newest);
}

export function withMinor(v: ChunkVersion, minor: number): ChunkVersion {
  return chunkVersion(v.epoch, v.timestamp, v.major, minor);
}

// ChunkVersion::toString ("1|3||<epoch>||Timestamp(s, i)"), which changelog details carry.
export function versionString(v: ChunkVersion): string {
  return `${v.major}|${v.minor}||${v.epoch.toHexString()}||Timestamp(${v.timestamp.high}, ${v.timestamp.low})`;
}

// ChunkVersion::serializeToBSON (the 6.0 format {e, t, v}), as changelog details embed versions.
export function versionDoc(v: ChunkVersion): Doc {
  return shardVersionToBSON(v);
}

// appendShortVersion: a chunk's bounds and version for split changelog entries.
export function shortVersion(chunk: ChunkType, collection: CollectionType): Doc {
  return { min: chunk.min, max: chunk.max, lastmod: versionDoc(fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, chunk.lastmod)) };
}

// A config.chunks document with its fields in ChunkType::toConfigBSON's order, optional ones
// present only when set.
export function chunkDocument(c: ChunkType): ChunkType {
  const doc: ChunkType = { _id: c._id, uuid: c.uuid, min: c.min, max: c.max, shard: c.shard, lastmod: c.lastmod } as ChunkType;
  if (c.estimatedDataSizeBytes !== undefined) doc.estimatedDataSizeBytes = c.estimatedDataSizeBytes;
  if (c.jumbo !== undefined) doc.jumbo = c.jumbo;
  doc.onCurrentShardSince = c.onCurrentShardSince;
  doc.history = c.history;
  return doc;
}

// A shard's placement version: the highest lastmod among its chunks, 0|0 when it owns none
// (getShardPlacementVersion answers that way once a donor gave its last chunk away).
export function shardPlacementVersion(collection: CollectionType, chunks: readonly ChunkType[], shard: string): ChunkVersion {
  let newest: Timestamp | undefined;
  for (const chunk of chunks) {
    if (chunk.shard === shard && (newest === undefined || chunk.lastmod.compare(newest) > 0)) newest = chunk.lastmod;
  }
  return newest === undefined
    ? chunkVersion(collection.lastmodEpoch, collection.timestamp, 0, 0)
    : fromPlacementTimestamp(collection.lastmodEpoch, collection.timestamp, newest);
}
