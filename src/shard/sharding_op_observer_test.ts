import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import type { ChunkType, CollectionType } from '../catalog/type_chunk.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { COLLECTION_CRITICAL_SECTIONS_NS } from './collection_critical_section.js';
import { ShardMetadata, type ConfigReader } from './shard_metadata.js';
import { ShardingOpObserver } from './sharding_op_observer.js';
import { SHARD_IDENTITY_ID, SHARD_IDENTITY_NS, ShardingState } from './sharding_state.js';

const NS = 'db.c';

function reader(): ConfigReader {
  const chunk = (min: unknown, max: unknown, shard: string) => ({ _id: new ObjectId(), uuid: new UUID(), min: { k: min }, max: { k: max }, shard, lastmod: new Timestamp({ t: 1, i: 0 }), history: [] });
  const collection = { _id: NS, lastmodEpoch: new ObjectId(), timestamp: new Timestamp({ t: 5, i: 1 }), uuid: new UUID(), key: { k: 1 }, unique: false } as unknown as CollectionType;
  return {
    readCollection: () => Promise.resolve({ collection, chunks: [chunk(new MinKey(), 10, 'shard0'), chunk(10, new MaxKey(), 'shard1')] as unknown as ChunkType[] }),
    readDatabase: () => Promise.resolve(undefined),
  };
}

async function withNode(primary: boolean, fn: (node: { local: LocalCollections; state: ShardingState; metadata: ShardMetadata }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-shardobs-'));
  const storage = StorageEngine.open(dir, { compilePartialFilter: () => () => true });
  try {
    const local = new LocalCollections(storage);
    const state = new ShardingState(local);
    const metadata = new ShardMetadata(() => state.shardName, reader);
    storage.observers.push(new ShardingOpObserver(state, metadata, () => primary));
    await fn({ local, state, metadata });
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("a shard's writes as a secondary applies them", () => {
  it('the shard identity its primary wrote makes it a shard', async () => {
    await withNode(false, async ({ local, state }) => {
      assert.equal(state.enabled, false);
      const identity = { shardName: 'rs0', clusterId: new ObjectId(), configsvrConnectionString: 'cfg/127.0.0.1:1' };
      local.write((w) => w.insert(SHARD_IDENTITY_NS, { _id: SHARD_IDENTITY_ID, ...identity }));
      assert.deepEqual([state.shardName, state.configHost], ['rs0', 'cfg/127.0.0.1:1']);
    });
  });

  for (const [what, ns, doc] of [
    ['a migration decision', 'config.migrationCoordinators', { _id: new UUID(), nss: NS, decision: 'committed' }],
    ['a range deletion task', 'config.rangeDeletions', { _id: new UUID(), nss: NS, pending: true }],
    ['a critical section', COLLECTION_CRITICAL_SECTIONS_NS, { _id: NS, reason: {}, blockReads: true }],
  ] as const) {
    it(`${what} makes a secondary forget the collection's filtering metadata, not a primary`, async () => {
      for (const primary of [false, true]) {
        await withNode(primary, async ({ local, state, metadata }) => {
          state.adopt({ shardName: 'shard0', clusterId: new ObjectId(), configsvrConnectionString: 'cfg/127.0.0.1:1' });
          await metadata.refreshCollection(NS);
          assert.equal(metadata.placement(NS).kind, 'sharded');
          local.write((w) => w.insert(ns, doc));
          assert.equal(metadata.placement(NS).kind, primary ? 'sharded' : 'unknown');
          if (ns !== COLLECTION_CRITICAL_SECTIONS_NS) return;
          await metadata.refreshCollection(NS);
          local.write((w) => w.delete(ns, { _id: NS }));
          assert.equal(metadata.placement(NS).kind, primary ? 'sharded' : 'unknown', 'the section released');
        });
      }
    });
  }
});
