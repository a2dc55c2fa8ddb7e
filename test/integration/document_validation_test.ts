import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import { restartNode, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';
import { withCluster, withNode } from '../helpers/fixtures.js';

// The error a refused operation got: its code and, for DocumentValidationFailure, its errInfo.
async function refusal(p: Promise<unknown>): Promise<{ code: number; errInfo?: AnyDoc }> {
  try {
    await p;
  } catch (err) {
    const e = err as AnyDoc;
    return { code: e.code as number, errInfo: e.errInfo ?? e.writeErrors?.[0]?.errInfo ?? e.errorResponse?.errInfo };
  }
  return { code: 0 };
}

describe('document validation on a node', () => {
  let node: SpawnedNode;
  let client: MongoClient;
  let db: Db;

  withNode({}, async (f) => {
    ({ node, client } = f);
    db = client.db('validation');
    // A test restarts the node: the one running at the end, and its client, are stopped.
    f.processes.beforeStop(async () => {
      await client.close();
      await node.stop();
    });
  });

  it('refuses inserts, updates, upserts and findAndModify that break the validator, with errInfo', async () => {
    await db.createCollection('v', { validator: { x: { $type: 'string' } } });
    const v = db.collection<AnyDoc>('v');
    await v.insertOne({ _id: 1, x: 'ok' });
    const inserted = await refusal(v.insertOne({ _id: 2, x: 1 }));
    assert.equal(inserted.code, 121);
    assert.equal(inserted.errInfo?.failingDocumentId, 2);
    assert.equal(typeof inserted.errInfo?.details, 'object');
    assert.equal((await refusal(v.updateOne({ _id: 1 }, { $set: { x: 5 } }))).code, 121);
    assert.equal((await refusal(v.updateOne({ _id: 3 }, { $set: { x: 5 } }, { upsert: true }))).code, 121);
    const modified = await refusal(v.findOneAndUpdate({ _id: 1 }, { $set: { x: 1 } }));
    assert.equal(modified.code, 121);
    assert.equal(modified.errInfo?.failingDocumentId, 1);
    assert.deepEqual(await v.find().toArray(), [{ _id: 1, x: 'ok' }], 'nothing refused was written');

    await v.insertOne({ _id: 4, x: 4 }, { bypassDocumentValidation: true });
    assert.equal(await v.countDocuments(), 2, 'bypassDocumentValidation lets a write through');
  });

  it('changes the rules with collMod (warn, moderate), keeps them across a restart, and checks its arguments', async () => {
    const v = db.collection<AnyDoc>('v');
    await db.command({ collMod: 'v', validationAction: 'warn' });
    await v.insertOne({ _id: 5, x: 5 });
    await db.command({ collMod: 'v', validationAction: 'error', validationLevel: 'moderate' });
    await v.updateOne({ _id: 4 }, { $set: { y: 1 } });
    assert.equal((await v.findOne({ _id: 4 }))?.y, 1, 'moderate: a document that was already invalid may be updated');
    assert.equal((await refusal(v.updateOne({ _id: 1 }, { $set: { x: 2 } }))).code, 121, 'moderate: a valid document may not become invalid');

    await client.close();
    await node.stop();
    node = await restartNode(node, {});
    client = new MongoClient(node.uri);
    db = client.db('validation');
    assert.equal((await refusal(db.collection<AnyDoc>('v').insertOne({ _id: 6, x: 6 }))).code, 121, 'the validator survives a restart');
    const [info] = await db.listCollections({ name: 'v' }).toArray() as AnyDoc[];
    assert.deepEqual(info.options, { validator: { x: { $type: 'string' } }, validationAction: 'error', validationLevel: 'moderate' });

    assert.equal((await refusal(db.command({ collMod: 'v', validator: { $jsonSchema: { requird: ['x'] } } }))).code, 9, 'an unknown $jsonSchema keyword is refused');
    assert.equal((await refusal(db.command({ collMod: 'v', validationLevel: 'sometimes' }))).code, 2);
    assert.equal((await refusal(db.command({ collMod: 'v', expireAfterSeconds: 5 }))).code, 72);
    assert.equal((await refusal(db.command({ collMod: 'missing', validationLevel: 'off' }))).code, 26);
  });
});

describe('document validation through a router', () => {
  let client: MongoClient;

  withCluster({ shards: 2 }, async (f) => {
    client = f.client;
  });

  it('sets the validator with collMod on the shards that hold the collection, and a chunk\'s new shard takes it over', async () => {
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'valid', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'valid.c', key: { k: 1 } });
    await admin.command({ split: 'valid.c', middle: { k: 0 } });
    const db = client.db('valid');
    await db.command({ collMod: 'c', validator: { x: { $type: 'string' } } });
    const c = db.collection<AnyDoc>('c');
    await c.insertMany([{ k: -1, x: 'a' }, { k: 1, x: 'b' }]);
    assert.equal((await refusal(c.insertOne({ k: -2, x: 2 }))).code, 121);

    // shard1 holds no data of valid.c until this move creates the collection there.
    await admin.command({ moveChunk: 'valid.c', find: { k: 0 }, to: 'shard1', _waitForDelete: true });
    assert.equal((await refusal(c.insertOne({ k: 2, x: 2 }))).code, 121, 'the recipient created the collection with the donor\'s validator');
    assert.equal((await refusal(c.updateOne({ k: 1 }, { $set: { x: 3 } }))).code, 121);
    await c.insertOne({ k: 3, x: 'c' });
    assert.equal(await c.countDocuments(), 3);
  });
});
