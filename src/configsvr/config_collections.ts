import { ObjectId } from 'bson';
import type { Doc } from '../bson/values.js';
import type { StorageEngine } from '../storage/storage_engine.js';
import type { LocalCollections } from '../query/exec/local_collection.js';

// The authoritative catalog lives in real collections with MongoDB's names and indexes
// (sharding_catalog_manager.cpp), so `use config; db.chunks.find()` reads what the cluster uses.
const INDEXES: Record<string, Doc[]> = {
  'config.chunks': [
    { v: 2, key: { uuid: 1, min: 1 }, name: 'uuid_1_min_1', unique: true },
    { v: 2, key: { uuid: 1, shard: 1, min: 1 }, name: 'uuid_1_shard_1_min_1', unique: true },
    { v: 2, key: { uuid: 1, lastmod: 1 }, name: 'uuid_1_lastmod_1', unique: true },
    { v: 2, key: { uuid: 1, shard: 1, onCurrentShardSince: 1 }, name: 'uuid_1_shard_1_onCurrentShardSince_1' },
  ],
  'config.shards': [{ v: 2, key: { host: 1 }, name: 'host_1', unique: true }],
  'config.tags': [
    { v: 2, key: { ns: 1, min: 1 }, name: 'ns_1_min_1', unique: true },
    { v: 2, key: { ns: 1, tag: 1 }, name: 'ns_1_tag_1' },
  ],
  'config.databases': [],
  'config.collections': [],
  'config.settings': [],
  'config.mongos': [],
  'config.changelog': [],
  'config.actionlog': [],
  'config.locks': [],
  'config.version': [],
  // configureQueryAnalyzer's configurations, and the queries routers sampled (kept a week, by
  // their expireAt, as MongoDB's TTL index keeps them).
  'config.queryAnalyzers': [],
  'config.sampledQueries': [{ v: 2, key: { expireAt: 1 }, name: 'SampledQueriesTTLIndex', expireAfterSeconds: 0 }],
};

// The logs are capped as MongoDB caps them (ShardingLogging: 200 MB and 20 MB), so a long-lived
// cluster's balancer rounds do not grow them without end. A data directory whose logs were created
// before they were capped keeps them as they are.
const CAPPED: Record<string, Doc> = {
  'config.changelog': { capped: true, size: 200 * 1024 * 1024 },
  'config.actionlog': { capped: true, size: 20 * 1024 * 1024 },
};

export function ensureConfigCollections(storage: StorageEngine, local: LocalCollections): ObjectId {
  for (const [ns, indexes] of Object.entries(INDEXES)) {
    const { coll } = storage.ensureCollection(ns, CAPPED[ns]);
    const missing = indexes.filter((spec) => !coll.index(String(spec.name)));
    if (missing.length > 0) storage.createIndexes(coll, missing);
  }
  const version = local.findOne('config.version');
  if (version) return version.clusterId as ObjectId;
  const clusterId = new ObjectId();
  local.write((w) => w.insert('config.version', { _id: 1, minCompatibleVersion: 5, currentVersion: 6, clusterId }));
  return clusterId;
}
