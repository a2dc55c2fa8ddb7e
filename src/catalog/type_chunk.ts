import type { Binary, ObjectId, Timestamp } from 'bson';
import type { Doc } from '../bson/values.js';

// config.chunks (MongoDB 5.0+ schema, keyed by collection uuid):
// {_id: ObjectId, uuid, min, max, shard, lastmod: Timestamp(major, minor),
//  onCurrentShardSince: Timestamp, history: [{validAfter: Timestamp, shard}], jumbo?, estimatedDataSizeBytes?}
export interface ChunkType {
  _id: ObjectId;
  uuid: Binary;
  min: Doc;
  max: Doc;
  shard: string;
  lastmod: Timestamp;
  onCurrentShardSince: Timestamp;
  history: { validAfter: Timestamp; shard: string }[];
  jumbo?: boolean;
  estimatedDataSizeBytes?: number;
}

// config.collections: {_id: ns, lastmodEpoch, lastmod: Date, timestamp, uuid, key, unique, noBalance, ...}
export interface CollectionType {
  _id: string;
  lastmodEpoch: ObjectId;
  lastmod: Date;
  timestamp: Timestamp;
  uuid: Binary;
  key: Doc;
  unique: boolean;
  noBalance?: boolean;
  maxChunkSizeBytes?: number;
  // Tracked but not sharded (MongoDB 8.0): one chunk, key {_id: 1}, never split nor balanced.
  unsplittable?: boolean;
}

// config.databases: {_id: name, primary: shardId, version: {uuid, timestamp, lastMod}}
export interface DatabaseType {
  _id: string;
  primary: string;
  version: { uuid: Binary; timestamp: Timestamp; lastMod: number };
}

// config.shards: {_id: shardId, host: "host:port", state: 1, topologyTime, tags?, draining?, maxSize?}
export interface ShardType {
  _id: string;
  host: string;
  state: number;
  topologyTime: Timestamp;
  tags?: string[];
  draining?: boolean;
  maxSize?: number;
}
