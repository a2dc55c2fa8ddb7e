import path from 'node:path';
import { Binary, MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import type { Doc } from '../../src/bson/values.js';
import { ensureConfigCollections } from '../../src/configsvr/config_collections.js';
import { MIGRATION_COORDINATORS_NS } from '../../src/migration/migration_coordinator_document.js';
import { RANGE_DELETIONS_NS } from '../../src/migration/range_deletion_task.js';
import { LocalCollections } from '../../src/query/exec/local_collection.js';
import { ShardingState } from '../../src/shard/sharding_state.js';
import { StorageEngine } from '../../src/storage/storage_engine.js';
import { STORAGE_OPTIONS } from './sim_storage.js';

// The cluster the migration world starts from: a config server and two shards; db.c sharded on
// {a: 1} in two chunks, both on shard0, whose first chunk [MinKey, 100) moves to shard1.

export type ShardName = 'shard0' | 'shard1';
export const DONOR: ShardName = 'shard0';
export const RECIPIENT: ShardName = 'shard1';
export const NSS = 'db.c';
export const RANGE = { min: { a: new MinKey() }, max: { a: 100 } };
export const HOSTS: Readonly<Record<ShardName | 'config', string>> = { shard0: 'shard0.sim:27018', shard1: 'shard1.sim:27018', config: 'config.sim:27019' };

const COLLECTION_UUID = new UUID('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
const EPOCH = new ObjectId('65a000000000000000000001');
const CREATED = new Timestamp({ t: 50, i: 0 });
// Two documents of the range are larger than half a _migrateClone batch (2 MB on an idle donor),
// so the clone takes two batches and the recipient's second request overlaps the first commit.
// Binary, which decodes as a copy, where a string would be decoded character by character.
const PAD = new Binary(Buffer.alloc(1_050_000));

// The documents the donor starts with: _id 1-6 in the range, 150 and 160 in the chunk it keeps.
export function initialDocuments(): Doc[] {
  return [1, 2, 3, 4, 5, 6, 150, 160].map((id) => ({ _id: id, a: id, v: 0, ...(id === 3 || id === 6 ? { pad: PAD } : {}) }));
}

// Routed writes during the migration, in order, each retried until acknowledged: the first ones
// while the range is cloned, the later ones `afterMs` apart, during the catch-up and around the
// commit. `a` is the document's shard key (equal to its _id).
export interface WorkloadWrite {
  readonly afterMs: number;
  readonly a: number;
  readonly command: Doc;
}

const set = (afterMs: number, id: number, v: number): WorkloadWrite => ({ afterMs, a: id, command: { update: 'c', updates: [{ q: { _id: id }, u: { $set: { v } } }] } });
const upsert = (afterMs: number, id: number): WorkloadWrite => ({ afterMs, a: id, command: { update: 'c', updates: [{ q: { _id: id }, u: { _id: id, a: id, v: 0 }, upsert: true }] } });
const remove = (afterMs: number, id: number): WorkloadWrite => ({ afterMs, a: id, command: { delete: 'c', deletes: [{ q: { _id: id }, limit: 1 }] } });

export const WORKLOAD: readonly WorkloadWrite[] = [
  set(0, 2, 1), upsert(0, 7), remove(0, 4), set(0, 150, 1),
  set(15, 7, 1), set(15, 1, 1), remove(30, 5), upsert(30, 8), set(60, 1, 2), set(200, 2, 2),
];

export interface Disks {
  readonly config: string;
  readonly shard0: string;
  readonly shard1: string;
}

// Writes the three disks once; every run starts from copies of them.
export async function writeTemplateDisks(root: string): Promise<Disks> {
  const disks: Disks = { config: path.join(root, 'config'), shard0: path.join(root, 'shard0'), shard1: path.join(root, 'shard1') };
  const config = StorageEngine.open(disks.config, STORAGE_OPTIONS);
  const configLocal = new LocalCollections(config);
  const clusterId = ensureConfigCollections(config, configLocal);
  const chunk = (min: Doc, max: Doc, minor: number): Doc => ({
    _id: new ObjectId(`65a0000000000000000000c${minor}`), uuid: COLLECTION_UUID, min, max, shard: DONOR, lastmod: new Timestamp({ t: 1, i: minor }),
    onCurrentShardSince: CREATED, history: [{ validAfter: CREATED, shard: DONOR }],
  });
  configLocal.write((w) => {
    for (const name of [DONOR, RECIPIENT]) w.insert('config.shards', { _id: name, host: HOSTS[name], state: 1, topologyTime: CREATED });
    w.insert('config.collections', { _id: NSS, lastmodEpoch: EPOCH, lastmod: new Date(0), timestamp: CREATED, uuid: COLLECTION_UUID, key: { a: 1 }, unique: false });
    w.insert('config.chunks', chunk(RANGE.min, RANGE.max, 0));
    w.insert('config.chunks', chunk(RANGE.max, { a: new MaxKey() }, 1));
  });
  await config.close();

  for (const name of [DONOR, RECIPIENT]) {
    const storage = StorageEngine.open(disks[name], STORAGE_OPTIONS);
    const local = new LocalCollections(storage);
    new ShardingState(local).initialize({ shardName: name, clusterId, configsvrConnectionString: HOSTS.config });
    // As a shard has them after its first migration (created on first use otherwise, which
    // costs every run a few milliseconds).
    for (const ns of [MIGRATION_COORDINATORS_NS, RANGE_DELETIONS_NS]) storage.ensureCollection(ns);
    if (name === DONOR) {
      const coll = storage.createCollection(NSS, {}, COLLECTION_UUID);
      storage.createIndexes(coll, [{ v: 2, key: { a: 1 }, name: 'a_1' }]);
      local.write((w) => { for (const doc of initialDocuments()) w.insert(NSS, doc); });
    }
    await storage.close();
  }
  return disks;
}
