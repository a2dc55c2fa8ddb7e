import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { removeDir, restartNode, runDocshard, spawnNode, tempDir, type AnyDoc, type SpawnedNode } from '../helpers/spawn_node.js';

const lockHolder = (dbpath: string): string => readFileSync(path.join(dbpath, 'mongod.lock'), 'utf8').split('\n')[0]!;

describe('the lock on a data directory (mongod.lock)', () => {
  const dirs: string[] = [];
  const nodes: SpawnedNode[] = [];

  after(async () => {
    for (const node of nodes) await node.stop();
    for (const dir of dirs) removeDir(dir);
  });

  it('refuses a second process on a directory in use, naming the holder, while the holder keeps serving', async () => {
    const dbpath = tempDir('docshard-lock-it-');
    dirs.push(dbpath);
    const holder = await spawnNode({ dbpath, role: 'config' });
    nodes.push(holder);
    assert.equal(lockHolder(dbpath), String(holder.child.pid));
    for (const role of ['shard', 'config']) {
      const run = await runDocshard([role, '--port', '0', '--dbpath', dbpath]);
      assert.equal(run.code, 100, `${role}: ${run.stderr}`);
      assert.equal(run.stderr, `DBPathInUse: Unable to lock the lock file ${path.join(dbpath, 'mongod.lock')}: process ${holder.child.pid} holds it. Another docshard process is already running on the ${dbpath} directory\n`);
      assert.ok(run.stdout.includes('"msg":"Unable to lock the lock file'), run.stdout);
      assert.ok(!run.stdout.includes('Waiting for connections'), run.stdout);
    }
    const client = new MongoClient(holder.uri);
    try {
      await client.db('app').collection<AnyDoc>('c').insertOne({ _id: 1 });
      assert.deepEqual(await client.db('app').collection<AnyDoc>('c').findOne({ _id: 1 }), { _id: 1 });
    } finally {
      await client.close();
    }
    assert.equal(lockHolder(dbpath), String(holder.child.pid), 'the refused processes left the lock alone');
    await holder.stop();
    assert.equal(existsSync(path.join(dbpath, 'mongod.lock')), false, 'a clean shutdown releases it');
  });

  it('is taken over from a holder killed with kill -9, with everything it acknowledged', async () => {
    const dbpath = tempDir('docshard-lock-it-');
    dirs.push(dbpath);
    const first = await spawnNode({ dbpath, role: 'shard' });
    const docs = Array.from({ length: 100 }, (_, i) => ({ _id: i, v: `doc ${i}` }));
    const client = new MongoClient(first.uri);
    try {
      await client.db('app').collection<AnyDoc>('c').insertMany(docs);
    } finally {
      await client.close();
    }
    await first.kill9();
    assert.equal(lockHolder(dbpath), String(first.child.pid), 'kill -9 leaves the lock behind');
    const second = await restartNode(first, { role: 'shard' });
    nodes.push(second);
    assert.equal(lockHolder(dbpath), String(second.child.pid));
    assert.ok(second.logs.some((l) => l.includes('"msg":"Took over a lock file its dead holder left"') && l.includes(`"stalePid":${first.child.pid}`)), second.logs.join('\n'));
    const client2 = new MongoClient(second.uri);
    try {
      assert.deepEqual(await client2.db('app').collection<AnyDoc>('c').find().sort({ _id: 1 }).toArray(), docs);
    } finally {
      await client2.close();
    }
  });
});
