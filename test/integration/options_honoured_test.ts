import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, UUID, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 19 §1: no option or command is accepted and then ignored. Each entry below is either
// honoured (its effect is checked) or refused with the code MongoDB gives, on a node and through a
// router. An option that docshard starts to honour moves from one kind to the other here.
type Target = 'node' | 'router';

interface Entry {
  readonly name: string;
  // Builds the collections the command needs, in the test's own database.
  readonly setup?: (db: Db) => Promise<void>;
  readonly command: AnyDoc;
  // Run on the admin database rather than the test's own.
  readonly admin?: true;
  // The code of the refusal, per target when they differ; or what the command's effect must be.
  readonly refused?: number | Record<Target, number | undefined>;
  readonly honoured?: (db: Db, reply: AnyDoc, target: Target) => Promise<void>;
  // What a refusal left behind, when it is not "nothing".
  readonly afterRefusal?: (db: Db, target: Target) => Promise<void>;
}

const session = { lsid: { id: new UUID() }, txnNumber: 1 };

const ENTRIES: readonly Entry[] = [
  { name: 'an unknown find field', command: { find: 'plain', bogusField: 1 }, refused: 40415 },
  { name: 'an unknown count field', command: { count: 'plain', bogusField: 1 }, refused: 40415 },
  { name: 'an unknown insert field', command: { insert: 'plain', documents: [{}], bogusField: 1 }, refused: 40415 },
  {
    name: 'find returnKey',
    setup: async (db) => { await db.collection('keyed').createIndex({ a: 1 }); await db.collection<AnyDoc>('keyed').insertOne({ a: 1, b: 2 }); },
    command: { find: 'keyed', filter: { a: 1 }, hint: { a: 1 }, returnKey: true },
    honoured: async (_db, reply) => assert.deepEqual(reply.cursor.firstBatch, [{ a: 1 }]),
  },
  {
    name: 'find showRecordId',
    setup: async (db) => { await db.collection<AnyDoc>('plain').insertOne({ _id: 1 }); },
    command: { find: 'plain', filter: { _id: 1 }, showRecordId: true },
    honoured: async (_db, reply) => assert.ok(reply.cursor.firstBatch[0].$recordId !== undefined, JSON.stringify(reply.cursor.firstBatch)),
  },
  {
    name: 'a tailable find of a non-capped collection',
    setup: async (db) => { await db.collection<AnyDoc>('plain').insertOne({ _id: 1 }); },
    command: { find: 'plain', tailable: true },
    refused: 2,
  },
  {
    name: 'a change stream ($changeStream, as watch() opens it)',
    command: { aggregate: 'plain', pipeline: [{ $changeStream: {} }], cursor: {} },
    refused: 40573,
  },
  {
    name: 'a tailable find of a capped collection',
    setup: async (db) => { await db.createCollection('capped', { capped: true, size: 4096 }); await db.collection<AnyDoc>('capped').insertOne({ _id: 1 }); },
    command: { find: 'capped', tailable: true },
    honoured: async (_db, reply) => assert.notEqual(String(reply.cursor.id), '0', 'the cursor stays open at the end of the data'),
  },
  {
    name: 'createIndexes expireAfterSeconds',
    command: { createIndexes: 'ttl', indexes: [{ key: { at: 1 }, name: 'at_1', expireAfterSeconds: 3600 }] },
    honoured: async (db) => {
      const spec = (await db.collection('ttl').listIndexes().toArray()).find((i) => i.name === 'at_1');
      assert.equal(spec?.expireAfterSeconds, 3600);
    },
  },
  {
    name: 'createIndexes hidden',
    setup: async (db) => { await db.collection('hidden').insertOne({ h: 1 }); },
    command: { createIndexes: 'hidden', indexes: [{ key: { h: 1 }, name: 'h_1', hidden: true }] },
    honoured: async (db) => {
      await assert.rejects(db.command({ find: 'hidden', hint: 'h_1' }), { code: 2 }, 'a hidden index cannot be hinted');
    },
  },
  {
    name: 'an index collation other than simple',
    command: { createIndexes: 'collatedIndex', indexes: [{ key: { c: 1 }, name: 'c_1', unique: true, collation: { locale: 'fr', strength: 2 } }] },
    honoured: async (db) => {
      await db.collection<AnyDoc>('collatedIndex').insertOne({ c: 'côte' });
      await assert.rejects(db.collection<AnyDoc>('collatedIndex').insertOne({ c: 'CÔTE' }), { code: 11000 }, 'keys compare by the collation');
    },
  },
  { name: 'create timeseries', command: { create: 'series', timeseries: { timeField: 't' } }, refused: 238 },
  { name: 'create clusteredIndex', command: { create: 'clustered', clusteredIndex: { key: { _id: 1 }, unique: true } }, refused: 238 },
  {
    name: 'create collation',
    command: { create: 'collated', collation: { locale: 'en', strength: 2 } },
    honoured: async (db) => {
      await db.collection('collated').insertMany([{ x: 'a' }, { x: 'A' }]);
      assert.equal(await db.collection('collated').countDocuments({ x: 'a' }), 2);
    },
  },
  {
    name: 'a write concern of w: 2',
    command: { insert: 'wc', documents: [{ _id: 1 }], writeConcern: { w: 2 } },
    // A node is a standalone mongod: it refuses before writing. A router's shards would be
    // replica sets: the write is applied and answered with a writeConcernError, which the driver
    // raises.
    refused: { node: 2, router: 100 },
    afterRefusal: async (db, target) => assert.equal(await db.collection('wc').countDocuments(), target === 'router' ? 1 : 0),
  },
  { name: 'count in a transaction', command: { count: 'plain', ...session, startTransaction: true, autocommit: false }, refused: 263 },
  { name: 'commitTransaction of a transaction never started', command: { commitTransaction: 1, ...session, autocommit: false }, admin: true, refused: 251 },
  { name: 'a negative maxTimeMS', command: { find: 'plain', maxTimeMS: -1 }, refused: 2 },
  {
    name: 'collMod hidden',
    setup: async (db) => { await db.collection('modded').createIndex({ m: 1 }); },
    command: { collMod: 'modded', index: { keyPattern: { m: 1 }, hidden: true } },
    honoured: async (db) => {
      const spec = (await db.collection('modded').listIndexes().toArray()).find((i) => i.name === 'm_1');
      assert.equal(spec?.hidden, true);
    },
  },
];

