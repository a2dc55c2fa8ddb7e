import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { readClusterFile } from '../../src/process/cluster_file.js';
import { removeDir, tempDir, type AnyDoc } from '../helpers/spawn_node.js';
import { startUp, stopUp, type Up } from '../helpers/spawn_up.js';

// `docshard up --replicas 3`: the config server and each shard a three-member set, each member on
// its own loopback address; the router's URL is printed as without sets, the cluster takes
// majority writes through it, and config.shards names each shard by its set.
describe('docshard up --replicas 3', () => {
  const dir = tempDir('docshard-up-rs-');
  let up: Up | undefined;

  after(async () => {
    await stopUp(up);
    removeDir(dir);
  });

  it('starts sets, adds them in set form, and takes sharded writes', async () => {
    up = await startUp(dir, 2, ['--replicas', '3']);
    assert.match(up.output.join(''), /^mongodb:\/\/127\.0\.0\.1:\d+$/m, 'the router URL is printed as before');
    const client = new MongoClient(up.uri);
    try {
      const shards = await client.db('config').collection('shards').find().sort({ _id: 1 }).toArray();
      assert.deepEqual(shards.map((s) => s._id), ['shard0', 'shard1']);
      for (const s of shards) {
        const [setName, members] = String(s.host).split('/');
        assert.equal(setName, s._id);
        assert.equal(members!.split(',').length, 3, String(s.host));
      }
      await client.db('admin').command({ shardCollection: 'app.items', key: { _id: 'hashed' } });
      const items = client.db('app').collection<AnyDoc>('items');
      const docs = Array.from({ length: 200 }, (_, i) => ({ _id: i, v: `item${i}` }));
      await items.insertMany(docs, { writeConcern: { w: 'majority' } });
      assert.equal(await items.countDocuments(), 200);
      assert.deepEqual(await items.findOne({ _id: 123 }), { _id: 123, v: 'item123' });
      const { uuid } = (await client.db('config').collection('collections').findOne({ _id: 'app.items' as never }))!;
      const owners = await client.db('config').collection('chunks').distinct('shard', { uuid });
      assert.deepEqual(owners.sort(), ['shard0', 'shard1']);
    } finally {
      await client.close();
    }
  });

  it('comes back on the same directory with its sets and their data', async () => {
    up!.child.kill('SIGTERM');
    assert.equal(await up!.exited, 0);
    up = await startUp(dir, 2, ['--replicas', '3']);
    const client = new MongoClient(up.uri);
    try {
      assert.equal(await client.db('app').collection('items').countDocuments(), 200);
      const shards = await client.db('config').collection('shards').find().sort({ _id: 1 }).toArray();
      assert.deepEqual(shards.map((s) => s._id), ['shard0', 'shard1']);
    } finally {
      await client.close();
    }
  });
});

// A directory of single processes (`--replicas 0`, or made by a docshard from before sets were the
// default) starts as single processes again when --replicas is not given, with its data: its
// config.shards hosts and its nodes' files are in that form.
describe('docshard up --replicas 0, then without --replicas', () => {
  const dir = tempDir('docshard-up-single-');
  let up: Up | undefined;

  after(async () => {
    await stopUp(up);
    removeDir(dir);
  });

  it('starts single processes both times, with the data of the first', async () => {
    up = await startUp(dir, 1, ['--replicas', '0']);
    let client = new MongoClient(up.uri);
    try {
      await client.db('app').collection<AnyDoc>('items').insertOne({ _id: 1, v: 'kept' });
    } finally {
      await client.close();
    }
    up.child.kill('SIGTERM');
    assert.equal(await up.exited, 0);

    up = await startUp(dir, 1);
    client = new MongoClient(up.uri);
    try {
      assert.deepEqual(await client.db('app').collection('items').findOne({ _id: 1 as never }), { _id: 1, v: 'kept' });
      const shards = await client.db('config').collection('shards').find().toArray();
      assert.deepEqual(shards.map((s) => s.host), [`127.0.0.1:${readClusterFile(dir)!.shards[0]!.port}`], 'a single process, not a set');
      assert.equal(existsSync(path.join(dir, 'shard0', 'mongod.lock')), true, 'shard0 runs on its own dbpath');
    } finally {
      await client.close();
    }
  });
});
