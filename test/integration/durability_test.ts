import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { removeDir, spawnNode, tempDir, type AnyDoc } from '../helpers/spawn_node.js';

describe('durability of acknowledged writes', () => {
  it('keeps every acknowledged insert, update and delete across kill -9 and restart', async () => {
    const dbpath = tempDir();
    const first = await spawnNode({ dbpath });
    const client = new MongoClient(first.uri);
    const coll = client.db('dur').collection<AnyDoc>('c');
    await coll.createIndex({ k: 1 }, { unique: true });
    const expected = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      await coll.insertOne({ _id: i, k: i, v: 0 });
      expected.set(i, 0);
    }
    await coll.insertMany(Array.from({ length: 700 }, (_, j) => ({ _id: 300 + j, k: 300 + j, v: 0 })));
    for (let j = 0; j < 700; j++) expected.set(300 + j, 0);
    for (let i = 0; i < 100; i++) {
      await coll.updateOne({ _id: i }, { $inc: { v: 1 } });
      expected.set(i, 1);
    }
    await coll.deleteMany({ _id: { $gte: 900 } });
    for (let i = 900; i < 1000; i++) expected.delete(i);
    // Kill while the client is still connected: nothing gets a chance to flush or close.
    await first.kill9();
    await client.close(true).catch(() => undefined);

    const second = await spawnNode({ dbpath });
    const client2 = new MongoClient(second.uri);
    try {
      const coll2 = client2.db('dur').collection<AnyDoc>('c');
      const docs = await coll2.find({}).sort({ _id: 1 }).toArray();
      assert.equal(docs.length, expected.size);
      for (const d of docs) assert.equal(d.v, expected.get(d._id as unknown as number));
      assert.equal(await coll2.countDocuments({}), expected.size);
      assert.equal(await coll2.estimatedDocumentCount(), expected.size);
      const viaIndex = await coll2.find({ k: { $gte: 850 } }).toArray();
      assert.equal(viaIndex.length, 50);
      await assert.rejects(coll2.insertOne({ k: 5 }), (e: unknown) => (e as { code: number }).code === 11000);
    } finally {
      await client2.close();
      await second.stop();
      removeDir(dbpath);
    }
  });
});