describe('options are honoured or refused, never ignored', () => {
  let node: SpawnedNode;
  let cluster: SpawnedCluster;
  const clients: Record<Target, MongoClient> = {} as never;

  withProcesses(async (p) => {
    [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    clients.node = p.connect(node.uri);
    clients.router = p.connect(cluster.routers[0]!.uri);
  });

  for (const target of ['node', 'router'] as const) {
    for (const [i, entry] of ENTRIES.entries()) {
      const refused = typeof entry.refused === 'object' ? entry.refused[target] : entry.refused;
      it(`on a ${target}: ${entry.name} is ${refused === undefined ? 'honoured' : `refused with ${refused}`}`, async () => {
        const db = clients[target].db(`opts${i}`);
        await entry.setup?.(db);
        const on = entry.admin === true ? clients[target].db('admin') : db;
        if (refused !== undefined) {
          await assert.rejects(on.command(entry.command), (err: AnyDoc) => {
            assert.equal(err.code, refused, `${err.code} ${err.codeName}: ${err.message}`);
            return true;
          });
          await entry.afterRefusal?.(db, target);
          return;
        }
        assert.ok(entry.honoured, 'an entry that is not refused says how it is honoured');
        await entry.honoured(db, await on.command(entry.command), target);
      });
    }
  }
});
