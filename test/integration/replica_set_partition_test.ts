import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BSON } from 'bson';
import type { MongoClient } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import { ipOf, NftPartition } from '../helpers/nft_partition.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';


const partition = new NftPartition('partition_test');

// The documents of a collection's rollback files in a member's dbpath (<dbpath>/rollback/<uuid>/).
function rollbackFileDocuments(dbpath: string, uuid: string): AnyDoc[] {
  const root = path.join(dbpath, 'rollback');
  if (!existsSync(path.join(root, uuid))) return [];
  const docs: AnyDoc[] = [];
  {
    for (const file of readdirSync(path.join(root, uuid))) {
      const bytes = readFileSync(path.join(root, uuid, file));
      for (let at = 0; at < bytes.length;) {
        const size = bytes.readInt32LE(at);
        docs.push(BSON.deserialize(bytes.subarray(at, at + size)));
        at += size;
      }
    }
  }
  return docs;
}

// Issue 31: each member on its own loopback address (outgoing connections bound to it too), the
// primary partitioned away by nftables. It takes w: 1 writes no other member sees, the others
// elect a primary, and once the partition heals the old primary rolls those writes back and
// keeps them in its rollback files; no member holds them afterwards.
describe('a replica set whose primary is partitioned away', () => {
  let set: SpawnedReplicaSet;
  let processes: SuiteProcesses;
  // Healed before the suite's clients close, while the members are up: a client closed after the
  // members stopped (or across the partition) waits out its server selection to end its sessions.
  withProcesses(async (p) => {
    processes = p;
    partition.heal();
    p.beforeStop(() => partition.heal());
    set = await p.replicaSet({ members: 3, address: (i) => `127.0.0.${i + 2}` });
  });
  const direct = (host: string): MongoClient =>
    processes.connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`, { serverSelectionTimeoutMS: 20_000 });

  it('rolls back the isolated primary\'s unreplicated w: 1 writes into its rollback files', { timeout: 180_000 }, async () => {
    const client = processes.connect(set.uri, { serverSelectionTimeoutMS: 30_000 });
    await client.db('app').collection<AnyDoc>('c').insertMany([{ _id: 'base-1' }, { _id: 'base-2' }], { writeConcern: { w: 'majority' } });
    const primaryHost = String((await client.db('admin').command({ hello: 1 })).primary);
    const others = set.hosts.filter((h) => h !== primaryHost);
    const oldPrimary = direct(primaryHost);
    try {
      partition.cut(ipOf(primaryHost), others.map(ipOf));
      const lost = Array.from({ length: 5 }, (_, i) => ({ _id: `lost-${i}`, n: i }));
      await oldPrimary.db('app').collection<AnyDoc>('c').insertMany(lost, { writeConcern: { w: 1 } });
      const survivor = direct(others[0]!);
      const newPrimary = await until('a primary among the others', async () => {
        const status = await survivor.db('admin').command({ replSetGetStatus: 1 });
        const p = (status.members as AnyDoc[]).find((m) => m.stateStr === 'PRIMARY' && m.name !== primaryHost);
        return p === undefined ? undefined : String(p.name);
      }, 40_000);
      await direct(newPrimary).db('app').collection<AnyDoc>('c').insertOne({ _id: 'after' }, { writeConcern: { w: 'majority' } });
    } finally {
      partition.heal();
    }
    await until('every member at the same optime', async () => {
      const status = await direct(others[0]!).db('admin').command({ replSetGetStatus: 1 });
      const members = status.members as AnyDoc[];
      if (members.some((m) => m.health !== 1 || (m.stateStr !== 'PRIMARY' && m.stateStr !== 'SECONDARY'))) return undefined;
      return new Set(members.map((m) => JSON.stringify(m.optime))).size === 1 ? true : undefined;
    }, 90_000);
    for (const host of set.hosts) {
      const ids = (await direct(host).db('app').collection<AnyDoc>('c').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id);
      assert.deepEqual(ids, ['after', 'base-1', 'base-2'], `${host} holds what the majority holds`);
    }
    const [info] = await oldPrimary.db('app').listCollections({ name: 'c' }).toArray();
    const uuid = String((info as AnyDoc).info.uuid);
    const saved = rollbackFileDocuments(set.nodes[set.hosts.indexOf(primaryHost)]!.dbpath, uuid).map((d) => d._id).sort();
    assert.deepEqual(saved, ['lost-0', 'lost-1', 'lost-2', 'lost-3', 'lost-4']);
    assert.ok(Number((await oldPrimary.db('admin').command({ replSetGetRBID: 1 })).rbid) >= 2, 'its rollback id went up');
  });
});
