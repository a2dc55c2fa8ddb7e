import { MaxKey, MinKey, ObjectId, Timestamp, type Binary } from 'bson';
import type { Doc } from '../bson/values.js';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import type { LocalCollections } from '../query/exec/local_collection.js';

const SESSIONS_NS = 'config.system.sessions';
// The config server's own name as a chunk's owner, as MongoDB names it when it holds data.
const CONFIG_SHARD = 'config';

// MongoDB's SessionsCollectionConfigServer shards config.system.sessions on {_id: 1} in one chunk.
// Here that chunk stays on the config server, which is not a shard the balancer can move it to or
// from: the collection is marked noBalance. Written once, in one unit, when the config server
// starts with the collection (of UUID `uuid`) not yet sharded, at wall time `nowMs`.
export function shardSessionsCollection(local: LocalCollections, uuid: Binary, nowMs: number): void {
  if (local.findOne('config.collections', { _id: SESSIONS_NS }) !== undefined) return;
  const now = new Timestamp({ t: Math.floor(nowMs / 1000), i: 1 });
  const collection: CollectionType = {
    _id: SESSIONS_NS, lastmodEpoch: new ObjectId(), lastmod: new Date(nowMs), timestamp: now, uuid, key: { _id: 1 }, unique: false, noBalance: true,
  };
  const chunk: ChunkType = {
    _id: new ObjectId(), uuid, min: { _id: new MinKey() }, max: { _id: new MaxKey() }, shard: CONFIG_SHARD,
    lastmod: new Timestamp({ t: 1, i: 0 }), onCurrentShardSince: now, history: [{ validAfter: now, shard: CONFIG_SHARD }],
  };
  local.write((w) => {
    w.insert('config.collections', collection as unknown as Doc);
    w.insert('config.chunks', chunk as unknown as Doc);
  });
}
